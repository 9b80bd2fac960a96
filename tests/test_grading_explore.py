"""The graders' generated phase (grading/explore.py): the same scenes and the same verdict on every
run, the smallest differing scene with the hint of the field that differs, a stub stopped at once,
an answer that depends on more than its inputs named as such."""

from __future__ import annotations

import pytest
import torch
from hypothesis import strategies as st

from minisgl_edu.grading import explore
from minisgl_edu.grading.core import Mistake, run_case
from minisgl_edu.grading.explore import _same, first_difference, generated, search

SCENES = st.lists(st.integers(0, 50), max_size=8)


def play(fn, scene):
    return {"returned": fn(list(scene)), "input": scene}


def reference(xs):
    return sum(x for x in xs if x % 2 == 0)


def off_at_big_numbers(xs):  # wrong only when an even number above 40 is in the list
    return sum(x for x in xs if x % 2 == 0 and x <= 40)


def show(scene):
    return f"  xs={scene}"


def _run(impl, hints=None, examples=200):
    return search(SCENES, play, show, impl, reference, hints or {"returned": "sum the even numbers"}, examples)


def test_a_difference_is_shrunk_to_the_smallest_scene_with_its_fields_hint():
    with pytest.raises(Mistake) as e:
        _run(off_at_big_numbers)
    assert "xs=[42]" in str(e.value), str(e.value)  # the smallest list that differs: one number, the smallest
    assert "returned: expected 42, got 0" in str(e.value)
    assert e.value.hint == "sum the even numbers"


def test_fixed_scenes_are_played_first_in_order_and_as_written():
    played = []

    def noting(fn, scene):
        played.append(list(scene))
        return play(fn, scene)

    fixed = [[44, 3, 1], [50]]  # both differ; neither is the smallest scene that does
    with pytest.raises(Mistake) as e:
        search(SCENES, noting, show, off_at_big_numbers, reference, {"returned": "sum"}, 200, fixed=fixed)
    assert played[:2] == [[44, 3, 1], [44, 3, 1]]  # the reference's play, then the answer's, on fixed[0]
    assert "xs=[44, 3, 1]" in str(e.value) and "one of the few played first" in str(e.value), str(e.value)
    # an answer the fixed scenes pass is searched on the same drawn scenes as without them
    drawn = []
    search(SCENES, lambda fn, sc: drawn.append(list(sc)) or play(fn, sc), show, reference, reference, {}, 50)
    played.clear()
    search(SCENES, noting, show, reference, reference, {}, 50, fixed=[[1, 2]])
    assert played[:2] == [[1, 2], [1, 2]] and played[2:] == drawn


def test_the_same_verdict_and_scene_on_every_run():
    messages = set()
    for _ in range(3):
        with pytest.raises(Mistake) as e:
            _run(off_at_big_numbers)
        messages.add(str(e.value))
    assert len(messages) == 1


def test_the_same_scenes_whatever_else_the_process_imported(tmp_path, monkeypatch):
    """Hypothesis also draws, now and then, a literal constant from the source of the modules
    imported so far that are not installed in site-packages. A notebook kernel, the shell grader
    and the test suite import different modules, and an editable install makes the package's own
    modules count, so the scenes would differ between them: the search leaves those constants out."""
    big = st.lists(st.integers(0, 10**9), min_size=4, max_size=4)

    def scenes_drawn():
        drawn = []

        def recorded(fn, scene):
            drawn.append(list(scene))
            return play(fn, scene)

        search(big, recorded, show, reference, reference, {}, 100)
        return drawn

    before = scenes_drawn()
    literals = [123_456_789 + 7 * i for i in range(200)]  # numbers no other module of the process holds
    (tmp_path / "many_literals.py").write_text("NUMBERS = (" + ", ".join(map(str, literals)) + ")\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    import many_literals  # noqa: F401 - a new local module with constants, in sys.modules from here on

    after = scenes_drawn()
    assert not set(literals) & {x for scene in after for x in scene}
    assert after == before


def test_shrinking_stops_after_a_count_of_plays_at_the_smallest_scene_so_far(monkeypatch):
    plays = []

    def counted(fn, scene):
        plays.append(list(scene))
        return play(fn, scene)

    def shrink(budget):
        plays.clear()
        monkeypatch.setattr(explore, "SHRINK_PLAYS", budget)
        with pytest.raises(Mistake) as e:
            search(SCENES, counted, show, off_at_big_numbers, reference, {"returned": "even"}, 200)
        first = next(i for i, xs in enumerate(plays[::2]) if off_at_big_numbers(xs) != reference(xs))
        return str(e.value), len(plays) // 2 - first - 1  # scenes played after the first difference

    full, after = shrink(10**6)
    assert "xs=[42]" in full and after > 3
    cut, after_cut = shrink(3)
    assert after_cut == 3, after_cut  # then the search stopped, on a play count, not a clock
    assert cut != full and "returned: expected" in cut  # a larger scene, still one that differs
    assert shrink(3)[0] == cut  # the same scene again


def test_a_callable_hint_reads_the_difference():
    def hint(scene, diff):
        return f"{diff.got} is short by {diff.expected - diff.got}"

    with pytest.raises(Mistake) as e:
        _run(off_at_big_numbers, hints={"returned": hint})
    assert e.value.hint == "0 is short by 42"


def test_a_changed_input_is_its_own_field():
    def sorts_in_place(xs):
        xs.sort()
        return reference(xs)

    def play_in_place(fn, scene):
        return {"returned": fn(scene), "input": scene}

    with pytest.raises(Mistake) as e:
        search(SCENES, play_in_place, show, sorts_in_place, reference, {"input": "leave the list as it is"}, 200)
    assert e.value.hint == "leave the list as it is" and "first difference, input" in str(e.value)


def test_a_stub_stops_the_search_at_once():
    calls = []

    def stub(xs):
        calls.append(xs)
        raise NotImplementedError

    with pytest.raises(NotImplementedError):
        _run(stub)
    assert len(calls) == 1


def test_an_answer_that_depends_on_more_than_its_inputs_is_named():
    calls = []

    def every_other_call(xs):  # keeps state between calls: wrong on every second one
        calls.append(xs)
        return reference(xs) + len(calls) % 2

    case = generated("generated: sums", SCENES, play, show, reference, {"returned": ""}, 200)
    r = run_case(case, every_other_call)
    assert not r.passed
    assert "different results on the same scene" in r.message or "first difference" in r.message, r.message


def test_the_reference_itself_passes():
    _run(reference)  # raises nothing


def test_equal_as_the_contract_means_it():
    assert _same(
        torch.tensor([1.0, float("nan"), float("-inf")]), torch.tensor([1.0 + 1e-9, float("nan"), float("-inf")])
    )
    assert not _same(torch.tensor([1.0]), torch.tensor([1.0], dtype=torch.float64))  # the dtype is part of it
    assert not _same(torch.tensor([1.0, 2.0]), torch.tensor([1.0, 2.01]))
    assert not _same(True, 1) and not _same([1], (1,))
    assert _same({"a": [0.1 + 0.2]}, {"a": [0.3]})
    assert first_difference({"a": 1, "b": 2}, {"a": 1, "b": 3}).field == "b"
    assert first_difference({"a": 1}, {}).got == "(not observed)"
