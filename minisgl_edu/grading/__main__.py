"""Grade students' notebooks from the shell: what `check()` prints in the notebook, per case.

    python -m minisgl_edu.grading exercises/01_finish.ipynb [more.ipynb ...]
    python -m minisgl_edu.grading --json alice/02_abort.ipynb           # one JSON line per case
    python -m minisgl_edu.grading --batch submissions/ --gradebook grades.csv

Every code cell of a notebook runs, in order, with its output captured and under a time limit (a
cell that raises is skipped). While they run, `minisgl_edu.grading.check` is replaced by a
recorder, so a `check("abort", abort_request)` in a cell (even in the same cell as the solution)
only notes which exercise the notebook is for; the grader then grades each noted exercise once,
on the symbol that exercise expects (e.g. `abort_request`) as the notebook left it, and prints
for each exactly what `check()` prints: ✓ or ✗ per case, the message and the hint of each
failure, `score: X/Y`. The last line is the score over all notebooks; the exit status is 0 on
full marks, 1 otherwise.

Named notebooks are graded in this process: their code runs with your rights. `--batch` grades
every notebook under a folder, each in a child process of its own with limits on wall time, CPU
time, memory, open files and processes, in a fresh temporary directory (see sandbox.py), and
writes a CSV gradebook. `docs/instructors.md` says what those limits do and do not protect.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import sys
from pathlib import Path
from typing import IO, Iterator

from minisgl_edu.grading.limits import ProcessLimits
from minisgl_edu.grading.notebook import NotebookGrade, grade_notebook, notebook_namespace, to_records

__all__ = ["main", "notebook_namespace"]


def _parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(
        prog="python -m minisgl_edu.grading", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("notebooks", nargs="*", help="notebooks to grade in this process")
    ap.add_argument("--json", action="store_true", help="print one JSON line per notebook and case instead of text")
    ap.add_argument("--batch", metavar="DIR", help="grade every .ipynb under DIR, each in a limited child process")
    ap.add_argument("--gradebook", metavar="CSV", default="gradebook.csv", help="where --batch writes its CSV")
    d = ProcessLimits()
    ap.add_argument("--wall", type=float, default=d.wall_s, help=f"seconds per notebook (default {d.wall_s:g})")
    ap.add_argument("--cpu", type=int, default=d.cpu_s, help=f"CPU seconds per notebook (default {d.cpu_s})")
    ap.add_argument("--memory-mb", type=int, default=d.memory_mb, help=f"address space (default {d.memory_mb})")
    ap.add_argument("--open-files", type=int, default=d.open_files, help=f"(default {d.open_files})")
    ap.add_argument("--processes", type=int, default=d.processes, help=f"tasks it may add (default {d.processes})")
    return ap


@contextlib.contextmanager
def json_stdout() -> Iterator[IO[str]]:
    """A stream for the JSON lines, on stdout; meanwhile file descriptor 1 points at stderr, so
    that output written below Python's `print` (a C library, `os.write(1, ...)` in a cell) lands
    there instead of between the lines."""
    sys.stdout.flush()
    saved = os.dup(1)
    os.dup2(2, 1)
    stream = os.fdopen(os.dup(saved), "w", encoding="utf-8")
    try:
        yield stream
    finally:
        stream.flush()
        stream.close()
        os.dup2(saved, 1)
        os.close(saved)


def _print_json(stream: IO[str], result: NotebookGrade, **extra) -> None:
    for record in to_records(result, **extra):
        stream.write(json.dumps(record, ensure_ascii=False) + "\n")
    stream.flush()


def _summary(results: list[NotebookGrade]) -> str:
    """The table at the end: one row per notebook and exercise, then the total score line."""
    width = max([len(r.notebook) for r in results] + [8])
    ex = max([len(g.exercise) for r in results for g in r.grades] + [8])
    lines = [f"{'notebook':<{width}}  {'exercise':<{ex}} score"]
    for r in results:
        if not r.grades:
            lines.append(f"{r.notebook:<{width}}  {'-':<{ex}} 0/0    {r.problem}")
        for g in r.grades:
            lines.append(f"{r.notebook:<{width}}  {g.exercise:<{ex}} {g.score}/{g.total}")
    score, total = sum(r.score for r in results), sum(r.total for r in results)
    lines.append(f"score: {score}/{total}")
    return "\n".join(lines)


def _grade_here(paths: list[str], as_json: bool) -> list[NotebookGrade]:
    results = []
    if as_json:
        with json_stdout() as stream:
            for path in paths:
                results.append(grade_notebook(path))
                _print_json(stream, results[-1])
        return results
    for path in paths:
        results.append(grade_notebook(path))
        print(results[-1].report(), flush=True)
    return results


def _grade_batch(args: argparse.Namespace) -> list[NotebookGrade]:
    from minisgl_edu.grading.batch import grade_folder

    limits = ProcessLimits(args.wall, args.cpu, args.memory_mb, args.open_files, args.processes)
    if os.geteuid() == 0 and not args.json:
        print("note: running as root, so the kernel ignores the limit on processes (see docs/instructors.md)")

    def show(sub, result):
        if args.json:
            _print_json(sys.stdout, result, student=sub.student)
        else:
            print(result.report(), flush=True)

    graded = grade_folder(Path(args.batch), Path(args.gradebook), limits, on_result=show)
    if not args.json:
        print(f"gradebook: {args.gradebook} ({len(graded)} notebooks)")
    return [result for _, result in graded]


def main(argv: list[str] | None = None) -> int:
    ap = _parser()
    args = ap.parse_args(argv)
    if bool(args.batch) == bool(args.notebooks):
        ap.error("name notebooks to grade, or one folder with --batch")
    results = _grade_batch(args) if args.batch else _grade_here(args.notebooks, args.json)
    if not args.json:
        print(_summary(results))
    score, total = sum(r.score for r in results), sum(r.total for r in results)
    return 0 if total and score == total else 1


if __name__ == "__main__":
    sys.exit(main())
