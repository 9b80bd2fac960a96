"""Write exercises/ from solutions/: each solution region becomes a stub with a hint.

In a solution notebook, the code a student must write sits between two marker lines (the same
markers nbgrader uses, so the notebooks also work with nbgrader):

    ### BEGIN SOLUTION
    ### HINT: look at scheduler.waiting and scheduler.running     (optional, becomes the message)
    ...the solution...
    ### END SOLUTION

In the exercise the region becomes `raise NotImplementedError("<hint>")` at the same indentation.
Outputs are cleared, so a student starts from a clean notebook. `--check` only compares.
"""

from __future__ import annotations

import copy
import json
from pathlib import Path

BEGIN, END, HINT = "### BEGIN SOLUTION", "### END SOLUTION", "### HINT:"
DEFAULT_HINT = "write your solution here"


def strip_solutions(source: str) -> str:
    out: list[str] = []
    inside = False
    hint = DEFAULT_HINT
    indent = ""
    for line in source.split("\n"):
        stripped = line.strip()
        if stripped.startswith(BEGIN):
            if inside:
                raise ValueError("nested ### BEGIN SOLUTION")
            inside, hint, indent = True, DEFAULT_HINT, line[: len(line) - len(line.lstrip())]
        elif stripped.startswith(END):
            if not inside:
                raise ValueError("### END SOLUTION without BEGIN")
            inside = False
            out.append(f"{indent}# YOUR CODE HERE")
            out.append(f"{indent}raise NotImplementedError({hint!r})")
        elif inside:
            if stripped.startswith(HINT):
                hint = stripped[len(HINT) :].strip()
        else:
            out.append(line)
    if inside:
        raise ValueError("### BEGIN SOLUTION without END")
    return "\n".join(out)


def exercise_notebook(solution: dict) -> dict:
    nb = copy.deepcopy(solution)
    for cell in nb["cells"]:
        src = "".join(cell["source"]) if isinstance(cell["source"], list) else cell["source"]
        if cell["cell_type"] == "code":
            cell["source"] = strip_solutions(src)
            cell["outputs"] = []
            cell["execution_count"] = None
        else:
            cell["source"] = src
    return nb


def render(nb: dict) -> str:
    return json.dumps(nb, indent=1, ensure_ascii=False, sort_keys=True) + "\n"


def build(solutions: Path, exercises: Path, check: bool = False) -> list[str]:
    """Build (or with check=True, compare) every exercise; returns the out-of-sync paths."""
    stale = []
    expected_names = set()
    for path in sorted(solutions.glob("*.ipynb")):
        target = exercises / path.name
        expected_names.add(path.name)
        text = render(exercise_notebook(json.loads(path.read_text())))
        if not target.exists() or target.read_text() != text:
            stale.append(str(target))
            if not check:
                exercises.mkdir(parents=True, exist_ok=True)
                target.write_text(text)
    for extra in sorted(exercises.glob("*.ipynb")):
        if extra.name not in expected_names:
            stale.append(f"{extra} (no solution for it)")
    return stale
