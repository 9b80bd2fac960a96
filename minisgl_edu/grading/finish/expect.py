"""How exercise 1's hand cases judge one call: `_expect` calls the answer on a request built by hand,
compares what it returned with the reason the case wants, and where they differ, re-runs the answer
on variants of the request (finish/diagnoses.py, finish/scenes.py) so that the failure names the
mistake it shows. `_completes` and `_spans` measure a stop string's tokens for the cases' setup checks.
"""

from __future__ import annotations

import copy
import re
from typing import Any, Optional

from minisgl_edu.core import Req
from minisgl_edu.grading.core import Mistake
from minisgl_edu.grading.finish.decoded_calls import DROPS_END_IDS, SPLIT, decoded_in_parts, dropped_end_ids
from minisgl_edu.grading.finish.decoded_window import (
    FRONT_SLICE,
    NEGATIVE_START,
    SEARCH_SKIPPED,
    front_slice,
    negative_start,
    search_skipped,
)
from minisgl_edu.grading.finish.diagnoses import (
    COUNT_GATE,
    MOST_CHARACTERS,
    count_gate,
    window_of_most_characters,
)
from minisgl_edu.grading.finish.end_ids import end_test_reading
from minisgl_edu.grading.finish.find_index import FIND_AS_TRUTH, FOUND_BY_INDEX, reads_find_as_truth
from minisgl_edu.grading.finish.indexed_window import WINDOW_INDEXED, indexes_the_window
from minisgl_edu.grading.finish.lost_search import lost_search
from minisgl_edu.grading.finish.missed_match import missed_in_text
from minisgl_edu.grading.finish.scenes import (
    LATER_STOP_UNDOES,
    RETURNS_A_REASON,
    later_stop_undoes,
    noting_decode,
    params_changed,
)
from minisgl_edu.grading.finish.searched_text import (
    ALTERED_TEXT,
    PROMPT_CHANGES,
    STOPS_CHANGED,
    altered_text,
    changed_stops,
    prompt_changes_answer,
)
from minisgl_edu.grading.finish.stop_patterns import AS_PATTERN, searched_as_pattern
from minisgl_edu.grading.finish.tokens import EOS, _decode, _ids
from minisgl_edu.grading.finish.window_words import window_too_short


def _expect(fn, req: Req, want: Optional[str], why: str, eos_ids: set[int] = EOS, hint: str = "") -> None:
    calls: list[list[int]] = []
    params, before = copy.deepcopy(req.sampling_params), list(req.output_ids)
    try:
        got = fn(req, set(eos_ids), noting_decode(calls))
    except (IndexError, TypeError) as e:  # the crash keeps its message (the student's line); the hint names it
        if indexes_the_window(fn):
            e.hint = WINDOW_INDEXED
        raise
    except re.error as e:  # only a stop string compiled as a pattern raises it (the reference compiles none)
        e.hint = AS_PATTERN
        raise
    if req.output_ids != before:
        raise Mistake(_output_changed(before, req.output_ids), OUTPUT_CHANGED)
    changed = params_changed(params, req)
    if changed:
        raise Mistake(
            f"your check_finish changed req.sampling_params ({changed}): it only decides whether the request "
            "is finished. The parameters are the client's, and the scheduler sends list(sampling_params.stop) "
            "to the detokenizer with every token, which cuts the text at those strings",
            "only read req: leave req.sampling_params as it is (the detokenizer reads the stop list after you)",
        )
    if got == want and type(got) is type(want):
        return
    why, hint = _diagnosed(fn, req, want, got, eos_ids, calls, why, hint)
    raise Mistake(
        f"{why}: your check_finish returned {got!r}, expected {want!r} (output {_decode(req.output_ids)!r}, "
        f"{len(req.output_ids)} of max {req.max_new_tokens} tokens, eos_ids {sorted(eos_ids)})",
        RETURNS_A_REASON if isinstance(got, bool) else hint,
    )


OUTPUT_CHANGED = (
    "only read req: leave req.output_ids as it is, and read the newest token as req.output_ids[-1]; the "
    "scheduler has just appended that token and keeps the list as the answer (pop(), remove() or del take "
    "tokens out of it)"
)


def _output_changed(before: list[int], after: list[int]) -> str:
    """What the answer did to req.output_ids in one call, seen by comparing the list before and after it."""
    what = f"{len(before)} tokens before the call, {len(after)} after"
    if after == before[:-1]:
        what += f": the newest token ({before[-1]}, {_decode(before[-1:])!r}) was taken out, as pop() does"
    return (
        f"your check_finish changed req.output_ids ({what}): it only decides whether the request is finished. "
        "The scheduler appended the newest token to that list before calling you, and the list is the answer "
        "the client gets"
    )


def _diagnosed(fn, req: Req, want: Any, got: Any, eos_ids: set[int], calls: list[list[int]], why: str, hint: str):
    """(why, hint) for a call that returned `got` where the case wants `want`, `calls` the ids of each
    decode call it made: the case's own, or, where a probe of the answer confirms a mistake, that mistake's."""
    shown, case_hint = _decode(req.output_ids), hint
    joined = [t for ids in calls for t in ids]
    # a stop string read as a regex pattern first: its miss would read as a window too short, or a text altered
    pattern = searched_as_pattern(fn, req.sampling_params.stop, shown) if "stop" in (want, got) else None
    # then what the answer returned (a reason the contract has?), then how it tests for an EOS
    end_test = end_test_reading(fn, req, eos_ids, got) if not pattern else None
    if pattern:
        why, hint = f"{why}; {pattern[0]}", pattern[1]
    elif end_test:
        why, hint = why + end_test[0], end_test[1]
    elif "stop" in (want, got) and dropped_end_ids(req, eos_ids, calls):
        last = max((i for i, t in enumerate(req.output_ids) if t in eos_ids), default=-1)
        what = (
            f"only the {len(joined)} tokens after the last id of eos_ids in the output ({req.output_ids[last]})"
            if last >= 0 and joined == req.output_ids[last + 1 :]
            else f"{len(joined)} tokens with the ids of eos_ids taken out"
        )
        why += f"; your check decoded {what}, so the text it searched is not the output's"
        hint = DROPS_END_IDS
    elif "stop" in (want, got) and reads_find_as_truth(fn):
        why, hint = f"{why}; {FOUND_BY_INDEX}", FIND_AS_TRUTH
    elif want == "stop" and got is None and decoded_in_parts(req, calls):
        why = (
            f"the last {len(joined)} output tokens decoded together hold a stop string, but your check decoded them "
            f"in {len(calls)} parts ({' + '.join(str(len(ids)) for ids in calls)} tokens) and joined the texts: a "
            "character whose bytes are split between two parts decodes to '\ufffd' in each, so the stop string "
            "never shows"
        )
        hint = SPLIT
    elif want == "stop" and got in (None, "length") and prompt_changes_answer(fn, req, eos_ids):
        why += f"; {prompt_changes_answer(fn, req, eos_ids)}"
        hint = PROMPT_CHANGES
    elif "stop" in (want, got) and changed_stops(fn, req, eos_ids):
        why += f"; {changed_stops(fn, req, eos_ids)}"
        hint = STOPS_CHANGED
    elif want != "stop" and got == "stop" and altered_text(fn, req, eos_ids):
        why += f"; {altered_text(fn, req, eos_ids)}"
        hint = ALTERED_TEXT
    elif want == "stop" and got in (None, "length") and negative_start(fn, req, eos_ids):
        why += f"; {negative_start(fn, req, eos_ids)}"
        hint = NEGATIVE_START
    elif want == "stop" and got in (None, "length") and front_slice(fn, req, eos_ids):
        why += f"; {front_slice(fn, req, eos_ids)}"
        hint = FRONT_SLICE
    elif want == "stop" and got in (None, "length") and count_gate(fn, req, eos_ids):
        held = next(s for s in req.sampling_params.stop if s in shown)
        why = (
            f"the output holds the stop string {held!r} ({len(held)} characters) after {len(req.output_ids)} tokens; "
            f"put {count_gate(fn, req, eos_ids)} tokens that decode to nothing (special tokens) in front of the same "
            "output and your check finds it: it skips the stop strings while the output has few tokens"
        )
        hint = COUNT_GATE
    elif want == "stop" and got in (None, "length") and search_skipped(fn, req, eos_ids):
        why += f"; {search_skipped(fn, req, eos_ids)}"
        hint = SEARCH_SKIPPED
    elif want == "stop" and got in (None, "length") and len(req.sampling_params.stop) > 1:
        matched = later_stop_undoes(fn, req, eos_ids)
        if matched:
            why = (
                f"stop={req.sampling_params.stop!r}: the output holds {matched!r}; your check finds it when it is "
                "the only stop string, but not when another that the output does not hold comes after it in the "
                "list: a stop string that matches finishes the request whatever the strings after it say"
            )
            hint = LATER_STOP_UNDOES
        elif window_of_most_characters(fn, req, eos_ids):
            why += (
                "; your check finds it when it is the only stop string, but not beside a string with more characters "
                "and fewer bytes: its window follows the stop string with the most characters"
            )
            hint = MOST_CHARACTERS
    if want == "stop" and got in (None, "length") and not pattern:
        why, hint = _lost_or_missed(fn, req, eos_ids, calls, why, hint, case_hint)
    return why, hint


def _lost_or_missed(fn, req: Req, eos_ids: set[int], calls: list[list[int]], why: str, hint: str, case_hint: str):
    """(why, hint) for a stop string the answer missed. A probe on requests of its own confirms where the
    stop string was lost before the search: then the test on the text is not at fault (missed_in_text), and
    the window's size is not either (window_too_short)."""
    lost = lost_search(fn)
    missed = hint == case_hint and not lost and missed_in_text(fn, req, eos_ids, calls)
    if missed:
        why, hint = f"{why}; {missed[0]}", missed[1]
    window = window_too_short(fn) if not lost else None
    if window:
        why, hint = f"{why}; {window[0]}", window[1]
    if lost:
        why, hint = f"{why}; {lost[0]}", lost[1]
    return why, hint


def _completes(ids: list[int], stop: str) -> tuple[int, int]:
    """(done, need): the stop string first shows in the decode of ids[:done], and the last `need` of
    those tokens are the fewest whose decode still holds it (the window a check must decode)."""
    done = next(i for i in range(1, len(ids) + 1) if stop in _decode(ids[:i]))
    need = next(w for w in range(1, done + 1) if stop in _decode(ids[done - w : done]))
    return done, need


def _spans(text: str, stop: str) -> int:
    """How many tokens of `text` the first occurrence of `stop` overlaps (setup checks)."""
    ids, start = _ids(text), text.index(stop)
    n, pos = 0, 0
    for i in range(len(ids)):
        end = len(_decode(ids[: i + 1]))
        if end > start and pos < start + len(stop):
            n += 1
        pos = end
    return n
