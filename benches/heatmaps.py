"""The matplotlib peer of drift's plotters heatmaps (benches/heatmaps.rs).

Reads the grids the Rust bench wrote (JSON: labels, lo, hi, grids, rounds) and renders the
same heatmaps: Agg backend, SVG into memory, text kept as text (svg.fonttype "none", as
plotters writes it), one vector cell per matrix cell (pcolormesh, like plotters' rects),
viridis with empty cells light grey (#DDDDDD), origin lower-left, dashed diagonal, a colour
bar, axis titles and labels thinned to every ceil(K/12)-th slice. Prints
"seconds_per_heatmap S": the best round's time over the number of heatmaps.
"""

import io
import json
import math
import sys
import time

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

plt.rcParams["svg.fonttype"] = "none"
plt.rcParams["svg.hashsalt"] = "drift"


def render(grid, labels, lo, hi, title):
    k = len(labels)
    data = np.ma.masked_invalid(np.array(grid, dtype=float))
    cmap = matplotlib.colormaps["viridis"].copy()
    cmap.set_bad("#DDDDDD")
    fig, ax = plt.subplots(figsize=(5.2, 4.6))
    mesh = ax.pcolormesh(
        np.arange(k + 1), np.arange(k + 1), data, cmap=cmap, vmin=lo, vmax=hi
    )
    ax.set_aspect("equal")
    ax.plot([0, k], [0, k], linestyle="--", color="black", linewidth=1, alpha=0.6)
    step = max(1, math.ceil(k / 12))
    shown = list(range(0, k, step))
    ax.set_xticks([n + 0.5 for n in shown], [labels[n] for n in shown], rotation=90)
    ax.set_yticks([n + 0.5 for n in shown], [labels[n] for n in shown])
    ax.set_xlabel("evaluated on")
    ax.set_ylabel("trained through")
    ax.set_title(title)
    fig.colorbar(mesh, ax=ax, label="accuracy")
    buf = io.StringIO()
    fig.savefig(buf, format="svg")
    plt.close(fig)
    return len(buf.getvalue())


def main():
    with open(sys.argv[1]) as f:
        d = json.load(f)
    grids = [
        [[math.nan if v is None else v for v in row] for row in g] for g in d["grids"]
    ]
    labels, lo, hi = d["labels"], d["lo"], d["hi"]

    def render_all():
        return sum(
            render(g, labels, lo, hi, f"model-{n:02d}") for n, g in enumerate(grids)
        )

    render_all()  # warm-up: font cache, imports of backends
    best = math.inf
    size = 0
    for _ in range(d["rounds"]):
        start = time.perf_counter()
        size = render_all()
        best = min(best, time.perf_counter() - start)
    print(f"matplotlib {matplotlib.__version__}: {size // len(grids) // 1024} KiB SVG each")
    print(f"seconds_per_heatmap {best / len(grids):.6f}")


if __name__ == "__main__":
    main()
