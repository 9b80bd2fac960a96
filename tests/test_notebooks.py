"""The course notebooks: built from their sources, with the structure every chapter promises.

Running them is `pytest --nbval notebooks/` (slow: it loads the model in every notebook); these
checks are instant and catch a notebook that was edited by hand or not rebuilt after its source.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import nbformat
import pytest

NOTEBOOKS = Path(__file__).resolve().parent.parent / "notebooks"
SOURCES = sorted((NOTEBOOKS / "src").glob("[0-9][0-9]_*.py"))


def cells_of(src: Path) -> list[tuple[str, str]]:
    sys.path.insert(0, str(src.parent))
    try:
        spec = importlib.util.spec_from_file_location(f"nbsrc_{src.stem}", src)
        mod = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(mod)
    finally:
        sys.path.remove(str(src.parent))
    return mod.CELLS


def test_there_are_at_least_eight_chapters():
    assert len(SOURCES) >= 8
    assert sorted(p.stem for p in NOTEBOOKS.glob("[0-9][0-9]_*.ipynb")) == [p.stem for p in SOURCES]


@pytest.mark.parametrize("src", SOURCES, ids=lambda p: p.stem)
def test_notebook_matches_its_source_and_the_chapter_shape(src):
    nb = nbformat.read(NOTEBOOKS / f"{src.stem}.ipynb", as_version=4)
    assert nb.metadata.kernelspec.name == "python3"
    cells = cells_of(src)
    assert [(c.cell_type, c.source) for c in nb.cells] == [
        ("markdown" if k == "md" else "code", t) for k, t in cells
    ], f"{src.stem}.ipynb is out of date: run `.venv/bin/python notebooks/build.py {src.stem[:2]}`"
    first, last = nb.cells[0].source, nb.cells[-1].source
    assert "**Goal:**" in first and "**Expected time:**" in first
    assert "Exercises" in last and "exercises/" in last
    for cell in nb.cells:
        if cell.cell_type != "code":
            continue
        # Stored outputs are what nbval compares against: the notebook was run, and ran cleanly.
        assert cell.execution_count is not None, f"{src.stem}: a cell was never executed"
        assert not [o for o in cell.outputs if o.output_type == "error"], f"{src.stem}: a cell raised"
        shows_widget = any("application/vnd.jupyter.widget-view+json" in o.get("data", {}) for o in cell.outputs)
        if shows_widget:
            assert cell.source.startswith("# NBVAL_IGNORE_OUTPUT"), f"{src.stem}: widget cell not ignored by nbval"
