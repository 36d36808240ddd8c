"""Reference values of drift's shift tests and label-free estimates (src/shift/, read by
tests/shift.rs), from trusted peers where one exists and from numpy computations of the
papers' formulas where none does:

- MMD: the unbiased MMD^2 (Gretton et al. 2012, eq. 3) with k(x, y) = exp(-|x - y|^2 /
  (2 s^2)), s the median of the Euclidean distances between the distinct points of the
  pooled sample; and a permutation p-value (1 + #{>=}) / (1 + N) from numpy's own seeded
  shuffles (drift's shuffles differ, so its p-value is compared within sampling error).
- KS: scipy's `ks_2samp` (method "auto", two-sided) on every dimension; the test's
  statistic is the largest, its p-value the smallest times the dimensions, capped at 1.
- C2ST: scikit-learn's `StandardScaler` + `LogisticRegression` (C = 1, L2) under
  `StratifiedKFold(5)` (no shuffle), the out-of-fold probabilities of "B", their ROC AUC
  (`roc_auc_score`) and scipy's one-sided `mannwhitneyu` (asymptotic, continuity- and
  tie-corrected) of B's scores over A's. The solver is Newton-Cholesky at tol 1e-12, so the
  probabilities are the optimum's to float rounding.
- Chi-square: scipy's `chi2_contingency` (no Yates correction) of the 2 x C table of
  predicted-class counts, empty columns dropped.
- BBSE (Lipton et al. 2018): w = C^-1 mu, C[a, b] = P_source(yhat = a, y = b), mu[a] =
  P_target(yhat = a), by `np.linalg.solve`; the target prior w * p_source, negatives
  clipped to 0, renormalised; its total-variation distance to p_source.
- Confidence (Garg et al. 2022): average max-softmax confidence; ATC's threshold t the
  (e + 1)-th smallest source confidence, e the source errors (inf when all are wrong),
  and the estimated accuracy the share of target confidences >= t.

    python shift_fixtures.py OUT.json

Inputs are float32 where `.npy` samples are, the sums float64. Deterministic.
"""

import json
import sys

import numpy as np
from scipy import stats
from sklearn.linear_model import LogisticRegression
from sklearn.metrics import roc_auc_score
from sklearn.model_selection import StratifiedKFold, cross_val_predict
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

PERMUTATIONS = 4000


def mmd(a, b):
    x = np.concatenate([a, b]).astype(np.float64)
    m, n = len(a), len(b)
    sq = ((x[:, None, :] - x[None, :, :]) ** 2).sum(-1)
    iu = np.triu_indices(m + n, 1)
    s = np.median(np.sqrt(sq[iu]))
    k = np.exp(-sq / (2 * s * s))

    def stat(idx):
        ka = k[np.ix_(idx[:m], idx[:m])]
        kb = k[np.ix_(idx[m:], idx[m:])]
        kab = k[np.ix_(idx[:m], idx[m:])]
        aa = (ka.sum() - np.trace(ka)) / (m * (m - 1))
        bb = (kb.sum() - np.trace(kb)) / (n * (n - 1))
        return aa + bb - 2 * kab.sum() / (m * n)

    observed = stat(np.arange(m + n))
    rng = np.random.default_rng(20261204)
    count = sum(stat(rng.permutation(m + n)) >= observed for _ in range(PERMUTATIONS))
    return observed, s, (1 + count) / (1 + PERMUTATIONS)


def mmd_case(name, a, b):
    a, b = a.astype(np.float32), b.astype(np.float32)
    statistic, bandwidth, p = mmd(a, b)
    return dict(name=name, a=a.tolist(), b=b.tolist(), dims=a.shape[1], statistic=float(statistic),
                bandwidth=float(bandwidth), p_value=float(p), permutations=PERMUTATIONS)


def ks_case(name, a, b):
    a, b = a.astype(np.float32), b.astype(np.float32)
    per = [stats.ks_2samp(a[:, d].astype(np.float64), b[:, d].astype(np.float64), method="auto")
           for d in range(a.shape[1])]
    statistics = [float(r.statistic) for r in per]
    p_values = [float(r.pvalue) for r in per]
    return dict(name=name, a=a.tolist(), b=b.tolist(), statistics=statistics, p_values=p_values,
                statistic=max(statistics), p_value=min(1.0, min(p_values) * a.shape[1]))


def ks_pair(name, a, b):
    """One dimension given as plain lists (exact-method code paths on larger samples)."""
    r = stats.ks_2samp(a, b, method="auto")
    return dict(name=name, a=list(map(float, a)), b=list(map(float, b)),
                statistic=float(r.statistic), p_value=float(r.pvalue))


def c2st_case(name, a, b):
    a, b = a.astype(np.float32), b.astype(np.float32)
    x = np.concatenate([a, b]).astype(np.float64)
    y = np.r_[np.zeros(len(a), int), np.ones(len(b), int)]
    model = make_pipeline(StandardScaler(), LogisticRegression(
        C=1.0, solver="newton-cholesky", tol=1e-12, max_iter=1000))
    proba = cross_val_predict(model, x, y, cv=StratifiedKFold(5), method="predict_proba")[:, 1]
    auc = roc_auc_score(y, proba)
    mw = stats.mannwhitneyu(proba[y == 1], proba[y == 0], alternative="greater",
                            method="asymptotic", use_continuity=True)
    return dict(name=name, a=a.tolist(), b=b.tolist(), statistic=float(auc), p_value=float(mw.pvalue))


def chi_square_case(name, a, b, classes):
    table = np.array([np.bincount(a, minlength=classes), np.bincount(b, minlength=classes)])
    table = table[:, table.sum(0) > 0]
    if table.shape[1] < 2:
        statistic, p = 0.0, 1.0
    else:
        statistic, p, _, _ = stats.chi2_contingency(table, correction=False)
    return dict(name=name, a=a.tolist(), b=b.tolist(), classes=classes,
                statistic=float(statistic), p_value=float(p))


def bbse_case(name, labels, predicted, target, classes):
    n, m = len(labels), len(target)
    c = np.zeros((classes, classes))
    np.add.at(c, (predicted, labels), 1.0 / n)
    mu = np.bincount(target, minlength=classes) / m
    source = c.sum(0)
    try:
        if np.linalg.cond(c) > 1e12:
            raise np.linalg.LinAlgError
        w = np.linalg.solve(c, mu)
    except np.linalg.LinAlgError:
        return dict(name=name, labels=labels.tolist(), predicted=predicted.tolist(),
                    target=target.tolist(), classes=classes, estimate=None)
    q = np.clip(w * source, 0, None)
    q = q / q.sum()
    return dict(name=name, labels=labels.tolist(), predicted=predicted.tolist(),
                target=target.tolist(), classes=classes,
                estimate=dict(weights=w.tolist(), source=source.tolist(), target=q.tolist(),
                              distance=float(0.5 * np.abs(q - source).sum())))


def confidence_case(name, source, correct, target):
    e = int((~correct).sum())
    t = np.sort(source)[e] if e < len(source) else np.inf
    return dict(name=name, source=source.tolist(), correct=correct.tolist(), target=target.tolist(),
                average=float(target.mean()), threshold=None if np.isinf(t) else float(t),
                atc=float((target >= t).mean()))


def main():
    rng = np.random.default_rng(7)
    out = dict(numpy=np.__version__, scipy=__import__("scipy").__version__,
               sklearn=__import__("sklearn").__version__)
    out["mmd"] = [
        mmd_case("mean shift", rng.normal(0, 1, (30, 5)), rng.normal(0.6, 1, (40, 5))),
        mmd_case("same distribution", rng.normal(0, 1, (25, 3)), rng.normal(0, 1, (35, 3))),
        mmd_case("scale shift", rng.normal(0, 1, (20, 8)), rng.normal(0, 1.8, (20, 8))),
        # Repeated rows: zero distances among the pairs, the median still positive.
        mmd_case("ties", np.repeat(rng.normal(0, 1, (6, 2)), 3, axis=0), rng.normal(0.3, 1, (15, 2))),
    ]
    out["ks"] = [
        ks_case("mean shift, unequal sizes", rng.normal(0, 1, (30, 4)), rng.normal(0.5, 1, (45, 4))),
        ks_case("equal sizes", rng.normal(0, 1, (40, 3)), rng.normal(0, 1.5, (40, 3))),
        ks_case("same distribution", rng.normal(0, 1, (33, 2)), rng.normal(0, 1, (27, 2))),
        # Rounded values: ties inside and across the samples.
        ks_case("ties", np.round(rng.normal(0, 1, (50, 2)), 1), np.round(rng.normal(0.2, 1, (20, 2)), 1)),
        ks_case("one row against many", rng.normal(0, 1, (1, 3)), rng.normal(0, 1, (12, 3))),
    ]
    out["ks_pairs"] = [
        ks_pair("large unequal, shifted", rng.normal(0, 1, 3000), rng.normal(0.05, 1, 2200)),
        ks_pair("large equal", rng.normal(0, 1, 5000), rng.normal(0.03, 1, 5000)),
        ks_pair("far apart", rng.normal(0, 1, 700), rng.normal(3, 1, 900)),
        ks_pair("coprime sizes", rng.normal(0, 1, 997), rng.normal(0.1, 1, 1009)),
        ks_pair("identical", [1.0, 2.0, 3.0], [1.0, 2.0, 3.0]),
        ks_pair("at the exact limit", rng.normal(0, 1, 10000), rng.normal(0.02, 1, 9000)),
    ]
    out["c2st"] = [
        c2st_case("mean shift", rng.normal(0, 1, (40, 6)), rng.normal(0.7, 1, (55, 6))),
        c2st_case("same distribution", rng.normal(0, 1, (60, 4)), rng.normal(0, 1, (50, 4))),
        c2st_case("separable", rng.normal(0, 1, (20, 3)), rng.normal(6, 1, (25, 3))),
        # A constant column (scaled by 1, as StandardScaler does) and a tied score.
        c2st_case("constant column", np.c_[np.ones((30, 1)), rng.normal(0, 1, (30, 2))],
                  np.c_[np.ones((35, 1)), rng.normal(0.4, 1, (35, 2))]),
    ]
    out["chi_square"] = [
        chi_square_case("prior shift", rng.choice(4, 300, p=[.4, .3, .2, .1]),
                        rng.choice(4, 250, p=[.1, .2, .3, .4]), 4),
        chi_square_case("same prior", rng.choice(3, 200), rng.choice(3, 180), 3),
        chi_square_case("an empty class", rng.choice(3, 90), rng.choice(3, 70), 5),
        chi_square_case("one class only", np.zeros(10, int), np.zeros(12, int), 2),
        chi_square_case("two classes", rng.choice(2, 120, p=[.7, .3]), rng.choice(2, 100, p=[.5, .5]), 2),
    ]

    def noisy(labels, accuracy, classes):
        wrong = rng.random(len(labels)) > accuracy
        return np.where(wrong, rng.integers(0, classes, len(labels)), labels)

    src = rng.choice(3, 600, p=[.5, .3, .2])
    tgt = rng.choice(3, 500, p=[.2, .3, .5])
    src2 = rng.choice(2, 400, p=[.5, .5])
    tgt2 = rng.choice(2, 300, p=[.8, .2])
    src4 = rng.choice(4, 800)
    never = noisy(src, 0.8, 3)
    never[never == 2] = 1
    out["bbse"] = [
        bbse_case("three classes", src, noisy(src, 0.8, 3), noisy(tgt, 0.8, 3), 3),
        bbse_case("two classes", src2, noisy(src2, 0.9, 2), noisy(tgt2, 0.9, 2), 2),
        bbse_case("no shift", src4, noisy(src4, 0.7, 4), noisy(rng.choice(4, 700), 0.7, 4), 4),
        # A class the source never predicts: C is singular, no estimate.
        bbse_case("never predicted", src, never, noisy(tgt, 0.8, 3), 3),
        # Weights that go negative: clipped and renormalised.
        bbse_case("clipped", src, noisy(src, 0.5, 3), np.full(200, 0), 3),
    ]
    conf = lambda n, lo: rng.uniform(lo, 1.0, n)
    out["confidence"] = [
        confidence_case("some errors", conf(200, 0.3), rng.random(200) < 0.8, conf(150, 0.2)),
        confidence_case("no errors", conf(50, 0.5), np.ones(50, bool), conf(40, 0.3)),
        confidence_case("all wrong", conf(30, 0.4), np.zeros(30, bool), conf(20, 0.4)),
        confidence_case("ties", np.round(conf(100, 0.3), 1), rng.random(100) < 0.6,
                        np.round(conf(80, 0.3), 1)),
    ]
    with open(sys.argv[1], "w") as f:
        json.dump(out, f, indent=1)
        f.write("\n")


if __name__ == "__main__":
    main()
