"""Compares tests/fixtures/robustness_scores.json with drift-happens' own functions.

    python scripts/robustness_peer_check.py DRIFT_HAPPENS_CHECKOUT

DRIFT_HAPPENS_CHECKOUT is a checkout of learning-mechanisms/drift-happens; its
drift_happens/evaluation/robustness/ package is imported from there (it needs numpy and
pydantic) and run on every matrix of the fixture. Prints the largest absolute difference
and exits 1 if it exceeds 1e-9, or if a score the fixture leaves undefined is a number
there (drift-happens writes H = 0 where R_rel is undefined; that one is accepted and
counted).
"""

import importlib.util
import json
import math
import os
import sys

import numpy as np

FIELDS = {"S": "strength", "R_abs": "robustness_abs", "R_rel": "robustness_rel",
          "DRS_alpha": "drs_alpha", "LDRS": "ldrs", "CVaR_tau": "cvar",
          "J_lambda": "combined_linear", "H": "combined_harmonic"}


def load_peer(checkout):
    package = os.path.join(checkout, "drift_happens", "evaluation", "robustness")
    sys.path.insert(0, checkout)
    for name in ["transforms", "metrics"]:
        full = f"drift_happens.evaluation.robustness.{name}"
        spec = importlib.util.spec_from_file_location(full, os.path.join(package, f"{name}.py"))
        module = importlib.util.module_from_spec(spec)
        sys.modules[full] = module
        spec.loader.exec_module(module)
    return sys.modules["drift_happens.evaluation.robustness.metrics"]


def main():
    peer = load_peer(sys.argv[1])
    here = os.path.dirname(os.path.abspath(__file__))
    with open(os.path.join(here, "..", "tests", "fixtures", "robustness_scores.json")) as f:
        fixture = json.load(f)
    worst, compared, undefined, h_zero = 0.0, 0, 0, 0
    for case in fixture["cases"]:
        p = case["parameters"]
        kind = "lower_is_better" if case["metric"] == "mse" else "higher_is_better"
        for grid, want in zip(case["grids"], case["per_seed"]):
            m = np.array([[np.nan if x is None else x for x in row] for row in grid])
            r = peer.analyze_drift_robustness(
                m, metric_type=kind, weighting=peer.WeightingScheme(beta=p["beta"]),
                alpha=p["alpha"], cvar_tau=p["cvar_tau"], lambda_param=p["lambda"])
            for name, field in FIELDS.items():
                got = getattr(r, field)
                if want[name] is None:
                    if name == "H" and got == 0.0:
                        h_zero += 1
                    elif not math.isnan(got):
                        sys.exit(f"{name}: drift-happens {got}, the fixture undefined")
                    undefined += 1
                    continue
                worst = max(worst, abs(got - want[name]))
                compared += 1
    print(f"{compared} scores compared, largest difference {worst:.3e}; {undefined} undefined "
          f"in both ({h_zero} of them H, which drift-happens writes as 0)")
    sys.exit(1 if worst > 1e-9 else 0)


if __name__ == "__main__":
    main()
