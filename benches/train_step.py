"""The PyTorch half of the training-step benchmark (benches/train_step.rs drives it).

Measures, for mlp_s, cnn_s, vit_s and bigru_s, the wall time of one training step on one
fixed CPU batch with PyTorch in Python: forward in train mode, loss, `loss.item()`,
`zero_grad`, backward, gradient clipping (text setting only), optimiser step. The models
are the idiomatic `torch.nn` equivalents of drift's (benches/torch_models.py:
same layers, sizes, dropout, post-LN `nn.TransformerEncoderLayer`, `nn.GRU` over
`pack_padded_sequence` by mask length) and must have the parameter counts the Rust side
passes. Settings (protocol.md §5):

- images: batch of B x 3x32x32 and 2 classes, cross-entropy, Adam lr 5e-4;
- bigru_s: B rows of [T, 768] token states with the given lengths, 7 labels, weighted BCE
  (pos_weight = neg / max(pos, 1) over the batch), AdamW lr 5e-4 wd 0.01, clip norm 1.0.

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

from torch_models import IMAGE, BiGru, Cnn, Mlp, Vit

CLASSES = 2
LABELS = 7
LR = 5e-4


MODELS = {
    "mlp_s": lambda dim: Mlp([32], CLASSES),
    "cnn_s": lambda dim: Cnn([32, 64, 128], CLASSES),
    "vit_s": lambda dim: Vit(64, 2, 4, 2.0, CLASSES),
    "bigru_s": lambda dim: BiGru(dim, LABELS),
}


def random_batch(key, args):
    """A fixed random batch under the names drift exports its batches with."""
    if key == "bigru_s":
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
    return {"images": torch.randn(args.batch, *IMAGE),
            "labels": torch.randint(CLASSES, (args.batch,))}


class Trainer:
    """One model, its fixed batch and optimiser; `run` times training steps."""

    def __init__(self, key, batch, weights=None):
        torch.manual_seed(0)
        text = key == "bigru_s"
        self.model = MODELS[key](batch["states"].shape[-1] if text else None).train()
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
            self.inputs = (batch["images"],)
            self.loss_fn = lambda logits: F.cross_entropy(logits, batch["labels"])
            self.opt = torch.optim.Adam(self.parameters, lr=LR)
            self.clip = None

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

    - {"setup": key, "params": n, "data": npz} -> {"params": n, "max_diff": x}: builds the
      model, loads drift's initial weights and batch from the npz (`weights.*`, `batch.*`),
      compares its eval-mode outputs with drift's (`outputs`), then runs --warmup steps;
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
            trainer = Trainer(key, batch, part("weights."))
            trainer.check_params(key, command.get("params"))
            max_diff = trainer.max_diff(data["outputs"])
            if args.warmup:
                trainer.run(args.warmup)
            reply({"params": trainer.params, "max_diff": max_diff})
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
        trainer = Trainer(key, random_batch(key, args))
        trainer.check_params(key, expected)
        if args.warmup:
            trainer.run(args.warmup)
        times = [trainer.run(steps)[0] for _ in range(args.reps)]
        results[key] = {"params": trainer.params, "step_seconds": times}
    print(json.dumps({"torch": torch.__version__, "threads": torch.get_num_threads(),
                      "models": results}))


if __name__ == "__main__":
    main()
