"""Grade a folder of submissions into a CSV gradebook, each notebook in a limited child process.

Where this sits in the course: `python -m minisgl_edu.grading --batch submissions/` (see
`__main__.py`) lands here. A submission is any `.ipynb` file under the folder; the student is the
first folder below it (`submissions/alice/02_abort.ipynb` is alice's), or the file's name for a
notebook that lies directly in it. `sandbox.py` grades each one; a notebook that hangs, crashes or
attacks its grader scores 0 and the next one is graded.
"""

from __future__ import annotations

import csv
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Iterator, Optional

from minisgl_edu.grading.limits import ProcessLimits
from minisgl_edu.grading.notebook import NotebookGrade
from minisgl_edu.grading.sandbox import grade_in_child

GRADEBOOK_COLUMNS = ["student", "notebook", "exercise", "score", "total", "notes"]


@dataclass
class Submission:
    student: str
    path: Path


def find_submissions(folder: Path) -> list[Submission]:
    """Every notebook under `folder`, in a stable order (checkpoints of JupyterLab left out)."""
    found = []
    for path in sorted(folder.rglob("*.ipynb")):
        rel = path.relative_to(folder)
        if ".ipynb_checkpoints" in rel.parts:
            continue
        student = rel.parts[0] if len(rel.parts) > 1 else path.stem
        found.append(Submission(student, path))
    return found


def gradebook_rows(student: str, result: NotebookGrade) -> Iterator[dict]:
    """One row per exercise graded (one row with an empty exercise when there was none)."""
    if not result.grades:
        yield dict(student=student, notebook=result.notebook, exercise="", score=0, total=0, notes=result.problem)
    for g in result.grades:
        failed = [r.name for r in g.results if not r.passed]
        notes = result.problem or (f"failed: {', '.join(failed)}" if failed else "")
        yield dict(
            student=student, notebook=result.notebook, exercise=g.exercise, score=g.score, total=g.total, notes=notes
        )


def grade_folder(
    folder: Path,
    gradebook: Path,
    limits: ProcessLimits = ProcessLimits(),
    on_result: Optional[Callable[[Submission, NotebookGrade], None]] = None,
) -> list[tuple[Submission, NotebookGrade]]:
    """Grade every submission under `folder`, one at a time, and write the gradebook CSV.

    The gradebook is written again after each submission, so that it holds everything graded so
    far even if the batch is interrupted."""
    graded = []
    for sub in find_submissions(folder):
        result = grade_in_child(str(sub.path), limits)
        graded.append((sub, result))
        if on_result is not None:
            on_result(sub, result)
        _write_gradebook(gradebook, graded)
    if not graded:
        _write_gradebook(gradebook, graded)
    return graded


def _write_gradebook(path: Path, graded: list[tuple[Submission, NotebookGrade]]) -> None:
    tmp = path.with_name(path.name + ".tmp")
    with open(tmp, "w", newline="") as f:
        writer = csv.DictWriter(f, GRADEBOOK_COLUMNS)
        writer.writeheader()
        for sub, result in graded:
            writer.writerows(gradebook_rows(sub.student, result))
    tmp.replace(path)  # a reader never sees half a file
