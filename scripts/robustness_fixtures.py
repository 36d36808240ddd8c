"""Reference values for drift's drift-happens robustness family
(src/analysis/robustness_scores.rs): S, R_abs, R_rel, DRS_alpha, LDRS, CVaR_tau, J_lambda
and H per seed, and their mean and sample standard deviation over seeds.

An independent numpy implementation of the definitions drift-happens documents
(drift_happens/evaluation/robustness/metrics.py and transforms.py in
learning-mechanisms/drift-happens), written from the formulas as masked array
arithmetic, not from its loops. Run through scripts/make-fixtures (the pinned `fixtures`
set of scripts/pins); writes robustness_scores.json into the directory given as the only
argument. Deterministic: one seeded generator, JSON with sorted keys and round-trip floats,
an empty cell as null.

The matrices have empty cells above and below the diagonal but none on it: where a
diagonal cell is empty drift-happens' S is NaN (its reader refuses such a matrix) and
drift's averages the filled ones, so those cases are checked by hand in the Rust tests.
"""

import json
import os
import sys

import numpy as np

SEED = 0xD21F
EPS = 1e-8
SCORES = ["S", "R_abs", "R_rel", "DRS_alpha", "LDRS", "CVaR_tau", "J_lambda", "H"]
PARAMETERS = [
    {"alpha": 1.0, "cvar_tau": 0.1, "lambda": 0.5, "beta": 0.0},
    {"alpha": 1.0, "cvar_tau": 0.1, "lambda": 0.5, "beta": 0.2},
    {"alpha": 0.5, "cvar_tau": 0.25, "lambda": 0.3, "beta": 1.0},
    {"alpha": 2.0, "cvar_tau": 0.5, "lambda": 0.8, "beta": 0.05},
]


def scores(m, lower_is_better, p):
    """The family's scores of one K x K matrix (NaN = empty), None where undefined."""
    k = m.shape[0]
    u = np.exp(-m) if lower_is_better else np.clip(m, 0.0, 1.0)
    d = np.diag(u)
    s = float(np.mean(d[:-1] if k > 1 else d))
    i, j = np.triu_indices(k, 1)
    keep = ~np.isnan(u[i, j]) & ~np.isnan(d[i])
    i, j = i[keep], j[keep]
    v, di = u[i, j], d[i]
    w = np.exp(-p["beta"] * (j - i).astype(float))

    def avg(x, mask):
        return float(np.sum(w[mask] * x[mask]) / np.sum(w[mask])) if mask.any() else None

    every = np.ones(len(v), dtype=bool)
    r_abs = avg(di - v, every)
    r_abs = None if r_abs is None else 1.0 - r_abs
    r_rel = avg(v / (di + EPS), di >= EPS)
    drs = v / np.power(di + EPS, p["alpha"])
    drs_alpha = avg(drs, every)
    positive = (v > 0) & (di > 0)
    with np.errstate(divide="ignore"):
        log_ret = np.log(v + EPS) - np.log(di + EPS)
    ldrs = avg(log_ret, positive)
    ldrs = None if ldrs is None else float(np.exp(ldrs))
    if len(drs):
        q = np.quantile(drs, p["cvar_tau"])
        cvar = float(np.mean(drs[drs <= q]))
    else:
        cvar = None
    if r_rel is None:
        j_lambda = h = None
    else:
        j_lambda = p["lambda"] * s + (1 - p["lambda"]) * r_rel
        h = 2 * s * r_rel / (s + r_rel) if s + r_rel > 0 else 0.0
    values = [s, r_abs, r_rel, drs_alpha, ldrs, cvar, j_lambda, h]
    return {name: (None if x is None else float(x)) for name, x in zip(SCORES, values)}


def matrix(rng, k, lower_is_better, empty):
    if lower_is_better:
        m = rng.uniform(0.0, 3.0, (k, k))
    else:
        m = rng.uniform(0.3, 1.0, (k, k))
        # A few cells outside [0, 1], which the utility clips.
        m[rng.random((k, k)) < 0.03] = 1.05
        m[rng.random((k, k)) < 0.03] = -0.02
    hole = rng.random((k, k)) < empty
    np.fill_diagonal(hole, False)
    m[hole] = np.nan
    return m


def cells(m):
    return [[None if np.isnan(x) else float(x) for x in row] for row in m]


def over_seeds(per_seed):
    out = {}
    for name in SCORES:
        xs = [s[name] for s in per_seed if s[name] is not None]
        if not xs:
            out[name] = None
            continue
        sd = float(np.std(xs, ddof=1)) if len(xs) > 1 else None
        out[name] = {"mean": float(np.mean(xs)), "sd": sd}
    return out


def main():
    out_dir = sys.argv[1]
    rng = np.random.default_rng(SEED)
    cases = []
    for k in [1, 2, 3, 5, 8, 12]:
        for lower in [False, True]:
            for empty in [0.0, 0.15, 0.4]:
                for p in PARAMETERS:
                    seeds = int(rng.integers(1, 5))
                    grids = [matrix(rng, k, lower, empty) for _ in range(seeds)]
                    per_seed = [scores(g, lower, p) for g in grids]
                    cases.append({
                        "metric": "mse" if lower else "accuracy",
                        "parameters": p,
                        "grids": [cells(g) for g in grids],
                        "per_seed": per_seed,
                        "over_seeds": over_seeds(per_seed),
                    })
    with open(os.path.join(out_dir, "robustness_scores.json"), "w", encoding="utf-8",
              newline="\n") as f:
        json.dump({"numpy": np.__version__, "cases": cases}, f, indent=None,
                  separators=(",", ":"), sort_keys=True, allow_nan=False)
        f.write("\n")
    print(f"robustness_scores.json {len(cases)} cases")


if __name__ == "__main__":
    main()
