"""Reference values for drift's tests, computed with scikit-learn and scipy.

Run through scripts/make-fixtures (which provides the pinned packages); it
writes metrics.json and wilcoxon.json into the directory given as the only
argument (default: tests/fixtures next to this script's parent).

The output is deterministic: one seeded generator, fixed generation order,
JSON written with sorted keys and Python's round-trip float repr. NaN never
appears in the JSON; undefined values are written as null.
"""

import json
import math
import os
import sys
import warnings

import numpy as np
import scipy
import sklearn
from scipy.stats import wilcoxon
from sklearn.metrics import (
    accuracy_score,
    balanced_accuracy_score,
    f1_score,
    mean_absolute_error,
    mean_squared_error,
    roc_auc_score,
)

SEED = 0x0D21F7
CASES_PER_METRIC = 240
EMPTY_CASES_PER_METRIC = 1  # zero rows: value null, no sklearn call

VERSIONS = {
    "numpy": np.__version__,
    "scipy": scipy.__version__,
    "scikit-learn": sklearn.__version__,
}


def num(x):
    """A finite Python float, or None for NaN (and infinities)."""
    x = float(x)
    return x if math.isfinite(x) else None


def ints(a):
    return [int(v) for v in a]


def floats(a):
    return [float(v) for v in a]


def sample_n(rng, i):
    """Row count: mostly small, sometimes up to 300; every 20th case one row."""
    if i % 20 == 7:
        return 1
    u = rng.random()
    if u < 0.55:
        return int(rng.integers(2, 11))
    if u < 0.88:
        return int(rng.integers(11, 51))
    return int(rng.integers(51, 301))


# ---------------------------------------------------------------- classes

CLASS_SCENARIOS = [
    "random",
    "noisy",
    "noisy",
    "const_label",
    "const_score",
    "both_const_same",
    "both_const_diff",
    "missing_in_label",
    "missing_in_score",
    "disjoint",
    "skewed",
    "perfect",
]


def class_pair(rng, n, n_classes, scenario):
    """(label, score) int arrays over classes 0..n_classes-1."""
    c = n_classes

    def uniform(k, classes=None):
        classes = np.arange(c) if classes is None else np.asarray(classes)
        return classes[rng.integers(0, len(classes), size=k)]

    def noisy_copy(label, p_keep):
        keep = rng.random(n) < p_keep
        return np.where(keep, label, uniform(n))

    if scenario == "random":
        return uniform(n), uniform(n)
    if scenario == "noisy":
        label = uniform(n)
        return label, noisy_copy(label, rng.uniform(0.3, 0.95))
    if scenario == "const_label":
        label = np.full(n, rng.integers(0, c))
        return label, noisy_copy(label, rng.uniform(0.0, 0.9))
    if scenario == "const_score":
        return uniform(n), np.full(n, rng.integers(0, c))
    if scenario == "both_const_same":
        k = rng.integers(0, c)
        return np.full(n, k), np.full(n, k)
    if scenario == "both_const_diff":
        k = rng.integers(0, c)
        j = (k + rng.integers(1, c)) % c
        return np.full(n, k), np.full(n, j)
    if scenario in ("missing_in_label", "missing_in_score"):
        sub = rng.permutation(c)[: max(1, c - int(rng.integers(1, c)))]
        partial = uniform(n, sub)
        full = noisy_copy(partial, 0.5)
        if scenario == "missing_in_label":
            return partial, full
        return full, partial
    if scenario == "disjoint":
        perm = rng.permutation(c)
        cut = int(rng.integers(1, c))
        return uniform(n, perm[:cut]), uniform(n, perm[cut:])
    if scenario == "skewed":
        p = rng.dirichlet(np.full(c, 0.3))
        label = rng.choice(c, size=n, p=p)
        return label, noisy_copy(label, rng.uniform(0.4, 0.9))
    if scenario == "perfect":
        label = uniform(n)
        return label, label.copy()
    raise ValueError(scenario)


def classification_cases(rng, metric):
    cases = []
    i = 0
    while len(cases) < CASES_PER_METRIC:
        scenario = CLASS_SCENARIOS[i % len(CLASS_SCENARIOS)]
        n = sample_n(rng, i)
        n_classes = 2 if metric == "f1" else int(rng.integers(2, 7))
        i += 1
        label, score = class_pair(rng, n, n_classes, scenario)
        label, score = ints(label), ints(score)
        case = {"metric": metric, "label": label, "score": score}
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            if metric == "accuracy":
                value = accuracy_score(label, score)
            elif metric == "balanced-accuracy":
                value = balanced_accuracy_score(label, score)
            elif metric == "f1":
                try:
                    value = f1_score(label, score, pos_label=1,
                                     average="binary", zero_division=0)
                except ValueError:
                    continue
            elif metric == "macro-f1":
                value = f1_score(label, score, average="macro", zero_division=0)
                labels = sorted(set(label) | set(score))
                per = f1_score(label, score, average=None, labels=labels,
                               zero_division=0)
                case["per_class"] = {"labels": labels,
                                     "values": [num(v) for v in per]}
            elif metric == "micro-f1":
                value = f1_score(label, score, average="micro", zero_division=0)
            else:
                raise ValueError(metric)
        case["value"] = num(value)
        cases.append(case)
    for _ in range(EMPTY_CASES_PER_METRIC):
        case = {"metric": metric, "label": [], "score": [], "value": None}
        if metric == "macro-f1":
            case["per_class"] = {"labels": [], "values": []}
        cases.append(case)
    return cases


# ---------------------------------------------------------------- regression

REGRESSION_SCENARIOS = [
    "ratings",
    "ratings",
    "ratings_skewed",
    "ratings_full_precision",
    "continuous",
    "const_label",
    "const_score",
    "perfect",
    "ratings_int_score",
    "wide_range",
]


def regression_pair(rng, n, scenario):
    def ratings(k):
        return rng.integers(1, 6, size=k).astype(float)

    if scenario == "ratings":
        label = ratings(n)
        score = np.round(label + rng.normal(0, rng.uniform(0.2, 1.5), n), 4)
    elif scenario == "ratings_skewed":
        label = rng.choice([1.0, 2.0, 3.0, 4.0, 5.0], size=n,
                           p=[0.03, 0.05, 0.12, 0.3, 0.5])
        score = np.round(np.clip(label + rng.normal(-0.3, 0.8, n), 1, 5), 3)
    elif scenario == "ratings_full_precision":
        label = ratings(n)
        score = label + rng.normal(0, 0.7, n)
    elif scenario == "continuous":
        label = np.round(rng.normal(0, 3, n), 3)
        score = np.round(label + rng.normal(0, 1, n), 4)
    elif scenario == "const_label":
        label = np.full(n, float(rng.integers(1, 6)))
        score = np.round(label + rng.normal(0, 1, n), 4)
    elif scenario == "const_score":
        label = ratings(n)
        score = np.full(n, round(float(rng.uniform(1, 5)), 2))
    elif scenario == "perfect":
        label = ratings(n)
        score = label.copy()
    elif scenario == "ratings_int_score":
        label = ratings(n)
        score = ratings(n)
    elif scenario == "wide_range":
        label = np.round(rng.normal(0, 1, n) * 10.0 ** rng.integers(-3, 4), 5)
        score = label + rng.normal(0, 1, n) * 10.0 ** rng.integers(-3, 4)
    else:
        raise ValueError(scenario)
    return label, score


def balanced_mse(label, score):
    label = np.asarray(label, dtype=float)
    score = np.asarray(score, dtype=float)
    per_value = []
    for r in np.unique(label):
        rows = label == r
        per_value.append(np.mean((score[rows] - label[rows]) ** 2))
    return float(np.mean(per_value))


def regression_cases(rng, metric):
    cases = []
    for i in range(CASES_PER_METRIC):
        scenario = REGRESSION_SCENARIOS[i % len(REGRESSION_SCENARIOS)]
        n = sample_n(rng, i)
        label, score = regression_pair(rng, n, scenario)
        label, score = floats(label), floats(score)
        if metric == "mse":
            value = mean_squared_error(label, score)
        elif metric == "mae":
            value = mean_absolute_error(label, score)
        elif metric == "balanced-mse":
            value = balanced_mse(label, score)
        else:
            raise ValueError(metric)
        cases.append({"metric": metric, "label": label, "score": score,
                      "value": num(value)})
    for _ in range(EMPTY_CASES_PER_METRIC):
        cases.append({"metric": metric, "label": [], "score": [], "value": None})
    return cases


# ---------------------------------------------------------------- AUC

SCORE_STYLES = ["round4", "round4", "round1", "round1", "full", "int", "const"]


def auc_scores(rng, label, style):
    """Scores for 0/1 labels: positives shifted up by a random separation."""
    n = len(label)
    sep = rng.choice([0.0, 0.5, 1.0, 2.0, 6.0, -1.0])
    raw = rng.normal(0, 1, n) + sep * np.asarray(label, dtype=float)
    if style == "round4":
        return np.round(raw, 4)
    if style == "round1":
        return np.round(raw / 3.0, 1)  # heavy ties
    if style == "full":
        return raw
    if style == "int":
        return np.clip(np.round(raw), -2, 2)
    if style == "const":
        return np.full(n, round(float(rng.normal()), 2))
    raise ValueError(style)


def binary_auc_cases(rng):
    cases = []
    for i in range(CASES_PER_METRIC):
        n = sample_n(rng, i)
        prevalence = rng.choice([0.0, 0.1, 0.3, 0.5, 0.5, 0.5, 0.7, 0.9, 1.0])
        label = (rng.random(n) < prevalence).astype(int)
        style = SCORE_STYLES[i % len(SCORE_STYLES)]
        score = auc_scores(rng, label, style)
        label, score = ints(label), floats(score)
        if 0 < sum(label) < n:
            value = num(roc_auc_score(label, score))
        else:
            value = None
        cases.append({"metric": "macro-auc", "form": "binary",
                      "label": label, "score": score, "value": value})
    for _ in range(EMPTY_CASES_PER_METRIC):
        cases.append({"metric": "macro-auc", "form": "binary",
                      "label": [], "score": [], "value": None})
    return cases


def multilabel_auc_cases(rng):
    cases = []
    for i in range(CASES_PER_METRIC):
        n = sample_n(rng, i)
        c = int(rng.integers(2, 8))
        prevalence = rng.choice([0.0, 0.03, 0.2, 0.5, 0.5, 0.8, 1.0], size=c)
        labels = (rng.random((n, c)) < prevalence).astype(int)
        cols = []
        for j in range(c):
            style = SCORE_STYLES[int(rng.integers(0, len(SCORE_STYLES)))]
            cols.append(auc_scores(rng, labels[:, j], style))
        scores = np.stack(cols, axis=1)
        per_class = []
        for j in range(c):
            pos = int(labels[:, j].sum())
            if 0 < pos < n:
                per_class.append(num(roc_auc_score(labels[:, j], scores[:, j])))
            else:
                per_class.append(None)
        defined = [v for v in per_class if v is not None]
        value = float(np.mean(defined)) if defined else None
        if len(defined) == c:  # cross-check against sklearn's own macro average
            ref = roc_auc_score(labels, scores, average="macro")
            assert abs(ref - value) <= 1e-12, (ref, value)
        cases.append({
            "metric": "macro-auc",
            "form": "multilabel",
            "label": [ints(row) for row in labels],
            "score": [floats(row) for row in scores],
            "per_class": per_class,
            "value": num(value) if value is not None else None,
        })
    for _ in range(EMPTY_CASES_PER_METRIC):
        cases.append({"metric": "macro-auc", "form": "multilabel",
                      "label": [], "score": [], "per_class": [], "value": None})
    return cases


# ---------------------------------------------------------------- wilcoxon

def wilcoxon_inputs(rng):
    """Lists of differences d covering scipy's exact / permutation /
    asymptotic paths, ties, zeros and the n thresholds 13/14 and 50/51."""
    out = [[]]

    def continuous(n, loc=None):
        # no ties in |d| and no zeros (regenerated until true)
        loc = rng.choice([0.0, 0.3, 1.0, -0.5]) if loc is None else loc
        while True:
            d = np.round(rng.normal(loc, 1.0, n), 6)
            if np.all(d != 0) and len(np.unique(np.abs(d))) == n:
                return d

    def integers(n, low=-5, high=5, zeros=True):
        vals = [v for v in range(low, high + 1) if zeros or v != 0]
        return rng.choice(vals, size=n).astype(float)

    def with_zeros(d, k):
        d = d.copy()
        d[rng.permutation(len(d))[:k]] = 0.0
        return d

    small = list(range(1, 21))
    mid = [14, 15, 20, 25, 30, 40, 49, 50, 51, 55, 60]
    large = [51, 52, 60, 70, 80]
    edges = [13, 14, 50, 51]

    # continuous, no ties, no zeros: exact path for n <= 50
    for n in small + small + mid + large + edges:
        out.append(continuous(n))
    # all positive / all negative
    for n in small[::2] + edges + [30, 70]:
        d = np.abs(continuous(n))
        out.append(d)
        out.append(-np.abs(continuous(n)))
    # integer values: ties, usually zeros too
    for n in small + small + mid + large + edges:
        out.append(integers(n))
    # ties without zeros
    for n in small + mid + edges:
        out.append(integers(n, zeros=False))
    # values rounded to one decimal: ties
    for n in small[1:] + mid + edges:
        d = np.round(rng.normal(0.2, 1.0, n), 1)
        out.append(d)
    # zeros without ties among the non-zero values: few, many
    for n in small[1:] + mid + edges:
        d = continuous(n)
        out.append(with_zeros(d, 1))
        out.append(with_zeros(d, max(1, (2 * n) // 3)))
        out.append(with_zeros(d, n - 1))
    # zeros only
    for n in [1, 2, 3, 5, 8, 12, 13, 14, 15, 20, 50, 51, 80]:
        out.append(np.zeros(n))
    # ties and zeros together
    for n in [3, 6, 9, 12, 13, 14, 16, 25, 50, 51, 66]:
        d = with_zeros(integers(n, -3, 3, zeros=False), max(1, n // 4))
        out.append(d)
    # constant non-zero values
    for n in [1, 2, 3, 7, 12, 13, 14, 15, 30, 50, 51, 75]:
        out.append(np.full(n, float(rng.choice([2.5, -1.0, 3.0, -0.125]))))
    # tied magnitudes of opposite sign, symmetric data
    for n in [2, 4, 6, 10, 13, 14, 20, 51]:
        half = np.abs(continuous(n // 2))
        out.append(rng.permutation(np.concatenate([half, -half])))
    # one non-zero value among zeros (n <= 13 -> permutation test)
    for n in [2, 5, 13, 14]:
        d = np.zeros(n)
        d[int(rng.integers(0, n))] = float(rng.choice([-2.0, 1.5]))
        out.append(d)
    return [floats(d) for d in out]


def wilcoxon_cases(rng):
    cases = []
    skipped = 0
    for d in wilcoxon_inputs(rng):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            try:
                res = wilcoxon(d)
            except ValueError:
                # scipy raises for e.g. d == [0.0] (permutation test on one
                # observation); such inputs are left out of the fixture.
                skipped += 1
                continue
        cases.append({"d": d, "statistic": num(res.statistic),
                      "p_value": num(res.pvalue)})
    return cases, skipped


# ---------------------------------------------------------------- main

def write_json(path, obj):
    with open(path, "w", encoding="utf-8", newline="\n") as f:
        json.dump(obj, f, indent=None, separators=(",", ":"), sort_keys=True,
                  allow_nan=False)
        f.write("\n")


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    out_dir = sys.argv[1] if len(sys.argv) > 1 else os.path.join(
        here, "..", "tests", "fixtures")
    os.makedirs(out_dir, exist_ok=True)

    rng = np.random.default_rng(SEED)

    cases = []
    for metric in ["accuracy", "balanced-accuracy", "f1", "macro-f1", "micro-f1"]:
        cases += classification_cases(rng, metric)
    for metric in ["mse", "mae", "balanced-mse"]:
        cases += regression_cases(rng, metric)
    cases += binary_auc_cases(rng)
    cases += multilabel_auc_cases(rng)
    write_json(os.path.join(out_dir, "metrics.json"),
               {"versions": VERSIONS, "cases": cases})

    w_cases, skipped = wilcoxon_cases(rng)
    write_json(os.path.join(out_dir, "wilcoxon.json"),
               {"versions": VERSIONS, "cases": w_cases})

    counts = {}
    for c in cases:
        key = c["metric"] + ("/" + c["form"] if "form" in c else "")
        counts[key] = counts.get(key, 0) + 1
    for key, k in counts.items():
        print(f"metrics.json  {key:<22} {k} cases")
    print(f"wilcoxon.json {len(w_cases)} cases ({skipped} inputs skipped: scipy raised)")


if __name__ == "__main__":
    main()
