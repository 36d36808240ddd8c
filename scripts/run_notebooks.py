"""Executes the Rust notebooks headless (nbclient + the evcxr kernel); see scripts/run-notebooks.

Each notebook runs in its own kernel, one after another, from its own folder (so its
`:dep drift = { path = ".." }` finds the crate). A cell that fails to compile, returns an
error or panics stops its notebook; the runner names the notebook, the cell and the error,
goes on with the next notebook and exits 1. The executed copies (outputs included) are
written to --out, also when a cell failed, and to HTML with --html.

Per notebook the kernel gets a fixed EVCXR_TMPDIR (a second run reuses its build instead
of compiling again; two kernels sharing one crash) seeded with the project's Cargo.lock
(the notebook builds the versions the project was tested with, offline), and a config
folder whose prelude makes a panic fail its cell (notebooks/evcxr/headless/prelude.rs).
"""

import argparse
import os
import shutil
import sys
import time
from pathlib import Path

import nbformat
from nbclient import NotebookClient
from nbclient.exceptions import CellExecutionError, CellTimeoutError, DeadKernelError

REPO = Path(__file__).resolve().parent.parent
CACHE = Path(os.environ.get("DRIFT_CACHE", Path.home() / ".cache" / "drift"))
IMAGE_TYPES = ("image/svg+xml", "image/png")


def parse_args():
    p = argparse.ArgumentParser(
        prog="scripts/run-notebooks",
        description="Execute the Rust notebooks headless; exit 1 naming any failing cell.",
    )
    p.add_argument(
        "notebooks",
        nargs="*",
        type=Path,
        help="notebooks to run (default: notebooks/*.ipynb, in name order)",
    )
    p.add_argument(
        "--out",
        type=Path,
        default=CACHE / "notebooks" / "executed",
        help="folder for the executed copies (default: %(default)s)",
    )
    p.add_argument("--html", action="store_true", help="also write each executed copy as HTML")
    p.add_argument(
        "--timeout",
        type=int,
        default=3600,
        help="seconds one cell may take; the first cell of a cold run compiles the crate "
        "(default: %(default)s)",
    )
    return p.parse_args()


def needs(nb):
    """What the notebook declares it needs (`metadata.drift.needs`), e.g. ["torch"]."""
    return nb.metadata.get("drift", {}).get("needs", [])


def kernel_env(name):
    """The evcxr folders of notebook `name`, set in os.environ for the kernel it starts."""
    tmpdir = CACHE / "notebooks" / "kernels" / name
    tmpdir.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(REPO / "Cargo.lock", tmpdir / "Cargo.lock")
    config = CACHE / "notebooks" / "config"
    config.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(REPO / "notebooks" / "evcxr" / "init.evcxr", config / "init.evcxr")
    shutil.copyfile(
        REPO / "notebooks" / "evcxr" / "headless" / "prelude.rs", config / "prelude.rs"
    )
    os.environ["EVCXR_TMPDIR"] = str(tmpdir)
    os.environ["EVCXR_CONFIG_DIR"] = str(config)


def cell_text(cell, limit=400):
    text = "".join(cell.source) if isinstance(cell.source, list) else cell.source
    return text if len(text) <= limit else text[:limit] + " ..."


def output_text(cell, limit=4000):
    """The text a cell printed (streams and errors), last `limit` characters."""
    parts = []
    for out in cell.get("outputs", []):
        if out.output_type == "stream":
            parts.append(out.text)
        elif out.output_type == "error":
            parts.append(f"{out.ename}: {out.evalue}")
    text = "".join(parts).strip()
    return text[-limit:]


def figures(nb):
    return sum(
        1
        for cell in nb.cells
        for out in cell.get("outputs", [])
        if any(t in out.get("data", {}) for t in IMAGE_TYPES)
    )


def run(path, args):
    """Runs one notebook; returns (status, message)."""
    nb = nbformat.read(path, as_version=4)
    missing = [n for n in needs(nb) if n == "torch" and not os.environ.get("LIBTORCH")]
    if missing:
        return "skipped", 'needs libtorch: run `eval "$(scripts/libtorch-env)"` first'
    kernel_env(path.stem)
    client = NotebookClient(
        nb,
        timeout=args.timeout,
        kernel_name="rust",
        resources={"metadata": {"path": str(path.parent)}},
    )
    failure = None
    code_index = 0
    with client.setup_kernel():
        for index, cell in enumerate(nb.cells):
            if cell.cell_type != "code":
                continue
            code_index += 1
            try:
                client.execute_cell(cell, index)
            except (CellExecutionError, CellTimeoutError, DeadKernelError) as e:
                reason = output_text(cell) or str(e).strip().splitlines()[-1]
                failure = (
                    f"cell {index + 1} (code cell {code_index}) failed:\n"
                    f"--- cell source ---\n{cell_text(cell)}\n"
                    f"--- error ---\n{reason}"
                )
                break
    write(nb, path, args)
    if failure:
        return "failed", failure
    return "ok", f"{figures(nb)} inline figures"


def write(nb, path, args):
    args.out.mkdir(parents=True, exist_ok=True)
    nbformat.write(nb, args.out / path.name)
    if args.html:
        from nbconvert import HTMLExporter

        html, _ = HTMLExporter().from_notebook_node(nb)
        (args.out / (path.stem + ".html")).write_text(html, encoding="utf-8")


def main():
    args = parse_args()
    paths = args.notebooks or sorted((REPO / "notebooks").glob("*.ipynb"))
    if not paths:
        sys.exit("run-notebooks: no notebooks under notebooks/")
    failed = []
    counts = {}
    started = time.monotonic()
    for path in paths:
        path = path.resolve()
        if not path.is_file():
            sys.exit(f"run-notebooks: {path}: no such notebook")
        label = os.path.relpath(path, Path.cwd())
        print(f"run-notebooks: {label} ...", flush=True)
        t0 = time.monotonic()
        status, message = run(path, args)
        seconds = time.monotonic() - t0
        print(f"run-notebooks: {label}: {status} in {seconds:.1f} s: {message}", flush=True)
        counts[status] = counts.get(status, 0) + 1
        if status == "failed":
            failed.append(label)
    total = time.monotonic() - started
    plural = "" if len(paths) == 1 else "s"
    tally = ", ".join(f"{n} {status}" for status, n in sorted(counts.items()))
    print(
        f"run-notebooks: {len(paths)} notebook{plural} ({tally}) in {total:.1f} s; "
        f"executed copies in {args.out}"
    )
    if failed:
        print(f"run-notebooks: FAILED: {', '.join(failed)}", file=sys.stderr)
        sys.exit(1)


if __name__ == "__main__":
    main()
