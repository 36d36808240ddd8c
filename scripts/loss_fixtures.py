"""Reference values for drift's training losses (src/train/loss.rs), computed with PyTorch.

Run through scripts/make-fixtures (which gets the pinned torch from scripts/torch-python);
writes the JSON file given as the only argument (default: tests/fixtures/losses.json next
to this script's parent). tests/losses.rs compares drift's losses and weight helpers to it.

Every case is one object with "loss" (the preset's loss name), "name" (the scenario) and:

- cross-entropy: "rows" B, "classes" C, "logits" (B*C, row-major), "labels" (B class ids),
  "value" = F.cross_entropy(logits, labels);
- weighted-bce: "rows" B, "classes" C, "logits" (B*C), "targets" (B*C 0/1, row-major),
  "pos_weight" (C, neg_c / max(pos_c, 1) over all B rows, computed here in float64),
  "value" = F.binary_cross_entropy_with_logits(logits, targets, pos_weight=pos_weight);
- weighted-mse: "predictions" (B), "targets" (B ratings in 1..5), "weights" (B,
  n / n_r with n_r the rows whose rating equals this row's, float64),
  "value" = (weights * F.mse_loss(predictions, targets, reduction="none")).mean().

Inputs are float32 (the Rust side's dtype), written as the exact Python float of each
float32; the losses are computed in float32 (weights cast to float32 first) and written
as the Python float of the float32 result. The output is deterministic: one seeded
numpy generator, fixed generation order, one thread, sorted keys, round-trip floats.
"""

import json
import os
import sys

import numpy as np
import torch
import torch.nn.functional as F

SEED = 0x1055E5
VERSIONS = {"numpy": np.__version__, "torch": torch.__version__.split("+")[0]}


def f32(rng, shape, scale=1.0):
    """Standard-normal float32 values times `scale` (rounded to float32)."""
    return (rng.standard_normal(shape, dtype=np.float32) * np.float32(scale)).astype(np.float32)


def floats(a):
    return [float(v) for v in np.asarray(a).reshape(-1)]


def ints(a):
    return [int(v) for v in np.asarray(a).reshape(-1)]


def value(t):
    assert t.dtype == torch.float32, t.dtype
    return float(t.item())


# ---------------------------------------------------------------- cross-entropy

# (name, B, C, how the logits are drawn)
CE_SCENARIOS = [
    ("single-row-binary", 1, 2, "normal"),
    ("single-row-seven", 1, 7, "normal"),
    ("binary", 2, 2, "normal"),
    ("binary", 9, 2, "normal"),
    ("three", 5, 3, "normal"),
    ("seven", 8, 7, "normal"),
    ("seven", 33, 7, "normal"),
    ("wide-logits", 16, 4, "scale3"),
    ("ten", 64, 10, "normal"),
    ("many-rows", 257, 5, "normal"),
    ("one-label-only", 12, 7, "normal"),
    ("missing-classes", 20, 7, "normal"),
    ("near-zero", 10, 3, "tiny"),
    ("equal-logits", 6, 4, "zeros"),
    ("large-uniform", 1, 2, "uniform50"),
    ("large-uniform", 7, 7, "uniform50"),
    ("large-uniform", 40, 3, "uniform50"),
    ("large-signs", 11, 2, "signs50"),
    ("large-signs", 9, 7, "signs50"),
    ("confident-right-and-wrong", 24, 5, "onehot50"),
]


def ce_logits(rng, b, c, how, labels):
    if how == "normal":
        return f32(rng, (b, c))
    if how == "scale3":
        return f32(rng, (b, c), 3.0)
    if how == "tiny":
        return f32(rng, (b, c), 1e-3)
    if how == "zeros":
        return np.zeros((b, c), dtype=np.float32)
    if how == "uniform50":
        return rng.uniform(-50.0, 50.0, (b, c)).astype(np.float32)
    if how == "signs50":
        return (rng.choice([-50.0, 50.0], (b, c))).astype(np.float32)
    if how == "onehot50":
        # +50 on one class per row: the label for odd rows, another class for even rows.
        x = np.full((b, c), -50.0, dtype=np.float32)
        for i in range(b):
            k = labels[i] if i % 2 else (labels[i] + 1) % c
            x[i, k] = 50.0
        return x + f32(rng, (b, c), 0.5)
    raise ValueError(how)


def ce_case(rng, name, b, c, how):
    if name == "one-label-only":
        labels = np.full(b, int(rng.integers(0, c)), dtype=np.int64)
    elif name == "missing-classes":
        labels = rng.choice([1, 4, 6], b).astype(np.int64)
    else:
        labels = rng.integers(0, c, b).astype(np.int64)
    logits = ce_logits(rng, b, c, how, labels)
    loss = F.cross_entropy(torch.from_numpy(logits), torch.from_numpy(labels))
    return {
        "loss": "cross-entropy",
        "name": name,
        "rows": b,
        "classes": c,
        "logits": floats(logits),
        "labels": ints(labels),
        "value": value(loss),
    }


# ---------------------------------------------------------------- weighted BCE

# (name, B, C, positive rate, logit scale)
BCE_SCENARIOS = [
    ("single-label", 10, 1, 0.3, 1.0),
    ("single-label-no-positive", 8, 1, 0.0, 1.0),
    ("single-label-all-positive", 8, 1, 1.0, 1.0),
    ("single-row", 1, 3, 0.5, 1.0),
    ("single-row", 1, 7, 0.5, 1.0),
    ("two-rows", 2, 3, 0.5, 1.0),
    ("three", 6, 3, 0.4, 1.0),
    ("three", 25, 3, 0.2, 2.0),
    ("three-rare", 50, 3, 0.05, 1.0),
    ("seven", 12, 7, 0.3, 1.0),
    ("seven", 40, 7, 0.5, 1.0),
    ("seven-rare", 100, 7, 0.08, 1.0),
    ("seven-many-rows", 300, 7, 0.25, 1.5),
    ("empty-and-full-columns", 9, 3, 0.4, 1.0),
    ("empty-and-full-columns", 30, 7, 0.3, 1.0),
    ("empty-and-full-columns-large", 16, 7, 0.3, 50.0),
    ("large-logits", 20, 3, 0.3, 50.0),
    ("large-logits", 14, 1, 0.5, 50.0),
    ("near-zero", 10, 7, 0.3, 1e-3),
    ("all-positive", 5, 3, 1.0, 1.0),
]


def bce_case(rng, name, b, c, rate, scale):
    targets = (rng.random((b, c)) < rate).astype(np.float32)
    if name.startswith("empty-and-full-columns"):
        targets[:, 0] = 0.0  # a label with no positive row
        targets[:, c - 1] = 1.0  # a label with only positive rows
    logits = f32(rng, (b, c), scale)
    # Independent of the Rust helper: count in float64 over all rows.
    pos = targets.astype(np.float64).sum(axis=0)
    neg = b - pos
    pos_weight = [float(neg[k] / max(pos[k], 1.0)) for k in range(c)]
    loss = F.binary_cross_entropy_with_logits(
        torch.from_numpy(logits),
        torch.from_numpy(targets),
        pos_weight=torch.tensor(pos_weight, dtype=torch.float32),
    )
    return {
        "loss": "weighted-bce",
        "name": name,
        "rows": b,
        "classes": c,
        "logits": floats(logits),
        "targets": ints(targets),
        "pos_weight": pos_weight,
        "value": value(loss),
    }


# ---------------------------------------------------------------- weighted MSE

# (name, B, ratings that occur, their probabilities or None, prediction spread)
MSE_SCENARIOS = [
    ("single-row", 1, [4], None, 1.0),
    ("two-rows-same", 2, [3], None, 1.0),
    ("two-rows-different", 2, [1, 5], None, 1.0),
    ("all-ratings", 10, [1, 2, 3, 4, 5], None, 1.0),
    ("all-ratings", 50, [1, 2, 3, 4, 5], None, 1.0),
    ("skewed", 40, [1, 2, 3, 4, 5], [0.02, 0.05, 0.13, 0.3, 0.5], 1.0),
    ("skewed", 200, [1, 2, 3, 4, 5], [0.05, 0.05, 0.1, 0.3, 0.5], 1.0),
    ("no-two", 30, [1, 3, 4, 5], None, 1.0),
    ("no-one-no-five", 25, [2, 3, 4], [0.2, 0.5, 0.3], 1.0),
    ("only-extremes", 16, [1, 5], [0.25, 0.75], 1.0),
    ("constant", 12, [3], None, 1.0),
    ("rare-one", 60, [1, 4, 5], [0.02, 0.48, 0.5], 1.0),
    ("many-rows", 333, [1, 2, 3, 4, 5], [0.1, 0.1, 0.2, 0.3, 0.3], 1.0),
    ("close-predictions", 20, [1, 2, 3, 4, 5], None, 0.01),
    ("far-predictions", 20, [1, 2, 3, 4, 5], None, 10.0),
    ("far-predictions", 7, [2, 5], None, 30.0),
    ("odd-size", 13, [1, 2, 4], None, 1.0),
    ("prime-size", 97, [2, 3, 4, 5], [0.1, 0.2, 0.3, 0.4], 1.0),
    ("exact-predictions", 9, [1, 3, 5], None, 0.0),
    ("three-rows", 3, [1, 2, 3], None, 1.0),
]


def mse_case(rng, name, b, values, probs, spread):
    targets = rng.choice(np.array(values, dtype=np.float32), b, p=probs).astype(np.float32)
    predictions = (targets + f32(rng, b, spread)).astype(np.float32)
    # Independent of the Rust helper: n / n_r in float64 over all rows.
    counts = {}
    for t in targets.tolist():
        counts[t] = counts.get(t, 0) + 1
    weights = [float(b) / float(counts[t]) for t in targets.tolist()]
    w = torch.tensor(weights, dtype=torch.float32)
    pred, y = torch.from_numpy(predictions), torch.from_numpy(targets)
    loss = (w * F.mse_loss(pred, y, reduction="none")).mean()
    return {
        "loss": "weighted-mse",
        "name": name,
        "predictions": floats(predictions),
        "targets": floats(targets),
        "weights": weights,
        "value": value(loss),
    }


def main():
    out = sys.argv[1] if len(sys.argv) > 1 else os.path.join(
        os.path.dirname(os.path.abspath(__file__)), "..", "tests", "fixtures", "losses.json")
    torch.set_num_threads(1)
    torch.set_default_dtype(torch.float32)
    rng = np.random.default_rng(SEED)
    cases = []
    cases += [ce_case(rng, *s) for s in CE_SCENARIOS]
    cases += [bce_case(rng, *s) for s in BCE_SCENARIOS]
    cases += [mse_case(rng, *s) for s in MSE_SCENARIOS]
    text = json.dumps({"versions": VERSIONS, "seed": SEED, "cases": cases},
                      sort_keys=True, separators=(",", ":"), allow_nan=False)
    with open(out, "w", encoding="utf-8", newline="\n") as f:
        f.write(text + "\n")
    print(f"{out}: {len(cases)} cases", file=sys.stderr)


if __name__ == "__main__":
    main()
