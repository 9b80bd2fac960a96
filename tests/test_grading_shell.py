"""The shell grader: the same report as `check()`, JSON lines, and the batch mode whose child
processes keep a hostile notebook from harming the batch.

The hostile notebooks are generated here, a few cells each. None of them loads the model (they
define no working answer), and the limits are small, so each child takes seconds; the assertions
are about what the grader reports, never about how fast anything ran.
"""

from __future__ import annotations

import csv
import json
import os
import time
from pathlib import Path

import nbformat
import pytest

from minisgl_edu.grading import exercise, grade
from minisgl_edu.grading.__main__ import main
from minisgl_edu.grading.limits import MiB, ProcessLimits
from minisgl_edu.grading.notebook import notebook_namespace
from minisgl_edu.grading.sandbox import grade_in_child

IMPORTS = "import os, signal, sys, time\nfrom minisgl_edu.grading import check"
STUB = "class PageAllocator:\n    def __init__(self, num_pages):\n        raise NotImplementedError('not written yet')"
CHECK = 'check("allocator", PageAllocator)'
NUM_CASES = len(exercise("allocator").CASES)


def write_notebook(path: Path, *cells: str) -> str:
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell(c) for c in cells]
    path.parent.mkdir(parents=True, exist_ok=True)
    nbformat.write(nb, str(path))
    return str(path)


def running(pid: int) -> bool:
    """Alive and not a zombie (a container's init may be slow to reap)."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            state = f.read().rsplit(")", 1)[1].split()[0]
    except (FileNotFoundError, ProcessLookupError):
        return False
    return state not in ("Z", "X")


def gone_soon(pids: list[int], seconds: float = 20.0) -> bool:
    """True once none of `pids` runs; a killed process can take a moment to exit."""
    deadline = time.monotonic() + seconds
    while any(running(p) for p in pids):
        if time.monotonic() > deadline:
            return False
        time.sleep(0.1)
    return True


def scored_zero(result) -> bool:
    return result.total == NUM_CASES and result.score == 0


# --- the report and --json ----------------------------------------------------------------------


def test_shell_report_is_what_check_prints(tmp_path, capsys):
    path = write_notebook(tmp_path / "nb.ipynb", IMPORTS, STUB, CHECK)
    assert main([path]) == 1
    out = capsys.readouterr().out
    ns, _, _ = notebook_namespace(path)
    expected = grade("allocator", ns["PageAllocator"]).report()  # what check() prints
    assert expected in out
    for case in exercise("allocator").CASES:
        assert f"  ✗ {case.name}\n      not implemented yet" in out
        assert f"hint: {case.hint}" in out
    assert out.strip().splitlines()[-1] == f"score: 0/{NUM_CASES}"


def test_json_prints_one_line_per_notebook_and_case(tmp_path, capfd):
    noisy = "os.write(1, b'written below print\\n')\nprint('printed')"  # must not land between the lines
    graded = write_notebook(tmp_path / "a.ipynb", IMPORTS, noisy, STUB, CHECK)
    unchecked = write_notebook(tmp_path / "b.ipynb", IMPORTS, "x = 1")
    assert main(["--json", graded, unchecked]) == 1
    lines = capfd.readouterr().out.strip().splitlines()
    records = [json.loads(line) for line in lines]  # every line is JSON
    assert len(records) == NUM_CASES + 1
    cases = [r for r in records if r["notebook"] == graded]
    assert [r["case"] for r in cases] == [c.name for c in exercise("allocator").CASES]
    for r in cases:
        assert r["exercise"] == "allocator" and r["passed"] is False
        assert "not implemented yet" in r["message"] and r["hint"]
        assert (r["score"], r["total"]) == (0, NUM_CASES)
    (other,) = [r for r in records if r["notebook"] == unchecked]
    assert other["case"] is None and "no check(" in other["message"]


# --- batch mode: each notebook in a limited child process ------------------------------------------


def test_batch_writes_a_gradebook_and_survives_hostile_notebooks(tmp_path, capsys):
    subs = tmp_path / "submissions"
    stub = write_notebook(subs / "alice" / "04.ipynb", IMPORTS, STUB, CHECK)
    write_notebook(subs / "bob" / "04.ipynb", IMPORTS, "os.kill(os.getppid(), signal.SIGKILL)", CHECK)
    write_notebook(subs / "carol" / "04.ipynb", IMPORTS, "for f in os.listdir('.'):\n    os.remove(f)", CHECK)
    write_notebook(subs / "dave.ipynb", IMPORTS, "os.killpg(0, signal.SIGKILL)", CHECK)
    before = {p: p.read_bytes() for p in subs.rglob("*.ipynb")}
    gradebook = tmp_path / "grades.csv"

    assert main(["--batch", str(subs), "--gradebook", str(gradebook), "--wall", "120"]) == 1
    out = capsys.readouterr().out
    rows = {r["student"]: r for r in csv.DictReader(gradebook.open())}
    assert sorted(rows) == ["alice", "bob", "carol", "dave"]  # the batch went on after each
    for row in rows.values():
        assert (row["exercise"], row["score"], row["total"]) == ("allocator", "0", str(NUM_CASES))
    assert rows["alice"]["notes"].startswith("failed: ")
    assert "kill its parent" in rows["bob"]["notes"] and "kill its parent" in rows["dave"]["notes"]
    assert "killed by SIGKILL" in out
    assert f"✗ {exercise('allocator').CASES[0].name}" in out  # the students' reports are printed too
    assert {p: p.read_bytes() for p in subs.rglob("*.ipynb")} == before  # graded copies, not the originals
    assert Path(stub).exists()


def test_batch_json_names_the_student(tmp_path, capsys):
    subs = tmp_path / "submissions"
    write_notebook(subs / "erin" / "04.ipynb", IMPORTS, STUB, CHECK)
    main(["--batch", str(subs), "--gradebook", str(tmp_path / "g.csv"), "--json", "--wall", "120"])
    records = [json.loads(line) for line in capsys.readouterr().out.strip().splitlines()]
    assert len(records) == NUM_CASES and all(r["student"] == "erin" for r in records)


def test_an_endless_loop_is_stopped_at_the_wall_time(tmp_path):
    pid_file = tmp_path / "pid"
    loop = (
        f"open({str(pid_file)!r}, 'w').write(str(os.getpid()))\n"
        "while True:  # even the per-cell timer's exception is swallowed\n"
        "    try:\n        while True:\n            pass\n    except BaseException:\n        pass"
    )
    path = write_notebook(tmp_path / "loop.ipynb", IMPORTS, loop, CHECK)
    # The limit counts the child's start-up too (Python, torch, the notebook's first cells): on a
    # busy machine 5 s can pass before the loop is reached. The loop writes its pid when it starts;
    # until it has, the limit stopped the start-up, not the loop, so try again with a longer one.
    for wall_s in (5, 15, 45, 135):
        result = grade_in_child(path, ProcessLimits(wall_s=wall_s))
        if pid_file.exists():
            break
    assert scored_zero(result) and f"wall-time limit of {wall_s} s" in result.problem
    assert "wall-time limit" in result.grades[0].results[0].message
    assert gone_soon([int(pid_file.read_text())])


def test_cpu_time_is_limited(tmp_path):
    spin = "while True:\n    try:\n        while True:\n            pass\n    except BaseException:\n        pass"
    path = write_notebook(tmp_path / "spin.ipynb", IMPORTS, spin, CHECK)
    result = grade_in_child(path, ProcessLimits(wall_s=300, cpu_s=2))
    assert scored_zero(result) and "CPU-time limit of 2 s" in result.problem


def test_memory_is_limited_and_grading_goes_on(tmp_path):
    marker = tmp_path / "stopped"
    hog = (
        "def hog():\n    kept = []\n    while True:\n        kept.append(bytearray(16 * 1024 * 1024))\n"
        f"try:\n    hog()\nexcept MemoryError:\n    open({str(marker)!r}, 'w').write('MemoryError')\n    raise"
    )
    path = write_notebook(tmp_path / "hog.ipynb", hog, IMPORTS, CHECK)
    result = grade_in_child(path, ProcessLimits(wall_s=120, memory_mb=1024))
    assert marker.read_text() == "MemoryError"  # the allocation failed in the child, not the machine
    assert scored_zero(result) and not result.problem
    assert "PageAllocator is not defined" in result.grades[0].results[0].message


def test_forked_processes_do_not_outlive_the_grading(tmp_path):
    pids = tmp_path / "pids"
    fork = (
        "for _ in range(3):\n    if os.fork() == 0:\n"
        f"        open({str(pids)!r}, 'a').write(f'{{os.getpid()}}\\n')\n"
        "        time.sleep(600)\n        os._exit(0)\n"
        "time.sleep(0.5)"
    )
    path = write_notebook(tmp_path / "fork.ipynb", IMPORTS, fork, CHECK)
    result = grade_in_child(path, ProcessLimits(wall_s=120))
    assert scored_zero(result)
    children = [int(p) for p in pids.read_text().split()]
    assert len(children) == 3 and gone_soon(children)


def test_the_child_runs_under_the_limits_in_a_fresh_directory(tmp_path):
    report = tmp_path / "seen.json"
    probe = (
        "import json, resource\n"
        "seen = {name: resource.getrlimit(getattr(resource, name))[0]"
        " for name in ['RLIMIT_CPU', 'RLIMIT_AS', 'RLIMIT_NOFILE', 'RLIMIT_FSIZE']}\n"
        "seen.update(cwd=os.getcwd(), files=os.listdir('.'), tmpdir=os.environ['TMPDIR'])\n"
        f"open({str(report)!r}, 'w').write(json.dumps(seen))"
    )
    path = write_notebook(tmp_path / "probe.ipynb", IMPORTS, probe, CHECK)
    limits = ProcessLimits(wall_s=120, cpu_s=77, memory_mb=3000, open_files=99, file_mb=55)
    grade_in_child(path, limits)
    seen = json.loads(report.read_text())
    assert (seen["RLIMIT_CPU"], seen["RLIMIT_AS"], seen["RLIMIT_NOFILE"]) == (77, 3000 * MiB, 99)
    assert seen["RLIMIT_FSIZE"] == 55 * MiB
    assert seen["files"] == ["submission.ipynb"] and seen["tmpdir"] == seen["cwd"]
    assert not os.path.exists(seen["cwd"])  # removed after grading
    assert not seen["cwd"].startswith(str(tmp_path))


def test_a_file_that_is_not_a_notebook_scores_nothing(tmp_path):
    bad = tmp_path / "broken.ipynb"
    bad.write_text("{ not json")
    result = grade_in_child(str(bad), ProcessLimits(wall_s=30))
    assert result.total == 0 and "not a readable notebook" in result.problem


@pytest.mark.parametrize("argv", [[], ["--batch", "x", "y.ipynb"]])
def test_notebooks_or_one_batch_folder(argv, capsys):
    with pytest.raises(SystemExit):
        main(argv)
