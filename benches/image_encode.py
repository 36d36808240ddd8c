"""The Python half of the image encoder benchmark (benches/image_encode.rs drives it).

Builds, and times, the seed paper's image backbones at their reference sizes with random
weights (seeded; what a forward pass costs depends on the widths, depths and input size,
not on the weights), each saved as the folder drift reads, and the packaged
EfficientNet-Lite0 with its real weights mapped onto timm's `tf_efficientnet_lite0`
(scripts/image_encoder_fixtures.py's `load_lite0`):

    python image_encode.py --build ROW OUT_DIR     # save ROW's random model as a folder

| row | reference | model |
|---|---|---|
| vit-s16 | timm | vit_small_patch16_224 |
| mae-b | timm | vit_base_patch16_224, average pooling with fc_norm (MAE's head) |
| eva02-b | timm | eva02_base_patch14_224 |
| convnext-s | timm | convnext_small |
| resnet50 | timm | resnet50 |
| clip-b32 | transformers | CLIPVisionModelWithProjection, ViT-B/32 |
| siglip-b | transformers | SiglipVisionModel, base patch 16 at 224 |
| dinov2-s | transformers | Dinov2Model, small (positions for 518 px, run at 224) |
| dinov3-s | transformers | DINOv3ViTModel, small with 4 registers |

Serving (`--serve --folder DIR` or `--serve --lite0 WHEEL`, with `--pixels FILE`: raw
little-endian float32 `[n, 3, size, size]`, the inputs drift prepared), one JSON object a
line each way, after a greeting {"torch", "timm", "transformers", "threads"}:

- {"check": path} -> {"rows": n}: the features of every image (untimed, also the warm-up)
  written to `path` as raw float32, for the driver to compare with drift's;
- {"run": 1} -> {"seconds": s}: the wall time of one pass over the images, batches of
  --batch, under `torch.no_grad()`.

The feature is what drift reads: timm's `forward_head(forward_features(x),
pre_logits=True)`, transformers' `pooler_output` (CLIP's projected, as
`get_image_features` returns it).
"""

import argparse
import json
import os
import sys

import numpy as np
import timm
import torch
import transformers as tf

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "scripts"))
from image_encoder_fixtures import load_lite0  # noqa: E402

IMAGENET = dict(mean=(0.485, 0.456, 0.406), std=(0.229, 0.224, 0.225))
CLIP = dict(mean=(0.48145466, 0.4578275, 0.40821073), std=(0.26862954, 0.26130258, 0.27577711))

TIMM = {
    "vit-s16": ("vit_small_patch16_224", {}, dict(mean=(0.5,) * 3, std=(0.5,) * 3)),
    "mae-b": ("vit_base_patch16_224", dict(global_pool="avg", fc_norm=True, num_classes=0), IMAGENET),
    "eva02-b": ("eva02_base_patch14_224", dict(num_classes=0), CLIP),
    "convnext-s": ("convnext_small", {}, IMAGENET),
    "resnet50": ("resnet50", {}, IMAGENET),
}


def transformers_model(row):
    if row == "clip-b32":
        model = tf.CLIPVisionModelWithProjection(tf.CLIPVisionConfig(
            hidden_size=768, num_hidden_layers=12, num_attention_heads=12, intermediate_size=3072,
            image_size=224, patch_size=32, projection_dim=512, hidden_act="quick_gelu"))
        processor = tf.CLIPImageProcessor(size={"shortest_edge": 224}, crop_size={"height": 224, "width": 224},
                                          image_mean=list(CLIP["mean"]), image_std=list(CLIP["std"]))
    elif row == "siglip-b":
        model = tf.SiglipVisionModel(tf.SiglipVisionConfig(
            hidden_size=768, num_hidden_layers=12, num_attention_heads=12, intermediate_size=3072,
            image_size=224, patch_size=16))
        processor = tf.SiglipImageProcessor(size={"height": 224, "width": 224}, resample=3,
                                            image_mean=[0.5] * 3, image_std=[0.5] * 3)
    elif row == "dinov2-s":
        model = tf.Dinov2Model(tf.Dinov2Config(
            hidden_size=384, num_hidden_layers=12, num_attention_heads=6, image_size=518, patch_size=14))
        processor = tf.BitImageProcessor(size={"shortest_edge": 256}, crop_size={"height": 224, "width": 224},
                                         resample=3, image_mean=list(IMAGENET["mean"]), image_std=list(IMAGENET["std"]))
    elif row == "dinov3-s":
        model = tf.DINOv3ViTModel(tf.DINOv3ViTConfig(
            hidden_size=384, num_hidden_layers=12, num_attention_heads=6, intermediate_size=1536,
            image_size=224, patch_size=16, num_register_tokens=4))
        processor = tf.DINOv3ViTImageProcessor(size={"height": 224, "width": 224}, resample=2,
                                               image_mean=list(IMAGENET["mean"]), image_std=list(IMAGENET["std"]))
    else:
        raise SystemExit(f"no row {row!r}")
    return model.eval(), processor


def build(row, out):
    torch.manual_seed(0)
    if row in TIMM:
        arch, args, norm = TIMM[row]
        model = timm.create_model(arch, pretrained=False, **args).eval()
        model.pretrained_cfg = dict(model.pretrained_cfg, input_size=[3, 224, 224], interpolation="bicubic",
                                    crop_pct=0.9, crop_mode="center", mean=list(norm["mean"]), std=list(norm["std"]))
        timm.models.save_for_hf(model, out, model_args=args, safe_serialization=True)
    else:
        model, processor = transformers_model(row)
        model.save_pretrained(out)
        processor.save_pretrained(out)


def load(args):
    if args.lite0:
        return load_lite0(args.lite0)[0], "timm"
    with open(os.path.join(args.folder, "config.json")) as f:
        config = json.load(f)
    if os.path.exists(os.path.join(args.folder, "preprocessor_config.json")):
        # The class it was saved from (AutoModel would drop CLIP's projection).
        model_class = getattr(tf, config["architectures"][0])
        return model_class.from_pretrained(args.folder).eval(), "transformers"
    model = timm.create_model(config["architecture"], pretrained=False, **config.get("model_args", {}))
    timm.models.load_checkpoint(model, os.path.join(args.folder, "model.safetensors"))
    return model.eval(), "timm"


def features(model, kind, pixels, batch):
    out = []
    with torch.no_grad():
        for start in range(0, len(pixels), batch):
            x = pixels[start:start + batch]
            if kind == "timm":
                out.append(model.forward_head(model.forward_features(x), pre_logits=True))
            else:
                output = model(pixel_values=x)
                embeds = getattr(output, "image_embeds", None)
                out.append(output.pooler_output if embeds is None else embeds)
    return torch.cat(out)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--build", nargs=2, metavar=("ROW", "OUT_DIR"))
    parser.add_argument("--serve", action="store_true")
    parser.add_argument("--folder")
    parser.add_argument("--lite0", help="the efficientnet-lite0 wheel")
    parser.add_argument("--pixels")
    parser.add_argument("--size", type=int, default=224)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--batch", type=int, default=32)
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    if args.build:
        build(*args.build)
        return
    model, kind = load(args)
    pixels = torch.from_numpy(np.fromfile(args.pixels, dtype="<f4").reshape(-1, 3, args.size, args.size))
    print(json.dumps({"torch": torch.__version__, "timm": timm.__version__,
                      "transformers": tf.__version__, "threads": torch.get_num_threads()}), flush=True)
    import time

    for line in sys.stdin:
        command = json.loads(line)
        if "check" in command:
            features(model, kind, pixels, args.batch).numpy().astype("<f4").tofile(command["check"])
            reply = {"rows": len(pixels)}
        else:
            start = time.perf_counter()
            features(model, kind, pixels, args.batch)
            reply = {"seconds": time.perf_counter() - start}
        print(json.dumps(reply), flush=True)


if __name__ == "__main__":
    main()
