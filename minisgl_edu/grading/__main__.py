"""Grade a student's notebook from the shell: run its code cells, then every exercise it names.

    python -m minisgl_edu.grading exercises/01_finish.ipynb [more.ipynb ...]

An exercise is "named" by a `check("<exercise>", ...)` call in the notebook; the grader looks up
the exercise's symbol (e.g. `check_finish`) among the notebook's definitions. Prints a table and a
last line `score: X/Y`; exits 0 on full marks, 1 otherwise.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import re
import sys

from minisgl_edu.grading import EXERCISES, exercise, grade

CHECK_CALL = re.compile(r"""check\(\s*["'](\w+)["']""")


def notebook_namespace(path: str) -> tuple[dict, list[str]]:
    """Execute the notebook's code cells (output captured) and return their globals and the
    exercises its `check(...)` calls name. Cells that fail (an unfinished stub) are skipped."""
    import nbformat

    nb = nbformat.read(path, as_version=4)
    ns: dict = {"__name__": "__student__"}
    names: list[str] = []
    for cell in nb.cells:
        if cell.cell_type != "code":
            continue
        src = "\n".join(line for line in cell.source.splitlines() if not line.lstrip().startswith(("%", "!")))
        names += [n for n in CHECK_CALL.findall(src) if n in EXERCISES and n not in names]
        if CHECK_CALL.search(src):
            continue  # the grader runs the checks itself, once
        with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
            try:
                exec(compile(src, path, "exec"), ns)
            except Exception:
                pass
    return ns, names


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("notebooks", nargs="+")
    args = ap.parse_args(argv)
    rows, score, total = [], 0, 0
    for path in args.notebooks:
        ns, names = notebook_namespace(path)
        for name in names:
            mod = exercise(name)
            impl = ns.get(mod.SYMBOL)
            if impl is None:
                res = None
                n = len(mod.CASES)
                rows.append((path, name, 0, n, f"{mod.SYMBOL} is not defined"))
                total += n
                continue
            res = grade(name, impl)
            failed = ", ".join(r.name for r in res.results if not r.passed)
            rows.append((path, name, res.score, res.total, failed and f"failed: {failed}"))
            score += res.score
            total += res.total
    width = max([len(r[0]) for r in rows] + [8])
    print(f"{'notebook':<{width}}  {'exercise':<12} score  notes")
    for path, name, s, n, note in rows:
        print(f"{path:<{width}}  {name:<12} {s}/{n}    {note}")
    print(f"score: {score}/{total}")
    return 0 if total and score == total else 1


if __name__ == "__main__":
    sys.exit(main())
