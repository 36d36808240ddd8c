"""The scikit-learn / scipy half of the numerics benchmark (benches/numerics.rs drives it).

Reads the data the driver wrote (raw little-endian files: `labels.u8`, rows x classes
0/1 bytes; `scores.f64`, rows x classes float64; `differences.f64`, float64), then times
what drift computes on the same data:

- macro AUC: `sklearn.metrics.roc_auc_score(labels, scores, average="macro")` on the
  multi-label indicator matrix (every column has both labels, so no column is dropped);
- the Wilcoxon signed-rank test: `scipy.stats.wilcoxon(differences)` with its defaults
  (`zero_method="wilcox"`, `correction=False`, `method="auto"`), as drift reproduces.

Run by the Rust driver with --serve, one JSON object a line each way. After a greeting
{"numpy": v, "scipy": v, "sklearn": v}:

- {"load": dir, "classes": c} -> {"rows": n}
- {"auc": 1} -> {"seconds": s, "value": macro AUC}
- {"wilcoxon": 1} -> {"seconds": s, "statistic": min(r+, r-), "p": two-sided p-value}

    cargo bench --bench numerics

The python comes from scripts/venv-pins --set fixtures (the pinned numpy, scipy and
scikit-learn the test fixtures are made with).
"""

import json
import os
import sys
import time

import numpy as np
import scipy
import sklearn
from scipy.stats import wilcoxon
from sklearn.metrics import roc_auc_score


def reply(obj):
    print(json.dumps(obj), flush=True)


def main():
    if sys.argv[1:] != ["--serve"]:
        sys.exit("usage: numerics.py --serve (driven by benches/numerics.rs)")
    reply({"numpy": np.__version__, "scipy": scipy.__version__, "sklearn": sklearn.__version__})
    labels = scores = differences = None
    for line in sys.stdin:
        request = json.loads(line)
        if "load" in request:
            folder, classes = request["load"], request["classes"]
            labels = np.fromfile(os.path.join(folder, "labels.u8"), dtype=np.uint8)
            labels = labels.reshape(-1, classes)
            scores = np.fromfile(os.path.join(folder, "scores.f64"), dtype="<f8")
            scores = scores.reshape(-1, classes)
            differences = np.fromfile(os.path.join(folder, "differences.f64"), dtype="<f8")
            reply({"rows": int(labels.shape[0])})
        elif "auc" in request:
            start = time.perf_counter()
            value = roc_auc_score(labels, scores, average="macro")
            reply({"seconds": time.perf_counter() - start, "value": float(value)})
        elif "wilcoxon" in request:
            start = time.perf_counter()
            result = wilcoxon(differences)
            seconds = time.perf_counter() - start
            reply({"seconds": seconds, "statistic": float(result.statistic),
                   "p": float(result.pvalue)})
        else:
            sys.exit(f"numerics.py: unknown request {request!r}")


if __name__ == "__main__":
    main()
