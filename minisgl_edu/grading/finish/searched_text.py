"""Diagnoses for exercise 1 on WHAT TEXT the answer searched for stop strings: the contract searches
the output's decoded tail exactly as decode returns it, and nothing else.

Three classes of mistakes read a different text:
- something outside the generated text changes the answer: a stop string that the output produces
  is skipped because the prompt holds it too (`prompt_changes_answer`);
- the decoded text is altered before the search: U+FFFD (a character cut between tokens) or the
  whitespace taken out, so the text on both sides joins into a false match (`altered_text`);
- the stop strings are changed before the search (stripped, the empty ones kept or dropped), so
  '\\n\\n' becomes '', which every text holds (`changed_stops`).

Each re-runs the answer on a variant of the request (another prompt; a decode that writes the
characters in question differently; the stop list in its changed form) and names the class only
when the variant changes its answer.
A probe that raises counts as "not this mistake".
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any, Callable, Optional

from minisgl_edu.core import Req
from minisgl_edu.grading.finish.tokens import _decode, _ids
from minisgl_edu.scheduler.finish import check_finish as reference

PROMPT_CHANGES = (
    "only the generated text counts: a stop string that the output produces ends the request whether or not the "
    "prompt (or anything outside req.output_ids) holds it too; search decode(req.output_ids[-window:]) and let "
    "nothing else decide"
)
NEUTRAL_PROMPTS = ["Count for me.", "Hi", "x"]


def prompt_changes_answer(fn: Any, req: Req, eos_ids: set[int], *extra: Any) -> Optional[str]:
    """Where the answer does not say 'stop' for req, yet says it for the same output behind a prompt
    that holds none of the stop strings: what the prompt did, as a sentence. None otherwise."""
    stop = req.sampling_params.stop
    if not stop or not any(s in _decode(list(req.input_ids)) for s in stop):
        return None
    neutral = next((p for p in NEUTRAL_PROMPTS if not any(s in _decode(_ids(p)) for s in stop)), None)
    if neutral is None:
        return None

    def probe(prompt_ids: list[int]) -> Any:
        sp = replace(req.sampling_params, stop=list(stop))
        fresh = replace(req, input_ids=list(prompt_ids), sampling_params=sp, output_ids=list(req.output_ids))
        return fn(fresh, set(eos_ids), _decode, *extra)

    try:
        if probe(list(req.input_ids)) == "stop" or probe(_ids(neutral)) != "stop":
            return None
    except Exception:
        return None
    held = [s for s in stop if s in _decode(list(req.input_ids))]
    return (
        f"the prompt {_decode(list(req.input_ids))!r} holds the stop string {held[0]!r} too; behind the prompt "
        f"{neutral!r}, with the same output, your check returns 'stop': the prompt changed your answer"
    )


ALTERED_TEXT = (
    "search the decoded text exactly as decode returns it: never take out U+FFFD ('\\ufffd', a character cut "
    "between tokens) or whitespace, nor normalize it, before the search; the text on both sides of a broken "
    "character (or a space) does not join into a stop string"
)
# (what the answer may have taken out, the characters it is, a test for one character)
REMOVALS: list[tuple[str, Callable[[str], bool]]] = [
    ("the U+FFFD of a broken character ('\\ufffd')", lambda c: c == "\ufffd"),
    ("the whitespace", str.isspace),
]


def altered_text(fn: Any, req: Req, eos_ids: set[int], *extra: Any) -> Optional[str]:
    """Where the answer says 'stop' for req though no stop string is in the decoded output, and a stop
    string shows in that text with U+FFFD (or whitespace) taken out, and the answer no longer says
    'stop' when decode writes those characters as '\\x00': what it took out, as a sentence. None otherwise."""
    stop, text = req.sampling_params.stop, _decode(list(req.output_ids))
    if not stop or any(s in text for s in stop):
        return None
    for what, drops in REMOVALS:
        joined = [s for s in stop if s in "".join(c for c in text if not drops(c))]
        if not joined or any(drops(c) for s in stop for c in s):
            continue

        def marked(ids: list[int]) -> str:
            return "".join("\x00" if drops(c) else c for c in _decode(ids))

        def probe(decode: Callable[[list[int]], str]) -> Any:
            fresh = replace(req, sampling_params=replace(req.sampling_params), output_ids=list(req.output_ids))
            return fn(fresh, set(eos_ids), decode, *extra)

        try:
            if probe(_decode) != "stop" or probe(marked) == "stop":
                continue
        except Exception:
            continue
        return (
            f"the decoded output {text!r} does not hold the stop string {joined[0]!r}; it shows only with {what} "
            "taken out, and your check stops on it"
        )
    return None


STOPS_CHANGED = (
    "the stop strings were changed (stripped) before the search: search for each string of sampling_params.stop "
    "exactly as given, whitespace included (never strip(), lower() or otherwise rewrite them, and keep the ones "
    "made of whitespace only: '\\n\\n' stripped is '', which every text holds, and ' four' stripped is 'four', "
    "which 'Fourfold' or 'fourteen' hold)"
)
# (what was done to the stop list, the list it gives)
STOP_CHANGES: list[tuple[str, Callable[[list[str]], list[str]]]] = [
    ("stripped", lambda stop: [s.strip() for s in stop]),
    ("stripped, the empty ones dropped", lambda stop: [s.strip() for s in stop if s.strip()]),
    ("stripped on the right", lambda stop: [s.rstrip() for s in stop]),
    ("stripped on the left", lambda stop: [s.lstrip() for s in stop]),
]


def changed_stops(fn: Any, req: Req, eos_ids: set[int], *extra: Any) -> Optional[str]:
    """Where the answer's return for req (no EOS deciding it) follows a changed stop list, not the
    one given: 'stop' exactly when the decoded output holds a string of the changed list, while the
    given list says otherwise, and the answer returns the same for the changed list itself (and it
    finds a stop string of one character at the end of the text, so it does search the stop strings
    of this request), and it is right on the same output for stop strings that stripping leaves as
    they are (right_where_stripping_changes_nothing). What was done to the stop strings, as a
    sentence; None otherwise."""
    stop, text = list(req.sampling_params.stop), _decode(list(req.output_ids))
    if not stop or (req.output_ids and req.output_ids[-1] in eos_ids and not req.sampling_params.ignore_eos):
        return None
    truth, last = any(s in text for s in stop), text.strip()[-1:]
    if not last:
        return None

    def probe(stops: list[str]) -> Any:
        sp = replace(req.sampling_params)
        sp.stop = list(stops)  # set after __post_init__, which drops empty strings
        return fn(replace(req, sampling_params=sp, output_ids=list(req.output_ids)), set(eos_ids), _decode, *extra)

    for what, change in STOP_CHANGES:
        changed = change(stop)
        if changed == stop or any(s in text for s in changed) == truth:
            continue
        try:
            got = probe(stop)
            if (got == "stop") == truth or got != probe(changed) or probe([last]) != "stop":
                continue
            if not right_where_stripping_changes_nothing(fn, req, eos_ids, *extra):
                continue
        except Exception:
            continue
        return (
            f"with stop={stop!r} your check returns {got!r} for the output {text!r}, which is the answer for the stop "
            f"strings {what}, {changed!r} (and it returns {got!r} for that list too)"
        )
    return None


def right_where_stripping_changes_nothing(fn: Any, req: Req, eos_ids: set[int], *extra: Any) -> bool:
    """The control of `changed_stops`: on req's output, with each word of its decoded text (no
    whitespace around it, so stripping changes nothing) as the only stop string, the answer returns
    what the reference returns. An answer whose only mistake is a changed stop list passes; one that
    misses these too (a search skipped, a window too short) made another mistake. False where the
    text has no word to try."""
    words = list(dict.fromkeys(_decode(list(req.output_ids)).split()))[-6:]
    for word in words:
        sp = replace(req.sampling_params)
        sp.stop = [word]
        fresh = replace(req, sampling_params=sp, output_ids=list(req.output_ids))
        want = reference(replace(fresh, sampling_params=replace(sp)), set(eos_ids), _decode)
        if extra and len(req.output_ids) < extra[0]:
            want = "length" if len(req.output_ids) >= req.max_new_tokens else None
        if fn(fresh, set(eos_ids), _decode, *extra) != want:
            return False
    return bool(words)
