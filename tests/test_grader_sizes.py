"""Each grader file stays small enough to read in one sitting.

Students open a grader when a hint puzzles them, and every new probe is a reason to grow one. This
holds the line (a grader file at most 550 lines, a function under 90): a probe that does not fit goes
into a module of its own beside the others.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

GRADING = Path(__file__).resolve().parents[1] / "minisgl_edu" / "grading"
MAX_FILE_LINES = 550
MAX_FUNCTION_LINES = 89
FILES = sorted(GRADING.rglob("*.py"))


@pytest.mark.parametrize("path", FILES, ids=[str(p.relative_to(GRADING)) for p in FILES])
def test_grader_file_is_small(path: Path) -> None:
    text = path.read_text()
    assert text.count("\n") <= MAX_FILE_LINES, f"{path.name}: {text.count(chr(10))} lines"
    long = [
        f"{node.name} ({node.end_lineno - node.lineno + 1} lines)"
        for node in ast.walk(ast.parse(text))
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))
        and node.end_lineno - node.lineno + 1 > MAX_FUNCTION_LINES
    ]
    assert not long, f"{path.name}: functions over {MAX_FUNCTION_LINES} lines: {long}"
