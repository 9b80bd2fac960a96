"""python -m minisgl_edu.course build-exercises [--check]"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from minisgl_edu.course.exercises import build


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m minisgl_edu.course")
    sub = ap.add_subparsers(dest="cmd", required=True)
    b = sub.add_parser("build-exercises", help="write exercises/ from solutions/")
    b.add_argument("--check", action="store_true", help="only report exercises that are out of date")
    b.add_argument("--solutions", default="solutions")
    b.add_argument("--exercises", default="exercises")
    args = ap.parse_args(argv)
    stale = build(Path(args.solutions), Path(args.exercises), check=args.check)
    if args.check:
        for s in stale:
            print(f"out of sync: {s}")
        if stale:
            print("run: python -m minisgl_edu.course build-exercises")
            return 1
        print("exercises are in sync with solutions")
        return 0
    print(f"wrote {len(stale)} exercise notebook(s)" if stale else "nothing to do")
    return 0


if __name__ == "__main__":
    sys.exit(main())
