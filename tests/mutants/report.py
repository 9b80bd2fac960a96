"""Which phase of its grader catches each wrong answer of the mutation suite.

    .venv/bin/python tests/mutants/report.py [exercise ...]

For each file of tests/mutants/<exercise>/, the answer is graded on the hand-written cases that
need no model and on the generated phase (grading/explore.py); a line says which caught it and
the hint the first failed case showed. tests/test_grading_mutants.py checks the same against each
file's CAUGHT_BY.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

from minisgl_edu.grading import exercise, grade

MUTANTS = Path(__file__).resolve().parent


def _load(path: Path):
    spec = importlib.util.spec_from_file_location(f"mutant_{path.parent.name}_{path.stem}", path)
    mod = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = mod
    spec.loader.exec_module(mod)
    return mod


def report(name: str) -> None:
    grader = exercise(name)
    hand = [c.name for c in grader.CASES if c.hand_unit]
    generated = [c.name for c in grader.CASES if c.generated]
    print(f"{name}: {len(hand)} hand-written unit cases, {len(generated)} generated")
    for path in sorted((MUTANTS / name).glob("[0-9]*.py")):
        impl = getattr(_load(path), grader.SYMBOL)
        by_hand = [r for r in grade(name, impl, only=hand).results if not r.passed]
        by_gen = [r for r in grade(name, impl, only=generated).results if not r.passed]
        caught = "+".join(p for p, rs in (("hand", by_hand), ("generated", by_gen)) if rs) or "MISSED"
        first = (by_gen or by_hand)[:1]
        print(f"  {path.stem:48s} {caught:15s} {first[0].hint[:70] if first else ''}")


if __name__ == "__main__":
    names = sys.argv[1:] or sorted(
        p.name for p in MUTANTS.iterdir() if p.is_dir() and not p.name.startswith(("_", "."))
    )
    for n in names:
        report(n)
