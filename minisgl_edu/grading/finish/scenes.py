"""Generated scenes for exercise 1 and its stretch: a request's output, token by token, as the
scheduler grows it, with the finish check called after each token until it returns a reason.

Where this sits in the course: the generated phase (grading/explore.py) of `finish` and
`finish_min_tokens`. A scene is text built from pieces that stress the contract (CJK characters,
emoji and flags of four-byte code points, digits and spaces that merge into one token), cut into
the default model's real tokens, with EOS ids placed anywhere, stop strings taken from the
output's own text (so they span tokens, end inside a token, overlap each other, or appear in the
prompt only), `ignore_eos`, and a length limit (`req.max_new_tokens`, clamped below
`sampling_params.max_tokens`) at, before or after where the text would stop.

What is compared: for each token, what the check returned, until the first reason; and that it
left the request's output, prompt and stop list as they were.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any, Optional

from hypothesis import strategies as st

from minisgl_edu.core import Req, SamplingParams
from minisgl_edu.grading.explore import Difference, generated, unchanged
from minisgl_edu.grading.finish.character_window import ONE_CHARACTER_OUT, PER_CHARACTER, per_character_why
from minisgl_edu.grading.finish.decoded_calls import DROPS_END_IDS, SPLIT, decoded_in_parts, dropped_end_ids
from minisgl_edu.grading.finish.decoded_window import decoded_too_little
from minisgl_edu.grading.finish.diagnoses import (
    BROKEN_CHARACTER,
    CASE_SENSITIVE,
    EOS_WITH_STOPS,
    FIRST_STOPS_ONLY,
    LENGTH_BEFORE_STOP,
    LENGTH_ONE_LATE,
    MIN_IN_TOKENS,
    MOST_CHARACTERS,
    differs_in_case_only,
    early_length_hint,
    eos_skipped_with_stops,
    folds_case,
    last_allowed_hint,
    length_before_stop,
    length_one_late,
    min_in_text,
    skips_broken_tail,
    stops_read,
    window_of_most_characters,
)
from minisgl_edu.grading.finish.end_ids import end_test_hint
from minisgl_edu.grading.finish.eos_stop_search import EOS_SKIPS_STOP_SEARCH, eos_skips_stop_search
from minisgl_edu.grading.finish.find_index import FIND_AS_TRUTH, reads_find_as_truth
from minisgl_edu.grading.finish.lost_search import lost_search
from minisgl_edu.grading.finish.min_probes import (
    EOS_COUNTS,
    HIDDEN_EOS_LENGTH,
    STOP_NOT_SPENT,
    UNREACHABLE_MIN,
    drops_unreachable_min,
    held_back_eos_not_counted,
    held_back_stop_spent,
    hides_held_back_eos,
)
from minisgl_edu.grading.finish.searched_text import (
    ALTERED_TEXT,
    PROMPT_CHANGES,
    STOPS_CHANGED,
    altered_text,
    changed_stops,
    prompt_changes_answer,
)
from minisgl_edu.grading.finish.stop_patterns import named_pattern_errors, searched_as_pattern
from minisgl_edu.grading.finish.tokens import EOS, _decode, _ids, noting_decode
from minisgl_edu.grading.finish.window_words import window_too_short
from minisgl_edu.grading.pieces import PIECES, stretch_of

PROMPTS = ["Count for me.", "Say END when done.", "我爱北京", "Write 2 + 2 = 4 and stop."]


@dataclass
class FinishScene:
    prompt: str
    output: list[int]  # the whole output; the check sees it grow one token at a time
    eos_ids: set[int]
    stop: list[str]
    ignore_eos: bool
    max_new_tokens: int  # the clamped limit the check must use
    max_tokens: int  # what the client asked for (>= max_new_tokens)
    stretch_min: Optional[int] = None  # min_tokens, for the stretch only


@st.composite
def finish_scenes(draw: Any, stretch: bool = False) -> FinishScene:
    text = "".join(draw(st.lists(st.sampled_from(PIECES), min_size=1, max_size=5)))
    output = _ids(text)
    # EOS ids: SmolLM2's, another model's set with an ordinary token of this text in it, or none
    eos_ids = draw(st.sampled_from([set(EOS), {2}, {1, output[-1]}, {output[0]}, set()]))
    for _ in range(draw(st.integers(0, 2))):  # an end token somewhere in the output
        at = draw(st.integers(0, len(output)))
        output.insert(at, draw(st.sampled_from([0, 2])))
    shown = _decode(output)
    # stop strings: any stretch of the output's text (across tokens, ending inside one, overlapping
    # each other), a whole piece of it (emoji and CJK: many byte tokens for few characters), or text
    # it may not hold at all
    piece_of_text = st.sampled_from([p.strip() for p in PIECES if p.strip() and p.strip() in shown] or ["END"])
    # (a stretch in another case, 'One' or 'END' -> 'end', is not there: stop strings match as written)
    other_case = stretch_of(shown).map(str.swapcase)
    stop = [
        draw(st.one_of(stretch_of(shown), piece_of_text, st.sampled_from(PIECES), other_case))
        for _ in range(draw(st.integers(0, 3)))
    ]
    stop = [s for s in stop if s]
    multibyte = [p.strip() for p in PIECES if p.strip() in shown and len(p.strip().encode()) > 2 * len(p.strip())]
    if multibyte and draw(st.booleans()):
        # a CJK or emoji piece of the text beside an ASCII string with one character more and fewer bytes:
        # the longest of the list by characters is not the longest by bytes
        piece = draw(st.sampled_from(multibyte))
        pair = [piece, ("stop" * 4)[: len(piece) + 1]]
        if draw(st.booleans()):
            pair.reverse()
        at = draw(st.integers(0, len(stop)))
        stop[at:at] = pair
    limit = draw(st.integers(1, len(output) + 2))
    return FinishScene(
        prompt=draw(st.sampled_from(PROMPTS)),
        output=output,
        eos_ids=eos_ids,
        stop=stop,
        ignore_eos=draw(st.booleans()),
        max_new_tokens=limit,
        max_tokens=limit + draw(st.sampled_from([0, 0, 1, 100])),
        stretch_min=draw(st.integers(0, len(output) + 1)) if stretch else None,
    )


def _request(scene: FinishScene) -> Req:
    sp = SamplingParams(max_tokens=scene.max_tokens, stop=list(scene.stop), ignore_eos=scene.ignore_eos)
    req = Req(0, _ids(scene.prompt), sp)
    req.max_new_tokens = scene.max_new_tokens
    return req


def play(fn: Any, scene: FinishScene, stretch: bool = False) -> dict:
    """Grow the output token by token as the scheduler does; stop at the first reason (or when
    the length limit is passed: the scheduler would have stopped there)."""
    req = _request(scene)
    prompt, stop = list(req.input_ids), list(req.sampling_params.stop)
    returned: list[Optional[str]] = []
    for k in range(1, min(len(scene.output), scene.max_new_tokens) + 1):
        req.output_ids = list(scene.output[:k])
        args = (req, set(scene.eos_ids), _decode) + ((scene.stretch_min,) if stretch else ())
        got = fn(*args)
        returned.append(got)
        if req.output_ids != scene.output[:k]:
            break  # reported below as the output changed
        if got is not None:
            break
    return {
        "what it returned after each token": returned,
        "req.output_ids after the call": req.output_ids,
        "req.input_ids": unchanged(prompt, req.input_ids),
        "req.sampling_params.stop": unchanged(stop, req.sampling_params.stop),
    }


def show(scene: FinishScene) -> str:
    seen = scene.output[: scene.max_new_tokens]  # the scheduler never calls past the limit
    lines = [
        f"  the output grows token by token to {seen}",
        f"  its text {_decode(seen)!r}; each token's: {' '.join(repr(_decode([t])) for t in seen)}",
        f"  eos_ids={sorted(scene.eos_ids)} ignore_eos={scene.ignore_eos} stop={scene.stop!r}",
        f"  req.max_new_tokens={scene.max_new_tokens} (sampling_params.max_tokens={scene.max_tokens}), "
        f"prompt {scene.prompt!r}",
    ]
    if scene.stretch_min is not None:
        lines.append(f"  min_tokens={scene.stretch_min}")
    return "\n".join(lines)


RETURNS_A_REASON = "return the reason, 'stop' or 'length', or None while it goes on: never True/False"


def params_changed(before: SamplingParams, req: Req) -> Optional[str]:
    """The fields of req.sampling_params that differ from `before` (a copy taken before the call),
    as "ignore_eos False -> True, stop ['x'] -> []"; None when the check left them as they were."""
    after = req.sampling_params
    fields = [f for f in vars(before) if getattr(after, f, None) != getattr(before, f)]
    return ", ".join(f"{f} {getattr(before, f)!r} -> {getattr(after, f, None)!r}" for f in fields) or None


def reason_hint(scene: FinishScene, diff: Difference, answer: Optional[list] = None) -> str:
    """The mistake a list of returns shows, read at the first token where the two lists part
    (`answer`: the answer graded, tried once more where two mistakes give the same returns)."""
    want, got = list(diff.expected), list(diff.got)
    k = next(
        (i for i, (a, b) in enumerate(zip(want, got)) if a != b or type(a) is not type(b)), min(len(want), len(got))
    )
    a = want[k] if k < len(want) else "(no call: it had finished)"
    b = got[k] if k < len(got) else "(no call: it had finished)"
    if isinstance(b, bool):
        return RETURNS_A_REASON
    n, token = k + 1, scene.output[k]
    min0 = [0] if scene.stretch_min is not None else []  # the probes' min_tokens: none held back
    # a stop string read as a regex pattern: missed, or found where it is not (or re.error, named_pattern_errors)
    pattern = searched_as_pattern(answer[0], scene.stop, _decode(scene.output[:n]), *min0) if answer else None
    if pattern and "stop" in (a, b):
        return pattern[1]
    is_eos = token in scene.eos_ids
    named = end_test_hint(answer, b, token, is_eos and not scene.ignore_eos, scene.stretch_min is not None)
    if named:  # a reason outside the contract, or an EOS found by its empty text
        return named
    if scene.stretch_min is not None and answer and min_in_text(answer[0]):
        return f"{min_in_text(answer[0])}. {MIN_IN_TOKENS}"
    if scene.stretch_min is not None and n == scene.stretch_min and a == "stop":
        if answer and held_back_eos_not_counted(answer[0]):
            return EOS_COUNTS
        if answer and held_back_stop_spent(answer[0]):
            return STOP_NOT_SPENT
        return (
            f"token {n} is the min_tokens-th (min_tokens={scene.stretch_min}): the minimum is reached with this very "
            "token, so EOS and stop strings count again (hold back while len(req.output_ids) < min_tokens, not <=)"
        )
    if scene.stretch_min is not None and n < scene.stretch_min and b == "stop":
        return _stop_below_min(scene, n, a, answer)
    if scene.stretch_min is not None and n > scene.stretch_min and a == "stop" and b != "stop" and answer:
        if held_back_stop_spent(answer[0]):
            return STOP_NOT_SPENT
    if (
        a == "stop"
        and b == "length"
        and answer
        and length_before_stop(answer[0], _first(scene, n), scene.eos_ids, *_extra(scene))
    ):
        what = "an EOS" if is_eos and not scene.ignore_eos else "the token that completes a stop string"
        return f"token {n} is {what} and the last allowed (req.max_new_tokens={scene.max_new_tokens}): {LENGTH_BEFORE_STOP}"
    if a == "stop" and scene.ignore_eos and is_eos and answer and eos_skips_stop_search(answer[0], *min0):
        return f"token {n} is {token}, one of eos_ids {sorted(scene.eos_ids)}: {EOS_SKIPS_STOP_SEARCH}"
    if "stop" in (a, b) and answer and _drops_end_ids(answer[0], scene, n):
        return DROPS_END_IDS
    if "stop" in (a, b) and answer and reads_find_as_truth(answer[0], *([0] if scene.stretch_min is not None else [])):
        return FIND_AS_TRUTH
    if a == "stop" and is_eos and not scene.ignore_eos:
        if answer and scene.stop and eos_skipped_with_stops(answer[0], _first(scene, n), scene.eos_ids, *_extra(scene)):
            return f"token {n} is {token}, one of eos_ids {sorted(scene.eos_ids)}, and stop={scene.stop!r}: {EOS_WITH_STOPS}"
        return f"token {n} is {token}, one of eos_ids {sorted(scene.eos_ids)}: the set the scheduler passes, every id of it"
    missed = _how_it_missed(answer[0], scene, n) if a == "stop" and b != "stop" and answer else None
    if missed:
        return missed
    stopped = _missed_stop(answer[0], scene, n) if a == "stop" and b in (None, "length") and answer else None
    if stopped:
        return stopped
    if a == "stop":
        spaced = [s for s in scene.stop if s in _decode(scene.output[:n]) and s != s.strip()]
        if spaced:
            return (
                f"the stop string {spaced[0]!r} is in the decoded output now, spaces included: search the text "
                "exactly as decoded, never stripped or normalized"
            )
        return (
            "a stop string is in the decoded output now: search the whole tail, decoded in one call (it may end "
            "inside the newest token, span several tokens, or be CJK/emoji of several byte tokens each), with a "
            "window sized in bytes by the longest stop string, len(s.encode()), plus a margin"
        )
    if b == "stop" and a != "stop":
        if (
            differs_in_case_only(scene.stop, _decode(scene.output[:n]))
            and answer
            and folds_case(answer[0], *([0] if scene.stretch_min is not None else []))
        ):
            return CASE_SENSITIVE
        stops = changed_stops(answer[0], _first(scene, n), scene.eos_ids, *_extra(scene)) if answer else None
        if stops:
            return f"{stops}: {STOPS_CHANGED}"
        altered = altered_text(answer[0], _first(scene, n), scene.eos_ids, *_extra(scene)) if answer else None
        return f"{altered}: {ALTERED_TEXT}" if altered else _wrong_stop(scene, n, is_eos)
    return _length_hint(scene, n, a, b, is_eos, answer)


def _first(scene: FinishScene, n: int) -> Req:
    """The scene's request holding its first n output tokens."""
    req = _request(scene)
    req.output_ids = list(scene.output[:n])
    return req


def _extra(scene: FinishScene) -> tuple:
    """The arguments after decode: min_tokens for the stretch, none for the base part."""
    return (scene.stretch_min,) if scene.stretch_min is not None else ()


def _missed_stop(fn: Any, scene: FinishScene, n: int) -> Optional[str]:
    """The hint for a stop string the answer missed at token n, where a probe on the same output shows why."""
    req, extra, eos_ids = _first(scene, n), _extra(scene), scene.eos_ids
    if prompt_changes_answer(fn, req, eos_ids, *extra):
        return f"{prompt_changes_answer(fn, req, eos_ids, *extra)}: {PROMPT_CHANGES}"
    if changed_stops(fn, req, eos_ids, *extra):
        return f"{changed_stops(fn, req, eos_ids, *extra)}: {STOPS_CHANGED}"
    if decoded_too_little(fn, req, eos_ids, *extra):
        return decoded_too_little(fn, req, eos_ids, *extra)
    if skips_broken_tail(fn, req, eos_ids, *extra):
        return BROKEN_CHARACTER
    if stops_read(fn, req, eos_ids, *extra):
        return FIRST_STOPS_ONLY
    if later_stop_undoes(fn, req, eos_ids, *extra):
        return LATER_STOP_UNDOES
    if window_of_most_characters(fn, req, eos_ids, *extra):
        return MOST_CHARACTERS
    if per_character_why(fn, *extra):
        return f"{per_character_why(fn, *extra)}: {PER_CHARACTER}"
    lost = lost_search(fn, *([0] if scene.stretch_min is not None else [])) or ("", None)  # no minimum: own requests
    window = window_too_short(fn, *extra)
    return lost[1] or (window[1] if window else None)


def _stop_below_min(scene: FinishScene, n: int, a: Any, answer: Optional[list]) -> str:
    """(stretch) The hint where the answer said 'stop' at token n, below min_tokens: a minimum dropped
    because the length comes first, a 'stop' on the last allowed token (the length ends it), or EOS
    and stop strings not held back."""
    min_tokens, cap = scene.stretch_min or 0, scene.max_new_tokens
    if min_tokens > cap and answer and drops_unreachable_min(answer[0]):
        return f"min_tokens={min_tokens} is above req.max_new_tokens={cap}: " + UNREACHABLE_MIN
    if a == "length":
        return (
            f"token {n} is the last allowed (req.max_new_tokens={cap}) and below min_tokens={min_tokens}: its EOS "
            "or stop string is held back, so the length ends the request: answer 'length' there, never 'stop' "
            "below min_tokens"
        )
    return (
        f"token {n} is below min_tokens={min_tokens}: hold EOS and stop strings back while "
        "len(req.output_ids) < min_tokens" + (" (not min_tokens - 1)" if n == min_tokens - 1 else "")
    )


def _length_hint(scene: FinishScene, n: int, a: Any, b: Any, is_eos: bool, answer: Optional[list]) -> str:
    """The hint where the two lists part on 'length' (or on nothing reason_hint named before): a length
    test one token late or early, the prompt counted, or (stretch) the length not tested below min_tokens."""
    held = (is_eos and not scene.ignore_eos) or any(s and s in _decode(scene.output[:n]) for s in scene.stop)
    below_min = n < (scene.stretch_min or 0)
    if a == "length" and b is None and n == scene.max_new_tokens and below_min and answer:
        req = _request(scene)
        req.output_ids = list(scene.output[:n])
        if length_one_late(answer[0], req, scene.eos_ids, scene.stretch_min):
            return LENGTH_ONE_LATE
    if a == "length" and b is None and n == scene.max_new_tokens and held and below_min:
        return (
            f"output token {n} is the last allowed, req.max_new_tokens={scene.max_new_tokens}, and below "
            f"min_tokens={scene.stretch_min} its EOS or stop string is held back: the length still ends the request, "
            "so test the length even when you hold a 'stop' back, and answer 'length'"
        )
    if a == "length" and b is None and n == scene.max_new_tokens and answer:
        if scene.stretch_min is not None and hides_held_back_eos(answer[0]):
            return HIDDEN_EOS_LENGTH
        return last_allowed_hint(answer[0], n, scene.max_new_tokens, *([0] if scene.stretch_min is not None else []))
    if a == "length":
        return f"{n} output tokens reached req.max_new_tokens={scene.max_new_tokens} (the clamped limit, not sampling_params.max_tokens)"
    if b == "length" and answer:
        return early_length_hint(answer[0], n, scene.max_new_tokens, scene.prompt, scene.stretch_min)
    if b == "length":
        return f"{n} output tokens are below req.max_new_tokens={scene.max_new_tokens}: 'length' only once len(req.output_ids) >= it"
    return HINTS_TEXT


def _wrong_stop(scene: FinishScene, n: int, is_eos: bool) -> str:
    """The hint for a 'stop' where the reference goes on or ends by length: what made it stop."""
    if is_eos and scene.ignore_eos:
        return "ignore_eos turns off the EOS test (and only that one)"
    held = not is_eos and not scene.ignore_eos and any(t in scene.eos_ids for t in scene.output[: n - 1])
    seen = _decode(_ids(scene.prompt) + scene.output[:n])  # a stop string anywhere, the prompt too
    if held and not any(s in seen for s in scene.stop):
        if scene.stretch_min is not None:
            return (
                f"token {n} is not an EOS: an EOS that min_tokens held back earlier does not finish the request "
                "later; once the minimum is reached, test the newest token only, req.output_ids[-1], as check_finish does"
            )
        return f"token {n} is not an EOS: test req.output_ids[-1] only, not every output token"
    if scene.stretch_min is not None:
        outside = _outside_the_tail(scene, n)
        if outside:
            return outside
    return (
        "no stop string is in the output's text yet: decode req.output_ids only (not the prompt), and look only "
        "for the strings of sampling_params.stop"
    )


def _outside_the_tail(scene: FinishScene, n: int) -> Optional[str]:
    """(stretch) The hint where the answer stopped on a stop string that the output's text holds, but only
    before the tail check_finish decodes: it looked back over the whole output (or kept earlier text)."""
    window = max(len(s.encode("utf-8")) for s in scene.stop) + 4 if scene.stop else 0
    text, tail = _decode(scene.output[:n]), _decode(scene.output[:n][-window:]) if window else ""
    early = [s for s in scene.stop if s in text]
    if not early or any(s in tail for s in scene.stop):
        return None
    return (
        f"the stop string {early[0]!r} is in the output's text, but only before the decoded tail that check_finish "
        f"searches (the last {window} tokens: the longest stop string's bytes + 4): from the min_tokens-th token on "
        f"(min_tokens={scene.stretch_min}) apply check_finish unchanged, so a stop string held back earlier that "
        "the tail no longer shows is spent; never search the whole output (or text kept from earlier calls)"
    )


def _how_it_missed(fn: Any, scene: FinishScene, n: int) -> Optional[str]:
    """The hint for a stop string the answer missed at token n, where trying it once more shows how:
    state carried over from earlier calls, or (base part) the window decoded in parts."""
    carried = carries_over(fn, scene, n)
    if carried or scene.stretch_min is not None:
        return carried
    req, calls = _one_fresh_call(fn, scene, n)
    return SPLIT if decoded_in_parts(req, calls) else None


def _one_fresh_call(fn: Any, scene: FinishScene, n: int) -> tuple[Req, list[list[int]]]:
    """The answer called once on a fresh request holding the first n tokens: that request, and the ids
    of each call it made to decode (none when it raised)."""
    req = _request(scene)
    req.output_ids = list(scene.output[:n])
    extra = (scene.stretch_min,) if scene.stretch_min is not None else ()
    calls: list[list[int]] = []
    try:
        fn(req, set(scene.eos_ids), noting_decode(calls), *extra)
    except Exception:
        calls = []
    return req, calls


def carries_over(fn: Any, scene: FinishScene, n: int) -> Optional[str]:
    """The hint for an answer that finds the stop string when called once on a fresh request holding
    the first n tokens, but not when called after each token on one request as the scheduler does:
    it keeps something from earlier calls. None when the fresh call misses it too."""
    extra = (scene.stretch_min,) if scene.stretch_min is not None else ()
    fresh = _request(scene)
    fresh.output_ids = list(scene.output[:n])
    grown, last = _request(scene), [[]]
    try:
        if fn(fresh, set(scene.eos_ids), _decode, *extra) != "stop":
            return None
        for k in range(1, n + 1):  # the scheduler's calls again, recording what the n-th decodes
            grown.output_ids = list(scene.output[:k])
            last[:] = [[]]
            if fn(grown, set(scene.eos_ids), noting_decode(last), *extra) is not None:
                break
    except Exception:
        return None
    one_token = [ids for ids in last if ids]
    how = (
        f"; at token {n} it decoded only the newest token, and a byte token of a CJK character or an emoji "
        "decoded on its own gives '\ufffd', so text joined from such pieces never holds the character"
        if one_token and all(len(ids) == 1 for ids in one_token)
        else ""
    )
    return (
        f"called once on a fresh request holding these {n} tokens your check returns 'stop', but called after each "
        "token on one request, as the scheduler calls it, it does not: it carries something over from earlier calls "
        f"(such as text kept on req){how}. Decode the window from req.output_ids afresh at every call, in one call "
        "of decode"
    )


def _drops_end_ids(fn: Any, scene: FinishScene, n: int) -> bool:
    """Called once on a fresh request holding the first n tokens, the answer decodes the output's
    tail without its end ids."""
    req, calls = _one_fresh_call(fn, scene, n)
    return dropped_end_ids(req, scene.eos_ids, calls)


LATER_STOP_UNDOES = (
    "any stop string of the list that the decoded tail holds finishes the request: a later one that is not "
    "there must not undo an earlier match (a flag set anew on each pass of the loop keeps only the last answer)"
)


def later_stop_undoes(fn: Any, req: Req, eos_ids: set[int], *extra: Any) -> Optional[str]:
    """The stop string of req's list that the output holds, when the answer finds it alone in the list
    but not with a longer one the output does not hold after it (which no window rule sizes smaller):
    a later stop string undoes an earlier match. None when the answer does not do that."""
    text = _decode(req.output_ids)
    found = [s for s in req.sampling_params.stop if s in text]
    absent = "~" * (len(found[0].encode()) + 1) if found else ""
    if not found or absent in text:
        return None

    def probe(stop: list[str]) -> Any:
        sp = replace(req.sampling_params, stop=list(stop))
        return fn(replace(req, sampling_params=sp, output_ids=list(req.output_ids)), set(eos_ids), _decode, *extra)

    try:
        return found[0] if probe([found[0]]) == "stop" and probe([found[0], absent]) in (None, "length") else None
    except Exception:
        return None


HINTS_TEXT = (
    "after each token: 'stop' for an EOS of eos_ids (unless ignore_eos) or a stop string the newest token "
    "completed anywhere in a decoded window of the output (sized in bytes by the longest stop string), then "
    "'length' at req.max_new_tokens, else None"
)
HINTS = {
    "what it returned after each token": reason_hint,
    "req.output_ids after the call": "only read req: leave req.output_ids as it is",
    "req.input_ids": "only read req: leave the prompt as it is",
    "req.sampling_params.stop": "only read the stop list: the detokenizer reads it after you",
}


# Played before the drawn scenes (base part): two ignored EOS ids among the 3 byte tokens of the
# one-character stop string '我', which random draws of end tokens almost never place there
FIXED = [FinishScene("Count for me.", list(ONE_CHARACTER_OUT), set(EOS), ["我"], True, max_new_tokens=8, max_tokens=8)]


def finish_case(reference: Any, stretch: bool = False, examples: int = 200) -> Any:
    """The generated case of `finish` (stretch=False) or `finish_min_tokens`."""
    answer: list = []  # the answer being graded, once its search starts: some hints try it once more
    hints = dict(HINTS)
    hints["what it returned after each token"] = lambda scene, diff: reason_hint(scene, diff, answer)
    case = generated(
        ("stretch: " if stretch else "") + f"generated: {examples} requests grown token by token",
        finish_scenes(stretch),
        named_pattern_errors(lambda fn, scene: play(fn, scene, stretch)),
        show,
        reference,
        hints,
        examples,
        hint=HINTS_TEXT,
        fixed=() if stretch else FIXED,
    )
    search = case.run

    def run(impl: Any) -> None:
        answer[:] = [impl]
        search(impl)

    return replace(case, run=run)
