"""Reference bootstrap intervals for tests/fixtures/bootstrap.json, computed with numpy.

drift's bootstrap (src/analysis/uncertainty.rs) resamples the K cutoffs (rows of a
seed-mean drift matrix) with replacement; a replicate's ID is the mean of the drawn rows'
diagonal cells, its future the mean of their cells right of the diagonal (a row drawn
twice counts twice, empty cells skipped), decay their difference oriented so positive
is worse. The 95% interval is numpy's default percentile (linear) at 2.5 and 97.5. The
draws come from numpy's own generator and are written into the fixture, so the Rust test
feeds drift the same resampling indices and compares the intervals.
"""

import json
import sys

import numpy as np

NAN = float("nan")


def robustness(m, draw, higher):
    ids, fut = [], []
    k = m.shape[0]
    for i in draw:
        if not np.isnan(m[i, i]):
            ids.append(m[i, i])
        for j in range(i + 1, k):
            if not np.isnan(m[i, j]):
                fut.append(m[i, j])
    idv = float(np.mean(ids)) if ids else None
    fv = float(np.mean(fut)) if fut else None
    if idv is None or fv is None:
        dv = None
    else:
        dv = idv - fv if higher else fv - idv
    return idv, fv, dv


def interval(values):
    values = [v for v in values if v is not None]
    if not values:
        return None
    lo, hi = np.percentile(np.array(values), [2.5, 97.5])
    return [float(lo), float(hi)]


def case(name, m, best, higher, replicates, rng):
    k = m.shape[0]
    draws = rng.integers(0, k, size=(replicates, k))
    own = [robustness(m, d, higher) for d in draws]
    other = [robustness(best, d, higher) for d in draws]
    diff = [
        None if a[1] is None or b[1] is None else a[1] - b[1]
        for a, b in zip(own, other)
    ]
    cells = lambda g: [[None if np.isnan(v) else float(v) for v in row] for row in g]
    return {
        "name": name,
        "higher_is_better": higher,
        "grid": cells(m),
        "best": cells(best),
        "draws": draws.tolist(),
        "id": interval([r[0] for r in own]),
        "future": interval([r[1] for r in own]),
        "decay": interval([r[2] for r in own]),
        "future_vs_best": interval(diff),
    }


def main(out):
    rng = np.random.default_rng(20221201)
    accuracy = np.array(
        [
            [0.91, 0.85, 0.80, 0.71, NAN],
            [NAN, 0.93, 0.88, 0.79, 0.70],
            [NAN, NAN, 0.90, 0.86, 0.77],
            [NAN, NAN, NAN, 0.94, 0.83],
            [NAN, NAN, NAN, NAN, 0.92],
        ]
    )
    best = np.array(
        [
            [0.92, 0.88, 0.84, 0.80, 0.76],
            [NAN, 0.94, 0.90, 0.85, 0.81],
            [NAN, NAN, 0.93, 0.89, 0.84],
            [NAN, NAN, NAN, 0.95, 0.90],
            [NAN, NAN, NAN, NAN, 0.93],
        ]
    )
    mse = np.array(
        [
            [0.50, 0.72, 0.91, 1.30],
            [0.61, 0.48, 0.70, NAN],
            [0.80, 0.66, 0.52, 0.75],
            [1.00, 0.85, 0.70, 0.45],
        ]
    )
    mse_best = mse * 0.9
    cases = [
        case("accuracy-with-an-empty-cell", accuracy, best, True, 400, rng),
        case("mse-lower-is-better", mse, mse_best, False, 400, rng),
    ]
    with open(out, "w") as f:
        values, q = [0.3, 0.1, 0.4, 0.15, 0.9], [0.0, 2.5, 50.0, 97.5, 100.0]
        percentiles = {
            "values": values,
            "q": q,
            "expected": [float(v) for v in np.percentile(np.array(values), q)],
        }
        fixture = {
            "generator": "numpy " + np.__version__,
            "percentiles": percentiles,
            "cases": cases,
        }
        json.dump(fixture, f, indent=1)
        f.write("\n")


if __name__ == "__main__":
    main(sys.argv[1])
