"""The mutation suite: plausible wrong answers that each grader must catch, with the right words.

Every file `tests/mutants/<exercise>/<nn>_<name>.py` is a wrong answer written as a student
would write the notebook cell (it defines the exercise's SYMBOL), with module constants:

    MUST_FAIL = {"<case name>", ...}   # cases that must fail on it (at least one)
    MUST_SAY = "<substring>"           # must appear (any case) in a failed case's message or hint
    CAUGHT_BY = {"hand", "generated"}  # the phases that catch it, exactly: the hand-written cases,
                                       # the generated ones (grading/explore.py), or both
    HINT_SAYS = "<substring>"          # in the hint of a failed case: words that name this mistake
                                       # (at least 10 characters; the hint alone says what to fix)
    TIME_LIMIT = 5.0                   # optional: per-case limit it is graded with (answers that hang)

Each is graded in this one process (the model is loaded once; engine runs are shared). To keep
that quick, an answer runs every case that needs no model, and only those engine cases that its
MUST_FAIL names, without shrinking unless the words looked for are in no hand case's feedback
(tests/grading_support.py says why that changes no verdict). Every exercise directory present is collected; add a file to add a mistake.
`python tests/mutants/report.py` prints, per exercise, which phase catches each wrong answer.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest
from grading_support import failed_cases

from minisgl_edu.grading import EXERCISES, exercise, grade

pytestmark = pytest.mark.slow

MUTANTS = Path(__file__).resolve().parent / "mutants"
EXERCISE_DIRS = sorted(p for p in MUTANTS.iterdir() if p.is_dir() and not p.name.startswith(("_", ".")))


def _files():
    for d in EXERCISE_DIRS:
        for f in sorted(d.glob("[0-9]*.py")):
            yield pytest.param(d.name, f, id=f"{d.name}/{f.stem}", marks=getattr(pytest.mark, f"exercise_{d.name}"))


def phases(grader, case_names) -> set[str]:
    """Which phases the failed cases belong to: "generated" (grading/explore.py) or "hand"."""
    generated = {c.name for c in grader.CASES if c.generated}
    return {"generated" if name in generated else "hand" for name in case_names}


def _load(path: Path):
    spec = importlib.util.spec_from_file_location(f"mutant_{path.parent.name}_{path.stem}", path)
    mod = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = mod  # dataclasses and pickling look their module up there
    spec.loader.exec_module(mod)
    return mod


@pytest.mark.parametrize("d", EXERCISE_DIRS, ids=lambda p: p.name)
def test_each_exercise_has_six_different_mistakes(d):
    assert d.name in EXERCISES, f"tests/mutants/{d.name}: no such exercise (choose from {sorted(EXERCISES)})"
    files = sorted(d.glob("[0-9]*.py"))
    assert len(files) >= 6, f"{d.name}: only {len(files)} wrong answers"
    for f in files:
        mod = _load(f)
        assert (mod.__doc__ or "").strip(), f"{f.name}: say in its docstring what the mistake is and why it is wrong"


@pytest.mark.parametrize("name,path", list(_files()))
def test_wrong_answer_is_caught(name, path):
    mod = _load(path)
    grader = exercise(name)
    impl = getattr(mod, grader.SYMBOL)
    names = {c.name for c in grader.CASES}
    must_fail = set(mod.MUST_FAIL)
    assert must_fail and must_fail <= names, f"MUST_FAIL names unknown cases: {sorted(must_fail - names)}"
    run = [c.name for c in grader.CASES if not c.engine or c.name in must_fail]
    said = mod.MUST_SAY.lower()
    hint_says = getattr(mod, "HINT_SAYS", "")
    assert len(hint_says) >= 10, f"{path.name}: give HINT_SAYS, words of the hint that name this mistake"

    def says(hand):  # the words this test looks for, all in the hand cases' feedback
        return any(said in (r.message + " " + r.hint).lower() for r in hand) and any(hint_says in r.hint for r in hand)

    # shrinking (the scene a generated case shows) only where the words are not in the hand cases
    res, failed = failed_cases(name, impl, run, says, time_limit=getattr(mod, "TIME_LIMIT", None))
    report = "\n".join(f"{r.name}: {r.message}\nhint: {r.hint}" for r in failed.values())
    assert res.score < res.total, res.report()
    assert must_fail <= set(failed), f"expected to fail: {sorted(must_fail - set(failed))}\n{report}"
    assert set(mod.CAUGHT_BY) == phases(grader, failed), (
        f"CAUGHT_BY {sorted(mod.CAUGHT_BY)}, caught by {sorted(phases(grader, failed))}"
    )
    assert any(said in (r.message + " " + r.hint).lower() for r in failed.values()), (
        f"no failed case says {mod.MUST_SAY!r}\n{report}"
    )
    assert any(hint_says in r.hint for r in failed.values()), f"no failed case's hint says {hint_says!r}\n{report}"
    for r in failed.values():
        assert "Traceback" not in r.message and "minisgl_edu/" not in r.message, report
        # a message that points at code points at the student's file, never at a package frame
        assert r.where is None or r.where.startswith(str(path)), f"{r.name}: points at {r.where}\n{report}"


# A case often checks several things; the hint a failure shows is the one of the check that failed
# (grading/core.py: Mistake), not the case's. For these wrong answers the case's own hint names
# another mistake than theirs: (exercise, mutant, case, words the hint it shows must hold).
OWN_HINTS = [
    ("finish", "09_returns_true", "stop string inside a token", "never True/False"),
    ("finish_min_tokens", "01_holds_back_one_too_many", "stretch: stop strings wait too", "== min_tokens does not"),
    ("finish_min_tokens", "08_drops_the_held_back_eos", "stretch: EOS waits for min_tokens", "req.output_ids as it is"),
    ("detokenizer", "04_stop_in_newest_piece", "stop string inside a token", "all the text not yet returned"),
    ("detokenizer", "09_returns_none", "characters spanning tokens", "never None"),
    ("detokenizer_include_stop", "03_shows_it_twice", "stretch: characters spanning tokens", "nothing left"),
    ("allocator", "05_wrong_exception", "exact fit, then nothing left", "raise OutOfPages"),
    ("allocator", "06_num_free_method", "free and reuse", "@property"),
    ("allocator_contiguous", "09_off_by_one_rest", "stretch: best fit, not first fit", "(start + n, length - n)"),
    ("prefix_cache", "02_insert_counts_new_pages", "leaves first", "what insert returns"),
    ("logits_chain", "03_repetition_subtracts", "logit_bias after the penalties", "logit / p when positive"),
    ("logits_chain_min_p", "01_min_p_absolute", "stretch: min_p at the row's temperature", "p >= min_p * max(p)"),
    ("verify", "07_pages_rounded_down", "ignore_eos", "pages_for(total, page_size)"),
    ("schedule", "12_empty_batch", "first come, first served", "when there is nothing to do"),
    ("abort", "03_no_message", "abort while waiting", "tell the detokenizer"),
    ("abort_to_cache", "09_inserts_twice", "stretch: decoding, full pages only", "insert once"),
]


@pytest.mark.parametrize(
    "name,stem,case,hint",
    [
        pytest.param(*row, id=f"{row[0]}/{row[1]}", marks=getattr(pytest.mark, f"exercise_{row[0]}"))
        for row in OWN_HINTS
    ],
)
def test_a_failed_check_shows_the_hint_of_its_mistake(name, stem, case, hint):
    grader = exercise(name)
    assert case != hint and hint not in next(c.hint for c in grader.CASES if c.name == case), "the case's own hint"
    impl = getattr(_load(MUTANTS / name / f"{stem}.py"), grader.SYMBOL)
    (r,) = grade(name, impl, only=[case]).results
    assert not r.passed and hint in r.hint, f"{case}: {r.message}\nhint: {r.hint}"
