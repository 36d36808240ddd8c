"""The PyTorch half of the end-to-end benchmark (benches/pipeline.rs drives it).

Runs the protocol of `drift run` for one model and seed, written the way a PyTorch user
writes a training script, on what drift exported into JOB (a folder):

- `data.npz`: `inputs` (images [N, C, H, W] float32, token states [N, T, D] float16 as the
  encoder cache holds them, or pooled embeddings [N, D] float32), `labels` int64 [N] and,
  for token states, `lengths` int64 [N] (real tokens first, padding after);
- `job.json`: model, input kind, classes, metric, training settings, the evaluation batch
  size and rows, and per cutoff its training seed, its initial weights (`init-<i>.npz`,
  drift's variable names, which are PyTorch's state_dict keys), the row order of every
  epoch and the rows of every cell under the regime's ID/OOD rule.

Per cutoff: `torch.manual_seed(training seed)`, a fresh model (benches/torch_models.py)
loaded with drift's initial weights, an optimiser (Adam or AdamW), and per epoch a
`DataLoader` over a map-style `Dataset` whose sampler yields drift's order for that epoch;
token rows are cut to their real tokens and padded to the batch's longest by the collate
function (as drift cuts each batch). Each step: forward in train mode, cross-entropy,
`loss.item()`, `zero_grad`, backward, `clip_grad_norm_` when set, optimiser step. Then
evaluation: `model.eval()`, `torch.no_grad()`, a `DataLoader` over every row in batches,
outputs gathered on the CPU, and per cell the metric from scikit-learn on the argmax
classes (`f1_score(average="macro")`, `accuracy_score`).

With --libtorch-update the optimiser step and the gradient clipping follow libtorch's C++
`torch::optim::Adam`/`AdamW` and tch's `clip_grad_norm`, which drift calls, instead of
`torch.optim` and `clip_grad_norm_`: Python's optimisers update the first moment with
`lerp_` where the C++ ones use `mul_` then `add_`, and PyTorch computes the clipping
coefficient in float32 where tch uses f64, so each step differs in the last bits and the
differences grow over training. With the option the weights, and so the matrix, are
drift's bit for bit (the dropout masks agree too: both sides draw from libtorch's
generator in the same order). It is a diagnosis, not how a PyTorch user writes training.

Writes OUT as JSON: {"torch": version, "threads": n, "seconds": wall time from reading
the data to the finished matrix, "cells": [[value or null per slice] per cutoff]}.

    "$(scripts/venv-pins --set pipeline-peer)" benches/pipeline.py JOB --threads 1 --out m.json
"""

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np
import torch
import torch.nn.functional as F
from sklearn.metrics import accuracy_score, f1_score
from torch.nn.utils.rnn import pad_sequence
from torch.utils.data import DataLoader, Dataset, Sampler

from torch_models import Cnn, Ffn, LinearProbe, Mlp

METRICS = {
    "accuracy": accuracy_score,
    "macro-f1": lambda y, p: f1_score(y, p, average="macro", zero_division=0),
}


def build(key, dim, classes):
    """The model `key` of the job, for inputs of width `dim` (token states, embeddings)."""
    if key == "mlp_s":
        return Mlp([32], classes)
    if key == "cnn_s":
        return Cnn([32, 64, 128], classes)
    if key == "ffn_s":
        return Ffn(dim, 128, classes)
    if key == "linear":
        return LinearProbe(dim, classes)
    sys.exit(f"pipeline.py: no PyTorch twin of {key}")


class Rows(Dataset):
    """Row r: its input (token states cut to its real tokens, widened to float32) and label."""

    def __init__(self, inputs, labels, lengths=None):
        self.inputs, self.labels, self.lengths = inputs, labels, lengths

    def __len__(self):
        return len(self.labels)

    def __getitem__(self, r):
        x = self.inputs[r]
        if self.lengths is not None:
            x = x[: self.lengths[r]].float()
        return x, self.labels[r]


def pad_tokens(batch):
    """Token rows padded to the batch's longest, with their mask."""
    states = [x for x, _ in batch]
    lengths = torch.tensor([len(x) for x in states])
    mask = torch.arange(int(lengths.max())).unsqueeze(0) < lengths.unsqueeze(1)
    return (pad_sequence(states, batch_first=True), mask), torch.stack([y for _, y in batch])


def stack(batch):
    return (torch.stack([x for x, _ in batch]),), torch.stack([y for _, y in batch])


class EpochOrder(Sampler):
    """drift's row order of the current epoch (`set_epoch`, as DistributedSampler)."""

    def __init__(self, orders):
        self.orders, self.epoch = orders, 0

    def set_epoch(self, epoch):
        self.epoch = epoch

    def __iter__(self):
        return iter(self.orders[self.epoch])

    def __len__(self):
        return len(self.orders[self.epoch])


def loader(rows, collate, batch_size, sampler):
    # A generator of its own: a DataLoader draws its base seed from the global generator
    # otherwise, which would shift dropout's draws away from drift's.
    return DataLoader(rows, batch_size=batch_size, sampler=sampler, collate_fn=collate,
                      generator=torch.Generator())


class LibtorchStep:
    """libtorch's C++ Adam / AdamW step (torch/csrc/api/src/optim/adam{,w}.cpp) and tch's
    `clip_grad_norm`, for --libtorch-update."""

    def __init__(self, params, t):
        self.params, self.t, self.step_count = params, t, 0
        self.moments = [(torch.zeros_like(p), torch.zeros_like(p)) for p in params]

    def clip(self, max_norm):
        total = float(torch.stack([p.grad.norm() for p in self.params]).norm())
        coefficient = max_norm / (total + 1e-6)
        if coefficient < 1.0:
            for p in self.params:
                p.grad.mul_(coefficient)

    def step(self):
        lr, wd = self.t["learning_rate"], self.t["weight_decay"]
        beta1, beta2, eps = 0.9, 0.999, 1e-8
        self.step_count += 1
        correction1 = 1 - beta1 ** self.step_count
        correction2 = 1 - beta2 ** self.step_count
        for p, (m, v) in zip(self.params, self.moments):
            grad = p.grad
            if self.t["optimizer"] == "adamw":
                p.mul_(1 - lr * wd)
            elif wd != 0:
                grad = grad.add(p, alpha=wd)
            m.mul_(beta1).add_(grad, alpha=1 - beta1)
            v.mul_(beta2).addcmul_(grad, grad, value=1 - beta2)
            denominator = (v.sqrt() / correction2 ** 0.5).add_(eps)
            p.addcdiv_(m, denominator, value=-lr / correction1)


def run(job_dir, libtorch_update):
    job = json.loads((job_dir / "job.json").read_text())
    with np.load(job_dir / "data.npz") as npz:
        inputs = torch.from_numpy(npz["inputs"])
        labels = torch.from_numpy(npz["labels"])
        lengths = torch.from_numpy(npz["lengths"]).tolist() if "lengths" in npz else None
    tokens = job["input"] == "tokens"
    rows = Rows(inputs, labels, lengths)
    collate = pad_tokens if tokens else stack
    t = job["train"]
    if t["loss"] != "cross-entropy" or job["metric"] not in METRICS:
        sys.exit(f"pipeline.py: no case for loss {t['loss']} / metric {job['metric']}")
    metric = METRICS[job["metric"]]
    eval_rows = job["eval_rows"]
    dim = inputs.shape[-1]
    cells = []
    for cutoff in job["cutoffs"]:
        torch.manual_seed(cutoff["training_seed"])
        model = build(job["model"], dim, job["classes"])
        with np.load(job_dir / cutoff["weights"]) as npz:
            weights = {k: torch.from_numpy(npz[k]) for k in npz.files}
        model.load_state_dict(weights)
        params = list(model.parameters())
        optimizer = (torch.optim.AdamW if t["optimizer"] == "adamw" else torch.optim.Adam)(
            params, lr=t["learning_rate"], weight_decay=t["weight_decay"])
        libtorch = LibtorchStep(params, t) if libtorch_update else None
        sampler = EpochOrder(cutoff["orders"])
        train = loader(rows, collate, t["batch_size"], sampler)
        model.train()
        for epoch in range(t["epochs"]):
            sampler.set_epoch(epoch)
            for x, y in train:
                loss = F.cross_entropy(model(*x), y)
                if not np.isfinite(loss.item()):
                    sys.exit(f"pipeline.py: the loss became {loss.item()}")
                optimizer.zero_grad()
                loss.backward()
                if libtorch:
                    with torch.no_grad():
                        if t["grad_clip"] is not None:
                            libtorch.clip(t["grad_clip"])
                        libtorch.step()
                    continue
                if t["grad_clip"] is not None:
                    torch.nn.utils.clip_grad_norm_(params, t["grad_clip"])
                optimizer.step()
        model.eval()
        predicted = torch.full((len(rows),), -1, dtype=torch.int64)
        with torch.no_grad():
            outputs = [model(*x) for x, _ in loader(rows, collate, job["eval_batch"], eval_rows)]
        predicted[eval_rows] = torch.cat(outputs).argmax(1)
        y_true, y_pred = labels.numpy(), predicted.numpy()
        cells.append([float(metric(y_true[r], y_pred[r])) if r else None
                      for r in cutoff["cells"]])
    return cells


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("job", type=Path, help="the folder drift exported")
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--libtorch-update", action="store_true",
                        help="libtorch's optimiser step and tch's clipping (a diagnosis)")
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    start = time.perf_counter()
    cells = run(args.job, args.libtorch_update)
    seconds = time.perf_counter() - start
    args.out.write_text(json.dumps({"torch": torch.__version__,
                                    "threads": torch.get_num_threads(),
                                    "seconds": seconds, "cells": cells}))


if __name__ == "__main__":
    main()
