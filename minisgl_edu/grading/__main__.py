"""Grade a student's notebook from the shell: run all its code cells, then every exercise it names.

    python -m minisgl_edu.grading exercises/01_finish.ipynb [more.ipynb ...]

Every code cell runs, in order, with its output captured and under a time limit (an endless loop
in a cell stops that cell, not the grader); a cell that raises is skipped. While they run,
`minisgl_edu.grading.check` is replaced by a recorder, so a `check("abort", abort_request)` in a
cell (even in the same cell as the solution) only notes which exercise the notebook is for; the
grader then grades each noted exercise once, on the symbol that exercise expects (e.g.
`abort_request`) as the notebook left it. Prints a table and a last line `score: X/Y`; exits 0
on full marks, 1 otherwise. The student's code runs in this process: use a throw-away account.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import linecache
import re
import sys
import types
from typing import Any

import minisgl_edu.grading as grading
from minisgl_edu.grading import EXERCISES, exercise, grade
from minisgl_edu.grading.limits import CaseTimeout, time_limit

CHECK_CALL = re.compile(r"""check\(\s*["'](\w+)["']""")
CELL_LIMIT = 300.0  # seconds per cell; generous: a cell may load the model or run a benchmark


def _source(cell) -> str:
    # IPython magics and shell escapes are not Python; the grader needs none of them
    return "\n".join(line for line in cell.source.splitlines() if not line.lstrip().startswith(("%", "!")))


def notebook_namespace(path: str) -> tuple[dict, list[str], dict[str, Any]]:
    """Run the notebook's code cells; return their globals, the exercises its `check(...)` calls
    name (called, or only written in a cell that failed first), and the object each call passed."""
    import nbformat

    nb = nbformat.read(path, as_version=4)
    # A real module for the student's globals: a @dataclass defined in a cell looks its class's
    # module up in sys.modules, as it would in a notebook kernel's __main__.
    module = types.ModuleType("__student__")
    sys.modules[module.__name__] = module
    ns: dict = module.__dict__
    names: list[str] = []
    passed: dict[str, Any] = {}

    def recording_check(name, impl=None, *args, **kwargs):
        if name not in names:
            names.append(name)
        passed[name] = impl

    real_check = grading.check
    grading.check = recording_check  # `from minisgl_edu.grading import check` now gets the recorder
    try:
        for n, cell in enumerate(c for c in nb.cells if c.cell_type == "code"):
            src = _source(cell)
            filename = f"{path} [code cell {n + 1}]"
            linecache.cache[filename] = (len(src), None, src.splitlines(True), filename)  # lines in feedback
            with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
                try:
                    with time_limit(CELL_LIMIT):
                        exec(compile(src, filename, "exec"), ns)
                except (Exception, SystemExit, CaseTimeout):
                    pass  # an unfinished stub, or a cell that needs something the grader does not run
            names += [m for m in CHECK_CALL.findall(src) if m not in names]
    finally:
        grading.check = real_check
    return ns, [n for n in names if n in EXERCISES], passed


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("notebooks", nargs="+")
    args = ap.parse_args(argv)
    rows, score, total = [], 0, 0
    for path in args.notebooks:
        ns, names, passed = notebook_namespace(path)
        if not names:
            rows.append((path, "-", 0, 0, 'no check("<exercise>", ...) call found'))
        for name in names:
            mod = exercise(name)
            impl = ns.get(mod.SYMBOL, passed.get(name))
            if impl is None:
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
