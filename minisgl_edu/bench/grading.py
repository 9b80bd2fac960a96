"""How long each exercise's grader takes on a right answer, phase by phase.

    python -m minisgl_edu.bench.grading [exercise ...] [--repeat N]

Where this sits in the course: an instructor grading a class wants to know what a notebook costs.
Each exercise's reference answer is graded (`allow_reference=True`) with its hand-written unit
cases, its engine cases (the real model: the first exercise that needs it pays for loading it) and
its generated phase (grading/explore.py) timed apart; a right answer runs every case to the end,
so this is the longest grading takes (a wrong answer stops its generated search at the first
difference, then shrinks it). The figures go to docs/instructors.md with the machine's load; no
test depends on them.
"""

from __future__ import annotations

import argparse
import os
import time

from minisgl_edu.grading import EXERCISES, exercise, grade
from minisgl_edu.grading.own_code import references


def _phase(case) -> str:
    if case.generated:
        return "generated"
    return "engine" if case.engine else "unit"


def time_exercise(name: str, phases: tuple[str, ...] = ("unit", "engine", "generated")) -> dict[str, float]:
    """Seconds per phase for grading `name`'s reference answer once (phases not asked for: 0)."""
    mod = exercise(name)
    impl = references(mod)[0]
    seconds = {"unit": 0.0, "engine": 0.0, "generated": 0.0}
    for case in [c for c in mod.CASES if _phase(c) in phases]:
        start = time.perf_counter()
        res = grade(name, impl, allow_reference=True, only=[case.name])
        seconds[_phase(case)] += time.perf_counter() - start
        if not res.full_marks:
            raise SystemExit(f"{name}: the reference fails {case.name!r}:\n{res.report()}")
    return seconds


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("exercises", nargs="*", help=f"default: all ({', '.join(EXERCISES)})")
    ap.add_argument("--repeat", type=int, default=1, help="grade each this many times; the fastest is shown")
    ap.add_argument("--generated-only", action="store_true", help="time the generated phase alone (no model loaded)")
    args = ap.parse_args()
    names = args.exercises or list(EXERCISES)
    print(f"load average {' '.join(f'{x:.1f}' for x in os.getloadavg())}, {os.cpu_count()} cores")
    print(f"{'exercise':28s} {'cases':>5s} {'unit s':>7s} {'engine s':>8s} {'generated s':>11s}")
    for name in names:
        phases = ("generated",) if args.generated_only else ("unit", "engine", "generated")
        runs = [time_exercise(name, phases) for _ in range(args.repeat)]
        best = {k: min(r[k] for r in runs) for k in runs[0]}
        n = len(exercise(name).CASES)
        print(f"{name:28s} {n:5d} {best['unit']:7.1f} {best['engine']:8.1f} {best['generated']:11.1f}")


if __name__ == "__main__":
    main()
