"""Reference values for the tests that decide the paper's claims (src/analysis/t_test.rs):
Welch's t-test, the one-sample t-test and Spearman's rank correlation with its p-value from
scipy, Holm's adjustment from statsmodels.

Run through scripts/make-fixtures (the pinned `fixtures` set of scripts/pins); writes
t_test.json into the directory given as the only argument. Deterministic: one seeded
generator, JSON with sorted keys and Python's round-trip float repr.

The inputs look like seed values of a drift study (scores in [0, 1], 2 to 20 seeds, spreads
from 1e-4 to 0.1) so that the p-values span 1e-12 to 1; constant samples, where scipy
returns NaN, are left out (drift decides them by the test's limit, checked by hand).
"""

import json
import os
import sys

import numpy as np
import scipy
import statsmodels
from scipy.stats import spearmanr, ttest_1samp, ttest_ind
from statsmodels.stats.multitest import multipletests

SEED = 0x7E57
VERSIONS = {
    "numpy": np.__version__,
    "scipy": scipy.__version__,
    "statsmodels": statsmodels.__version__,
}
SIZES = [2, 3, 4, 5, 8, 20]


def sample(rng, n):
    centre = rng.uniform(0.3, 0.95)
    spread = 10 ** rng.uniform(-4, -1)
    return [float(v) for v in np.clip(rng.normal(centre, spread, n), 0, 1)]


def welch_cases(rng):
    cases = []
    for na in SIZES:
        for nb in SIZES:
            for _ in range(4):
                a = sample(rng, na)
                # Half the cases near a (large p), half anywhere (small p).
                if rng.random() < 0.5:
                    shift = rng.normal(0, 0.01)
                    b = [float(min(max(v + shift, 0), 1)) for v in sample(rng, nb)]
                    b = [float(np.clip(np.mean(a) + (v - np.mean(b)), 0, 1)) for v in b]
                else:
                    b = sample(rng, nb)
                if np.std(a) == 0 or np.std(b) == 0:
                    continue
                r = ttest_ind(a, b, equal_var=False)
                cases.append({"a": a, "b": b, "t": float(r.statistic), "df": float(r.df),
                              "p": float(r.pvalue)})
    return cases


def one_sample_cases(rng):
    cases = []
    for n in SIZES:
        for _ in range(12):
            a = sample(rng, n)
            mu = float(np.mean(a) + rng.normal(0, 10 ** rng.uniform(-4, -1)))
            if np.std(a) == 0:
                continue
            r = ttest_1samp(a, mu)
            cases.append({"a": a, "mu": mu, "t": float(r.statistic), "df": float(r.df),
                          "p": float(r.pvalue)})
    return cases


def holm_cases(rng):
    cases = []
    for m in [1, 2, 3, 5, 8, 16, 59, 100]:
        for _ in range(5):
            p = 10 ** rng.uniform(-6, 0, m)
            if m > 2:
                p[1] = p[0]  # a tie
            p = [float(v) for v in p]
            cases.append({"p": p, "adjusted": [float(v) for v in
                                               multipletests(p, method="holm")[1]]})
    return cases


def spearman_cases(rng):
    """Pairs of run values (an ID and a decay per run): 5 to 120 runs, from no relation to
    a strong one of either sign, some rounded to two decimals so that ties take average
    ranks; constant sides, where scipy returns NaN, are left out."""
    cases = []
    for n in [5, 6, 10, 20, 45, 90, 120]:
        for _ in range(6):
            x = rng.uniform(0.5, 1.0, n)
            slope = rng.choice([-1.0, -0.2, 0.0, 0.2, 1.0])
            y = slope * x + rng.normal(0, 10 ** rng.uniform(-2, 0), n)
            if rng.random() < 0.5:
                x, y = np.round(x, 2), np.round(y, 2)
            if np.std(x) == 0 or np.std(y) == 0:
                continue
            r = spearmanr(x, y)
            cases.append({"a": [float(v) for v in x], "b": [float(v) for v in y],
                          "rho": float(r.statistic), "p": float(r.pvalue)})
    return cases


def main():
    out_dir = sys.argv[1]
    rng = np.random.default_rng(SEED)
    fixture = {
        "versions": VERSIONS,
        "welch": welch_cases(rng),
        "one_sample": one_sample_cases(rng),
        "holm": holm_cases(rng),
        # Drawn last, so that the cases above keep their bytes.
        "spearman": spearman_cases(rng),
    }
    with open(os.path.join(out_dir, "t_test.json"), "w", encoding="utf-8",
              newline="\n") as f:
        json.dump(fixture, f, indent=None, separators=(",", ":"), sort_keys=True,
                  allow_nan=False)
        f.write("\n")
    for key in ["welch", "one_sample", "holm", "spearman"]:
        print(f"t_test.json {key:<10} {len(fixture[key])} cases")


if __name__ == "__main__":
    main()
