"""The PyTorch half of the training-step benchmark (benches/train_step.rs drives it).

Measures, for every model of drift's registry, the wall time of one training step on one
fixed CPU batch with PyTorch in Python: forward in train mode, loss, `loss.item()`,
`zero_grad`, backward, gradient clipping (text setting only), optimiser step. The models
are the idiomatic `torch.nn` equivalents of drift's (benches/torch_models.py: same
layers, sizes, dropout, post-LN `nn.TransformerEncoderLayer`, `nn.GRU` / `nn.LSTM` over
`pack_padded_sequence` by mask length) and must have the parameter counts the Rust side
passes. It also counts each step's floating-point operations with PyTorch's flop counter.
Settings (protocol.md §5):

- images (and the linear probe on B x 768 embeddings): 2 classes, cross-entropy, Adam
  lr 5e-4;
- token models: B rows of [T, 768] token states with the given lengths, 7 labels, weighted
  BCE (pos_weight = neg / max(pos, 1) over the batch), AdamW lr 5e-4 wd 0.01, clip norm 1.0.

Normally run by the Rust driver with --serve: it passes thread count and warm-up as
arguments, then per model on stdin its parameter count and an npz of drift's initial
weights, batch and eval-mode outputs (which this side must reproduce), and the step counts
of repetitions it alternates with its own (see `serve`):

    eval "$(scripts/libtorch-env)"; cargo bench --features torch --bench train_step

By hand, `KEY:STEPS[:PARAMS]` per model: --warmup untimed steps, then --reps timings of
STEPS steps; prints one JSON object, {"torch": version, "threads": n, "models": {key:
{"params": n, "step_seconds": [seconds per step, one per repetition]}}}:

    "$(scripts/torch-python)" benches/train_step.py --threads 1 mlp_s:200 bigru_s:5
"""

import argparse
import json
import math
import sys
import time

import torch
import torch.nn.functional as F

from torch_models import (IMAGE, Cnn, Ffn, LinearProbe, Mlp, ResNet, Rnn, TextCnn,
                          TextTransformer, Vit)

CLASSES = 2
LABELS = 7
LR = 5e-4

# Every model of drift's registry (src/models/mod.rs) at its reference shapes; `dim` is
# the token-state or embedding width.
MODELS = {
    "mlp_s": lambda dim: Mlp([32], CLASSES),
    "mlp_m": lambda dim: Mlp([128, 128], CLASSES),
    "mlp_l": lambda dim: Mlp([512, 512, 512], CLASSES),
    "cnn_s": lambda dim: Cnn([32, 64, 128], CLASSES),
    "cnn_m": lambda dim: Cnn([48, 96, 192, 192], CLASSES),
    "cnn_l": lambda dim: Cnn([64, 128, 256, 256, 512], CLASSES),
    "resnet_s": lambda dim: ResNet([(18, 1), (36, 1), (72, 1)], CLASSES),
    "resnet_m": lambda dim: ResNet([(32, 2), (64, 2), (128, 1)], CLASSES),
    "resnet_l": lambda dim: ResNet([(56, 2), (112, 2), (224, 2)], CLASSES),
    "vit_s": lambda dim: Vit(64, 2, 4, 2.0, CLASSES),
    "vit_m": lambda dim: Vit(128, 4, 4, 2.0, CLASSES),
    "vit_l": lambda dim: Vit(192, 6, 6, 3.0, CLASSES),
    "ffn_s": lambda dim: Ffn(dim, 128, LABELS),
    "ffn_m": lambda dim: Ffn(dim, 512, LABELS),
    "ffn_l": lambda dim: Ffn(dim, 2048, LABELS),
    "textcnn_s": lambda dim: TextCnn(dim, 16, [3, 4], 64, LABELS),
    "textcnn_m": lambda dim: TextCnn(dim, 48, [3, 4, 5], 128, LABELS),
    "textcnn_l": lambda dim: TextCnn(dim, 192, [3, 4, 5], 256, LABELS),
    "bigru_s": lambda dim: Rnn(dim, LABELS, "gru", 64),
    "bilstm_m": lambda dim: Rnn(dim, LABELS, "lstm", 160),
    "bilstm_attn_l": lambda dim: Rnn(dim, LABELS, "lstm", 224, layers=2, attention=True),
    "tx_s": lambda dim: TextTransformer(dim, 64, 4, 1, 128, LABELS),
    "tx_m": lambda dim: TextTransformer(dim, 112, 4, 4, 224, LABELS),
    "tx_l": lambda dim: TextTransformer(dim, 192, 6, 5, 512, LABELS),
    "linear": lambda dim: LinearProbe(dim, CLASSES),
}
TEXT = {k for k in MODELS if k.split("_")[0] in ("ffn", "textcnn", "bigru", "bilstm", "tx")}


def random_batch(key, args):
    """A fixed random batch under the names drift exports its batches with."""
    if key in TEXT:
        lengths = torch.tensor(args.lengths)
        rows = len(lengths)
        targets = (torch.rand(rows, LABELS) < 0.3).float()
        pos = targets.sum(0)
        return {
            "states": torch.randn(rows, args.tokens, args.dim),
            "mask": torch.arange(args.tokens).unsqueeze(0) < lengths.unsqueeze(1),
            "targets": targets,
            "pos_weight": (rows - pos) / pos.clamp_min(1.0),
        }
    labels = torch.randint(CLASSES, (args.batch,))
    if key == "linear":
        return {"embeddings": torch.randn(args.batch, args.dim), "labels": labels}
    return {"images": torch.randn(args.batch, *IMAGE), "labels": labels}


class Trainer:
    """One model, its fixed batch and optimiser; `run` times training steps."""

    def __init__(self, key, batch, weights=None, channels_last=False):
        torch.manual_seed(0)
        text = "states" in batch
        features = batch.get("states", batch.get("embeddings"))
        self.model = MODELS[key](None if features is None else features.shape[-1]).train()
        if weights is not None:
            missing, unexpected = self.model.load_state_dict(weights, strict=False)
            if unexpected or any(not k.endswith("num_batches_tracked") for k in missing):
                sys.exit(f"train_step.py: {key}: drift's weights do not fit, missing "
                         f"{missing}, unexpected {unexpected}")
        self.parameters = list(self.model.parameters())
        self.params = sum(p.numel() for p in self.parameters if p.requires_grad)
        if text:
            self.inputs = (batch["states"], batch["mask"])
            self.loss_fn = lambda logits: F.binary_cross_entropy_with_logits(
                logits, batch["targets"], pos_weight=batch["pos_weight"])
            self.opt = torch.optim.AdamW(self.parameters, lr=LR, weight_decay=0.01)
            self.clip = 1.0
        else:
            self.inputs = (batch["embeddings"] if "embeddings" in batch else batch["images"],)
            self.loss_fn = lambda logits: F.cross_entropy(logits, batch["labels"])
            self.opt = torch.optim.Adam(self.parameters, lr=LR)
            self.clip = None
            if channels_last and self.inputs[0].dim() == 4 and key.startswith(("cnn", "resnet")):
                self.model = self.model.to(memory_format=torch.channels_last)
                self.inputs = (self.inputs[0].contiguous(memory_format=torch.channels_last),)

    def step(self):
        loss = self.loss_fn(self.model(*self.inputs))
        value = loss.item()
        self.opt.zero_grad()
        loss.backward()
        if self.clip is not None:
            torch.nn.utils.clip_grad_norm_(self.parameters, self.clip)
        self.opt.step()
        return value

    def run(self, steps):
        """Seconds per step over `steps` steps, and the last loss."""
        start = time.perf_counter()
        for _ in range(steps):
            value = self.step()
        return (time.perf_counter() - start) / steps, value

    def flops(self):
        """Floating-point operations of one step's forward and backward, as PyTorch's flop
        counter counts them: matrix products, convolutions and attention (elementwise
        operations, the loss and the optimiser are not counted). Gradients are cleared
        after; BatchNorm's running statistics move as in any training step."""
        from torch.utils.flop_counter import FlopCounterMode

        counter = FlopCounterMode(display=False)
        with counter:
            self.loss_fn(self.model(*self.inputs)).backward()
        self.opt.zero_grad()
        return counter.get_total_flops()

    def max_diff(self, outputs):
        """Largest difference of the eval-mode outputs from `outputs`."""
        self.model.eval()
        with torch.no_grad():
            ours = self.model(*self.inputs)
        self.model.train()
        return (ours - outputs).abs().max().item()

    def check_params(self, key, expected):
        if expected is not None and self.params != expected:
            sys.exit(f"train_step.py: {key} has {self.params} parameters in PyTorch, "
                     f"drift has {expected}")


def reply(message):
    print(json.dumps(message), flush=True)


def serve(args):
    """The driver's protocol, one JSON object a line each way. After a greeting
    {"torch": version, "threads": n}:

    - {"setup": key, "params": n, "data": npz} -> {"params": n, "max_diff": x, "flops": n}:
      builds the model, loads drift's initial weights and batch from the npz (`weights.*`,
      `batch.*`), compares its eval-mode outputs with drift's (`outputs`), counts a step's
      floating-point operations (`Trainer.flops`), then runs --warmup steps;
    - {"run": steps} -> {"seconds": per step, "loss": last, null when not finite}.
    """
    import numpy as np

    reply({"torch": torch.__version__, "threads": torch.get_num_threads()})
    trainer = None
    for line in sys.stdin:
        command = json.loads(line)
        if "setup" in command:
            key = command["setup"]
            with np.load(command["data"]) as npz:
                data = {name: torch.from_numpy(npz[name]) for name in npz.files}
            part = lambda prefix: {k[len(prefix):]: v for k, v in data.items()
                                   if k.startswith(prefix)}
            batch = part("batch.")
            if "mask" in batch:
                batch["mask"] = batch["mask"].bool()  # sent as uint8
            trainer = None
            trainer = Trainer(key, batch, part("weights."), args.channels_last)
            trainer.check_params(key, command.get("params"))
            max_diff = trainer.max_diff(data["outputs"])
            flops = trainer.flops()
            if args.warmup:
                trainer.run(args.warmup)
            reply({"params": trainer.params, "max_diff": max_diff, "flops": flops})
        else:
            seconds, loss = trainer.run(command["run"])
            reply({"seconds": seconds, "loss": loss if math.isfinite(loss) else None})


def spec(text):
    """`key:steps[:params]`."""
    parts = text.split(":")
    if parts[0] not in MODELS or len(parts) not in (2, 3):
        raise argparse.ArgumentTypeError(f"expected KEY:STEPS[:PARAMS], KEY in {list(MODELS)}")
    return parts[0], int(parts[1]), int(parts[2]) if len(parts) == 3 else None


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("models", nargs="*", type=spec, metavar="KEY:STEPS[:PARAMS]",
                        help="model, timed steps per repetition, expected parameter count")
    parser.add_argument("--serve", action="store_true",
                        help="take models and step counts from the driver on stdin")
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--channels-last", action="store_true",
                        help="the convolutional image models (cnn_*, resnet_*) and their input "
                             "in channels-last memory format")
    parser.add_argument("--batch", type=int, default=64, help="image batch size")
    parser.add_argument("--reps", type=int, default=5)
    parser.add_argument("--warmup", type=int, default=3)
    parser.add_argument("--tokens", type=int, default=128, help="padded text length T")
    parser.add_argument("--dim", type=int, default=768, help="token state width")
    parser.add_argument("--lengths", default=None,
                        help="comma-separated real-token counts, one per text row "
                             "(default: 64 rows, all of length T)")
    args = parser.parse_args()
    args.lengths = ([int(n) for n in args.lengths.split(",")] if args.lengths
                    else [args.tokens] * 64)
    if not all(1 <= n <= args.tokens for n in args.lengths):
        parser.error(f"--lengths must lie in 1..={args.tokens}")
    if args.serve == bool(args.models):
        parser.error("give either models or --serve")
    torch.set_num_threads(args.threads)
    if args.serve:
        return serve(args)

    results = {}
    for key, steps, expected in args.models:
        trainer = Trainer(key, random_batch(key, args), channels_last=args.channels_last)
        trainer.check_params(key, expected)
        if args.warmup:
            trainer.run(args.warmup)
        times = [trainer.run(steps)[0] for _ in range(args.reps)]
        results[key] = {"params": trainer.params, "step_seconds": times}
    print(json.dumps({"torch": torch.__version__, "threads": torch.get_num_threads(),
                      "models": results}))


if __name__ == "__main__":
    main()
