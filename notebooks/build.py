"""Write (and run) the course notebooks from their sources in notebooks/src/.

Each source module `src/NN_name.py` defines `CELLS`, a list of `md(...)` and `code(...)` cells.
This script turns it into `NN_name.ipynb` (kernelspec python3), executes it top to bottom with
nbclient so the stored outputs are the ones `pytest --nbval` compares against, and prints how
long each notebook took.

    .venv/bin/python notebooks/build.py            # every notebook
    .venv/bin/python notebooks/build.py 04 06      # only those whose name starts so
    .venv/bin/python notebooks/build.py --no-exec  # write without running (outputs empty)
    .venv/bin/python notebooks/build.py --dir solutions   # another folder laid out the same way
"""

from __future__ import annotations

import importlib.util
import sys
import time
from pathlib import Path

import nbformat

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE / "src"))  # for `from cells import md, code` (other folders may reuse it)


def load_cells(src: Path) -> list:
    spec = importlib.util.spec_from_file_location(src.stem, src)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod.CELLS


def build(src: Path, execute: bool, out_dir: Path = HERE) -> float:
    nb = nbformat.v4.new_notebook()
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    nb.metadata["language_info"] = {"name": "python"}
    for n, (kind, text) in enumerate(load_cells(src)):
        cell = nbformat.v4.new_markdown_cell(text) if kind == "md" else nbformat.v4.new_code_cell(text)
        cell["id"] = f"{src.stem[:2]}-{n:02d}"  # stable ids: rebuilding does not churn the diff
        nb.cells.append(cell)
    t0 = time.perf_counter()
    if execute:
        from nbclient import NotebookClient

        NotebookClient(nb, timeout=600, kernel_name="python3", resources={"metadata": {"path": str(out_dir)}}).execute()
    seconds = time.perf_counter() - t0
    out = out_dir / f"{src.stem}.ipynb"
    nbformat.write(nb, out)
    return seconds


def main(argv: list[str]) -> int:
    unknown = [a for a in argv if a.startswith("-") and a not in ("--no-exec", "--dir")]
    if unknown:  # --help too: print the usage rather than rebuild every notebook
        print(__doc__, file=sys.stderr if unknown != ["--help"] and unknown != ["-h"] else sys.stdout)
        return 0 if unknown in (["--help"], ["-h"]) else 2
    execute = "--no-exec" not in argv
    out_dir = HERE
    if "--dir" in argv:
        i = argv.index("--dir")
        out_dir = Path(argv[i + 1]).resolve()
        argv = argv[:i] + argv[i + 2 :]
        sys.path.insert(0, str(out_dir / "src"))
    prefixes = [a for a in argv if not a.startswith("--")]
    for src in sorted((out_dir / "src").glob("[0-9][0-9]_*.py")):
        if prefixes and not any(src.stem.startswith(p) for p in prefixes):
            continue
        seconds = build(src, execute, out_dir)
        print(f"{src.stem}.ipynb  {seconds:.1f} s", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
