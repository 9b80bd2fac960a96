"""The generated phase of a grader: many scenes inside the contract, the student's answer beside the
reference on each, and the first difference shrunk to a small scene the student can read.

Where this sits in the course: an exercise's grader first runs its hand-written cases (the named
scenes a student meets first), then the cases built here. A hand-picked case only visits the edges
its author thought of; a generated case draws hundreds of scenes from a strategy that covers the
whole contract (Hypothesis, the standard library for property-based testing), plays each one twice,
once with the package's reference and once with the student's answer, each on its own deep copy,
and compares everything the contract makes observable. On the first difference Hypothesis shrinks
the scene to the smallest one that still differs, and the case fails with that scene, what was
expected, what came back, the first field that differs and that field's hint.

A family writes three things:

* `scenes`: a Hypothesis strategy of scenes (plain data: ids, lengths, flags, small tensors);
* `play(impl, scene) -> dict`: runs one answer on the scene and returns what is observable, in the
  order a student should hear about it (the return value first, then state the answer must leave
  unchanged, then state it must change); the keys name the fields;
* `show(scene) -> str`: the scene in a few lines, as the failure prints it.

and calls `generated(name, scenes, play, show, reference, hints={field: hint}, examples=N)`, with
`fixed=[scene, ...]` for scenes a strategy rarely lines up (a situation a wrong answer is known to
hide in): they are played first, as they are, and the drawn scenes after them are the same as
without them.

Scores never change between runs: the scenes come from a fixed seed (`SCENE_SEED`, not the
clock) and the strategy alone (not from constants in whatever else is imported), nothing is
stored between runs (no example database), and no check looks at time (no
deadline, no health check; shrinking stops after `SHRINK_PLAYS` plays, not after some seconds).
The example budget per case bounds the work; docs/instructors.md lists the time each exercise's
grader takes.
"""

from __future__ import annotations

import copy
import math
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, Callable, Optional, Union

from minisgl_edu.grading.core import ENGINE_LIMIT, Case, Mistake
from minisgl_edu.grading.feedback import crash_hint, is_stub
from minisgl_edu.grading.limits import untimed

Scene = Any
Play = Callable[[Any, Scene], dict]
# A field's hint: fixed text, or a function of the scene and the difference (which way it differs)
Hint = Union[str, Callable[[Scene, "Difference"], str]]


class _StopSearch(BaseException):
    """Carries an exception out of Hypothesis without shrinking: a stub's NotImplementedError (the
    answer is not written yet, every scene fails alike) needs no smaller scene. Hypothesis lets a
    BaseException through at once, as it does the time limit's CaseTimeout."""

    def __init__(self, error: BaseException):
        super().__init__()
        self.error = error


@dataclass(frozen=True)
class Difference:
    field: str
    expected: Any
    got: Any


def _same(a: Any, b: Any) -> bool:
    """Equal as the contract means it: tensors of the same dtype, shape and values (floats within
    rounding, the same infinities and NaNs), floats within rounding, containers element by element."""
    import torch

    if isinstance(a, torch.Tensor) or isinstance(b, torch.Tensor):
        if not (isinstance(a, torch.Tensor) and isinstance(b, torch.Tensor)):
            return False
        if a.dtype != b.dtype or a.shape != b.shape:
            return False
        if a.dtype.is_floating_point:
            # the same formula in another order rounds differently: 1e-5 relative is far below any
            # contract's difference (a penalty, a bias, a mask) and far above rounding
            return bool(torch.allclose(a.double(), b.double(), rtol=1e-5, atol=1e-6, equal_nan=True))
        return bool(torch.equal(a, b))
    if isinstance(a, float) or isinstance(b, float):
        if not (isinstance(a, (int, float)) and isinstance(b, (int, float))) or isinstance(a, bool) != isinstance(
            b, bool
        ):
            return False
        if math.isnan(a) or math.isnan(b):
            return math.isnan(a) and math.isnan(b)
        return math.isclose(a, b, rel_tol=1e-6, abs_tol=1e-9)
    if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)):
        return type(a) is type(b) and len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b))
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(_same(a[k], b[k]) for k in a)
    if isinstance(a, bool) != isinstance(b, bool):
        return False  # True is not 1: the contract names the type
    if type(a) is not type(b) and not (isinstance(a, (int, float)) and isinstance(b, (int, float))):
        return False  # a list is not a tuple, a str is not None
    return a == b


def first_difference(expected: dict, got: dict) -> Optional[Difference]:
    """The first field, in the reference's order, whose values differ (a missing field counts)."""
    for name, want in expected.items():
        if name not in got:
            return Difference(name, want, "(not observed)")
        if not _same(want, got[name]):
            return Difference(name, want, got[name])
    return None


def made_by(play: Play, mistaken: Any, reference: Any, scene: Scene, diff: Difference) -> bool:
    """For a hint that names one mistake: `mistaken`, the reference with that one mistake made on
    purpose, plays `scene` as `reference` does up to the field of `diff` and gives there what the
    answer gave, so the answer may well make that mistake."""
    mine, right = play(mistaken, scene), play(reference, scene)
    for field, value in right.items():
        if field == diff.field:
            return mine.get(field) == diff.got
        if mine.get(field) != value:
            return False
    return False


def named_when_made(named: str, play: Play, mistaken: Any, reference: Any, hint: Callable) -> Callable[..., str]:
    """A generated phase's hint: `named`, the hint for one mistake, where the answer gives what `mistaken`
    (the reference with that mistake) gives on the scene (`made_by`), else what `hint` says."""

    def either(scene: Scene, diff: Difference) -> str:
        return named if made_by(play, mistaken, reference, scene, diff) else hint(scene, diff)

    return either


def unchanged(before: Any, after: Any) -> Any:
    """An observable for state the contract says to leave alone: "unchanged", or what it became."""
    return "unchanged" if _same(before, after) else after


def shown(value: Any, width: int = 300) -> str:
    """A value as the failure prints it: tensors as rounded lists, long text cut."""
    import torch

    if isinstance(value, torch.Tensor):
        v = value.detach().cpu()
        text = str(v.double().round(decimals=4).tolist() if v.dtype.is_floating_point else v.tolist())
    else:
        text = repr(value)
    return text if len(text) <= width else text[: width - 5] + " ..."


def _scene_message(show: Callable[[Scene], str], scene: Scene, diff: Difference, fixed: bool) -> str:
    which = "one of the few played first" if fixed else "the smallest found"
    return (
        f"on this scene, {which} where your answer and the reference differ:\n{show(scene)}\n"
        f"first difference, {diff.field}: expected {shown(diff.expected)}, got {shown(diff.got)}"
    )


# The seed every grader's scenes are drawn from. Which wrong answers the generated phase catches
# depends on the scenes drawn (tests/mutants records it: CAUGHT_BY), so it is fixed here, apart
# from the code (Hypothesis's default under derandomize hashes the test function's source, which
# would draw new scenes at every edit of `search`), and changed only on purpose, with the mutation
# suite run again.
SCENE_SEED = (
    4238282676654287161206963980689866386925398041615303130149882823543645783344208454930876923242405491515463770641648
)

# Shrinking plays a failing scene's smaller variants until none of them still differs: for the
# mutation suite's wrong answers, a median of 67 plays after the first difference. The cap keeps
# a student's wait short: 11 of the suite's 416 answers reach it, with a scene a step or two
# longer than the smallest; a cap of 1,000 took 2-3x as long on the slowest prefix-cache answers
# (12-16 s against 5-6 s on the course machine). Hypothesis would also stop shrinking after five
# minutes of wall-clock time, which on a slow enough machine would show a larger scene than on a
# fast one. Counted in plays instead, the search stops at the same scene on every machine.
SHRINK_PLAYS = 400


def _settings(examples: int):
    from hypothesis import HealthCheck, Phase, Verbosity, settings

    return settings(
        max_examples=examples,
        derandomize=True,  # the same scenes on every run: a score never changes between runs
        database=None,  # nothing remembered from an earlier run
        deadline=None,  # no check depends on how fast the machine is
        suppress_health_check=list(HealthCheck),  # the health checks time the strategy
        phases=(Phase.explicit, Phase.generate, Phase.shrink),
        report_multiple_bugs=False,  # one difference, the smallest, reported
        verbosity=Verbosity.quiet,
        print_blob=False,
    )


@contextmanager
def _strategy_alone() -> Iterator[None]:
    """Scenes drawn from the strategy and the seed alone. Hypothesis also draws, now and then, a
    literal constant found in the source of any module imported so far that is not installed in
    site-packages (its "local constants"). A notebook kernel, the shell grader and the test suite
    import different modules, and an editable install makes the package's own modules count, so
    the same seed would draw different scenes in each (and the mutation suite would test scenes
    a student never sees). There is no setting for it: the search swaps in an empty set of local
    constants (Hypothesis's internals; the version is pinned in pyproject.toml and
    tests/test_grading_explore.py checks this still holds)."""
    from hypothesis.internal.conjecture import providers

    collect = providers._get_local_constants
    none = providers.Constants()
    providers._get_local_constants = lambda: none
    providers.CONSTANTS_CACHE.cache.clear()  # constants an earlier search found allowed, per type and range
    try:
        yield
    finally:
        providers._get_local_constants = collect
        providers.CONSTANTS_CACHE.cache.clear()


def search(
    scenes: Any,
    play: Play,
    show: Callable[[Scene], str],
    impl: Any,
    reference: Any,
    hints: dict[str, Hint],
    examples: int,
    raised_hint: str = "",
    fixed: Sequence[Scene] = (),
) -> None:
    """Play `impl` and `reference` on each scene of `fixed`, then on up to `examples` drawn scenes;
    raise a Mistake with the first fixed scene that differs, else the smallest drawn one. An
    exception from `impl` is a difference too (its line is named)."""
    from hypothesis import example, given, seed
    from hypothesis.errors import Flaky, FlakyFailure

    newest: Optional[Mistake] = None  # the newest difference: while shrinking, the smallest scene so far
    plays_since = 0  # scenes played since the first difference

    @seed(SCENE_SEED)
    @_settings(examples)
    @given(scenes)
    def one_scene(scene: Scene) -> None:
        nonlocal newest, plays_since
        if newest is not None:
            plays_since += 1
            if plays_since > SHRINK_PLAYS:  # shrunk enough: report the smallest scene found so far
                raise _StopSearch(newest)
        try:
            _differs(scene)
        except Mistake as e:
            newest = e
            raise

    for scene in reversed(fixed):  # Hypothesis plays the example applied last first: fixed[0] is played first
        one_scene = example(scene)(one_scene)

    def _differs(scene: Scene) -> None:
        with untimed():  # the reference's run is not the student's time
            expected = play(reference, copy.deepcopy(scene))
        try:
            got = play(impl, copy.deepcopy(scene))
        except Mistake as e:  # a check inside play (e.g. a return of the wrong type) names its own mistake
            raise Mistake(f"on this scene:\n{show(scene)}\n{e}", e.hint) from e
        except Exception as e:
            if is_stub(e):
                raise _StopSearch(e) from e
            hint = crash_hint(e, raised_hint)  # what the exception itself says about the code, then the grader's words
            raise Mistake(f"on this scene:\n{show(scene)}\nyour code raised {type(e).__name__}: {e}", hint) from e
        diff = first_difference(expected, got)
        if diff is not None:
            hint = hints.get(diff.field, "")
            if callable(hint):  # a hint that reads the difference: which way the values differ
                hint = hint(scene, diff)
            raise Mistake(_scene_message(show, scene, diff, fixed=any(scene is f for f in fixed)), hint)

    try:
        with _strategy_alone():
            one_scene()
    except _StopSearch as stop:
        raise stop.error from None
    except FlakyFailure as e:  # the same scene failed once and passed once: the answer depends on more than its inputs
        inner = next((x for x in getattr(e, "exceptions", ()) if isinstance(x, Mistake)), None)
        detail = f"\n{inner}" if inner is not None else ""
        raise Mistake(
            "your answer gave two different results on the same scene (it depends on something besides its "
            f"inputs: object ids, a set's order, a random draw, state kept between calls){detail}",
            "compute the result from the inputs alone",
        ) from None
    except Flaky as e:  # Hypothesis's own inconsistency (its data, its backend), not the answer's
        raise RuntimeError(f"the grader's scene search failed ({type(e).__name__}), not your answer: {e}") from None


def generated(
    name: str,
    scenes: Any,
    play: Play,
    show: Callable[[Scene], str],
    reference: Any,
    hints: dict[str, Hint],
    examples: int,
    hint: str = "",
    raised_hint: str = "",
    fixed: Sequence[Scene] = (),
) -> Case:
    """A case of the generated phase, named `name` ("generated: ..." or "stretch: generated: ..." by
    convention, so that a score line tells the phases apart): `examples` scenes of `scenes`, the answer against `reference`.
    `hints` maps each observable field of `play` to the hint shown when that field is the first to
    differ (text, or a function of the scene and the Difference that names the mistake it shows); `hint` is the case's own (shown when the failure is not a difference, e.g. a timeout).
    `fixed` scenes are played before the drawn ones, each as written (a difference there is not shrunk)."""

    def run(impl: Any) -> None:
        search(scenes, play, show, impl, reference, hints, examples, raised_hint, fixed)

    # A right answer plays every scene: about a second of CPU, but a loaded 2-core machine can
    # stretch that twentyfold, so the limit is an engine case's, not a unit case's
    return Case(name, run, hint=hint, time_limit=ENGINE_LIMIT, generated=True)
