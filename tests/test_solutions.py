"""The solution notebooks' stored outputs: every score line full marks, no case failed.

`pytest --nbval solutions/` (make test) runs each solution notebook and checks that it prints
what it printed when it was built; it would as gladly reproduce a score of 12/13. So here, in
the stored outputs themselves: each solution's `check(...)` must have printed full marks. A
grader change that a solution no longer passes then fails here (after the notebook is rebuilt)
or in nbval (before), never silently.
"""

from __future__ import annotations

import re
from pathlib import Path

import nbformat
import pytest

SOLUTIONS = sorted((Path(__file__).resolve().parent.parent / "solutions").glob("[0-9][0-9]_*.ipynb"))


def printed(path: Path) -> str:
    """Everything the notebook's code cells printed, as stored."""
    nb = nbformat.read(path, as_version=4)
    return "".join(
        out.get("text", "") for cell in nb.cells if cell.cell_type == "code" for out in cell.get("outputs", [])
    )


def test_there_is_a_solution_per_exercise_notebook():
    exercises = sorted(p.name for p in (SOLUTIONS[0].parent.parent / "exercises").glob("[0-9][0-9]_*.ipynb"))
    assert exercises and [p.name for p in SOLUTIONS] == exercises


@pytest.mark.parametrize("path", SOLUTIONS, ids=lambda p: p.stem)
def test_every_stored_score_is_full_marks(path):
    text = printed(path)
    scores = re.findall(r"^score: (\d+)/(\d+)$", text, flags=re.M)
    assert scores, f"{path.name}: no score line stored (was it built without running?)"
    short = [f"{got}/{total}" for got, total in scores if got != total]
    assert not short, f"{path.name}: the solution scored {short}:\n{text[-3000:]}"
    assert "✗" not in text, f"{path.name}: a failed case is stored:\n{text[-3000:]}"
