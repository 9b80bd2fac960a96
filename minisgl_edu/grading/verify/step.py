"""Exercise 8's comparison that names the mistake a wrong result shows (`explain`, `diagnose`), and
`_check`, the unit cases' call of the answer against the package's step. The unit cases (base.py),
the engine cases (engine.py) and the generated phase (scenes.py) use them.

Where a field of the student's result differs from the package's, the step written again with each
known mistake in turn (plain.py) names the mistake whose result matches; a few probes run the answer
once more on a step that tells two mistakes apart. Pages have their own module (pages.py).
"""

from __future__ import annotations

from typing import Optional

from minisgl_edu.grading.core import Mistake
from minisgl_edu.grading.harness import tokenizer
from minisgl_edu.grading.verify.after_finish import AFTER_FINISH, appends_the_model_token
from minisgl_edu.grading.verify.char_tail import char_tail_class
from minisgl_edu.grading.verify.every_stop import needs_every_stop
from minisgl_edu.grading.verify.from_prefix import FROM_PREFIX, FROM_PREFIX_HINT, counts_from_prefix
from minisgl_edu.grading.verify.identity import COMPARED_BY_IDENTITY, COMPARED_BY_IDENTITY_HINT, compares_by_identity
from minisgl_edu.grading.verify.ignored_eos import DROPPED, drops_ignored_eos
from minisgl_edu.grading.verify.kept_list import KEPT_LIST, KEPT_LIST_HINT, keeps_a_list
from minisgl_edu.grading.verify.last_index import LAST_INDEX, LAST_INDEX_HINT, stops_on_the_last_index
from minisgl_edu.grading.verify.late_checks import LATE, LATE_HINT, late_here
from minisgl_edu.grading.verify.letter_case import LETTER_CASE, LETTER_CASE_HINT, ignores_case_here
from minisgl_edu.grading.verify.mistakes import _KV, ALL_MISTAKES, HINTS, MISTAKES
from minisgl_edu.grading.verify.no_break import keeps_going
from minisgl_edu.grading.verify.pages import _pages_on_a_longer_row, confirmed, page_class, page_mistake, pages_story
from minisgl_edu.grading.verify.past_the_end import ACCEPT_PAST_THE_END, reads_past_the_drafts
from minisgl_edu.grading.verify.plain import _step
from minisgl_edu.grading.verify.prompt_length import counts_the_prompt
from minisgl_edu.grading.verify.repeated import PLACE_BY_VALUE, PLACE_BY_VALUE_HINT, finds_places_by_value, run_repeats
from minisgl_edu.grading.verify.requests import FIELDS, PAGE, _call, _copy, _decode, _id, _req, _w
from minisgl_edu.grading.verify.skipped import skipped_check
from minisgl_edu.grading.verify.stop_match import match_class
from minisgl_edu.grading.verify.stripped import STRIPPED, STRIPPED_HINT, strips_it_here
from minisgl_edu.grading.verify.true_division import naming_float_pages
from minisgl_edu.grading.verify.whitespace import WHITESPACE, WHITESPACE_HINT, loosens_it_here
from minisgl_edu.grading.verify.window import window_class
from minisgl_edu.scheduler.verify_step import VerifyRequest, VerifyResult
from minisgl_edu.scheduler.verify_step import verify_step as package_step

__all__ = ["PAGE", "MISTAKES", "_step", "_copy", "_id", "_req", "diagnose", "explain", "describe", "_check"]


def _words(ids: list[int]) -> str:
    return "[" + ", ".join(f"{t} {_decode([t])!r}" if _decode([t]) else str(t) for t in ids) + "]"


def describe(req: VerifyRequest, drafts: list[int], targets: list[int], words: bool = True) -> str:
    """The situation of one step, as a failure message shows it."""
    show = _words if words else str
    parts = [
        f"output so far {show(req.output_ids[-6:])}" + (" (its last 6)" if len(req.output_ids) > 6 else ""),
        f"{len(req.output_ids)} of max_new_tokens {req.max_new_tokens}",
    ]
    if req.ignore_eos:
        parts.append("ignore_eos")
    if req.stop:
        parts.append(f"stop {req.stop}")
    parts.append(f"drafts {show(drafts)}, targets {show(targets)}")
    parts.append(
        f"prompt_len {req.prompt_len}, pages {req.pages} (page_size {req.page_size}"
        + (f", prefix_len {req.prefix_len}" if req.prefix_len else "")
        + ")"
    )
    return "; ".join(parts)


def explain(got: VerifyResult, want: VerifyResult, req, drafts, targets, mistakes=ALL_MISTAKES, fn=None) -> str:
    """What differs, and the known mistake that gives the student's result, if one does."""
    return diagnose(got, want, req, drafts, targets, mistakes, fn)[0]


def diagnose(
    got: VerifyResult, want: VerifyResult, req, drafts, targets, mistakes=ALL_MISTAKES, fn=None
) -> tuple[str, str]:
    """`explain`'s text, and the hint for the mistake it names ("" when it names none). `fn`: the
    answer, tried on a longer row when its pages fit two page mistakes alike."""
    hint = ""
    first = first_field(got, want)
    text = f"{first}: yours {getattr(got, first)!r}, expected {getattr(want, first)!r}"
    # tokens of earlier calls in the result make every field look like some other mistake: asked first
    if keeps_a_list(fn):
        return f"{text}. {KEPT_LIST[0].upper()}{KEPT_LIST[1:]}", KEPT_LIST_HINT
    if first in ("accepted", "tokens") and fn is not None and compares_by_identity(fn):
        return f"{text}. {COMPARED_BY_IDENTITY[0].upper()}{COMPARED_BY_IDENTITY[1:]}", COMPARED_BY_IDENTITY_HINT
    if first == "accepted" and got.accepted == len(drafts) - 1 and fn is not None and stops_on_the_last_index(fn):
        return f"{text}. {LAST_INDEX[0].upper()}{LAST_INDEX[1:]}", LAST_INDEX_HINT
    # a run that repeats a token is cut wrong by an answer that looks places up by value (repeated.py)
    by_value = first in ("tokens", "finish_reason") and run_repeats(req, drafts, targets, want.accepted)
    if by_value and fn is not None and finds_places_by_value(fn):
        return f"{text}. {PLACE_BY_VALUE[0].upper()}{PLACE_BY_VALUE[1:]}", PLACE_BY_VALUE_HINT
    if first == "kv_len":
        story, hint = kv_story(req, drafts, want, got.kv_len, fn)
        return f"{text}. {story}", hint
    if first == "free_pages":
        story, hint = pages_story(req, want, got.free_pages)
        named = page_class(fn, req, drafts, targets, want, got.free_pages)
        if named:
            return f"{text}. {story}: {named}", named
        m = page_mistake(req, drafts, targets, got.free_pages, mistakes)
        m = confirmed(m, fn, req, drafts, targets, got.free_pages)
        if m is None and fn is not None:
            m = _pages_on_a_longer_row(fn, req, drafts, targets, mistakes)
        if m:
            story, hint = f"{story}: {MISTAKES[m]}", MISTAKES[m]
        return f"{text}. {story}", hint
    # the checks one token late, or a stop string matched by another test than `in`: read from the answer
    by_probe = _probed_finish(fn, req, drafts, targets, got) if first in ("tokens", "finish_reason") else None
    if by_probe:
        return f"{text}. {by_probe[0][0].upper()}{by_probe[0][1:]}", by_probe[1]
    if _no_drafts_unchecked(fn, got, want, req, drafts, targets):
        return f"{text}. {NO_DRAFTS_UNCHECKED[0].upper()}{NO_DRAFTS_UNCHECKED[1:]}", NO_DRAFTS_UNCHECKED
    tail = window_class(fn, req, drafts, targets, got) if first in ("tokens", "finish_reason") else None
    if tail:
        return f"{text}. {tail[0].upper()}{tail[1:]}", tail
    # a stop string found in text whose whitespace differs from it: no mistake of the list gives that
    if first in ("tokens", "finish_reason") and loosens_it_here(fn, req, drafts, targets, got):
        return f"{text}. {WHITESPACE[0].upper()}{WHITESPACE[1:]}", WHITESPACE_HINT
    # a stop string found in text whose letter case differs from it: the text or the stops were lowered
    if first in ("tokens", "finish_reason") and ignores_case_here(fn, req, drafts, targets, got):
        return f"{text}. {LETTER_CASE[0].upper()}{LETTER_CASE[1:]}", LETTER_CASE_HINT
    # a stop string missed where whitespace at an end of the tail completes it: the tail was stripped
    if first in ("tokens", "finish_reason") and strips_it_here(fn, req, drafts, targets, got):
        return f"{text}. {STRIPPED[0].upper()}{STRIPPED[1:]}", STRIPPED_HINT
    variants = {m: _step(req, drafts, targets, m) for m in mistakes}
    whole = [m for m, r in variants.items() if r == got]
    # a mistake whose result differs first in another field would name another mistake than this one
    field_only = [
        m for m, r in variants.items() if first_field(r, want) == first and getattr(r, first) == getattr(got, first)
    ]
    named = whole or field_only
    if fn is not None and STOP_DECODING & set(named):
        named = _stop_decoding_told_apart(named, fn)
    named = _probed_classes(named, fn)
    named = _length_told_apart(named, fn)
    # a probe of the answer that names the skipped check is surer than these results of the same shape
    shapes = ([], ["finish_on_last_only"], ["length_not_on_model_token"], ["length_overshoot"])
    skipped = skipped_check(fn, req, drafts, targets, want, got) if named[:1] in shapes else ""
    if skipped:
        return f"{text}. {skipped[0].upper()}{skipped[1:]}", skipped
    if "whole_run" in named and fn is not None and not whole_run_probed(fn):
        named = [m for m in named if m != "whole_run"]
    if not named and first == "finish_reason" and (want.finish_reason, got.finish_reason) == ("length", "stop"):
        return f"{text}. {LENGTH_NOT_FIRST[0].upper()}{LENGTH_NOT_FIRST[1:]}", LENGTH_NOT_FIRST
    if named:
        text += f". {MISTAKES[named[0]][0].upper()}{MISTAKES[named[0]][1:]}"
        hint = HINTS[named[0]]
        if len(named) > 1:  # this input does not tell the two apart
            text += f" (or: {MISTAKES[named[1]]})"
    elif first == "accepted" and got.accepted == len(want.tokens) - 1 and fn is not None and caps_the_drafts(fn):
        text += f". {CAPPED[0].upper()}{CAPPED[1:]}"
        hint = CAPPED
    elif first == "accepted" and got.accepted < want.accepted and got.accepted - len(want.tokens) in (-1, 0):
        # the drafts among the tokens kept (with or without the model's token): a count after the cut
        text += (
            ". accepted counts the drafts the model agreed with, before any cut by a finish (the acceptance "
            "rate is about the drafts), not the drafts among the tokens kept: those are fewer when a finish "
            "cut the run"
        )
        hint = "accepted counts the drafts the model agreed with, before any cut by a finish"
    return text, hint


STOP_DECODING = {"stop_per_token", "stop_new_only"}


def _probed_finish(fn, req, drafts, targets, got: VerifyResult) -> Optional[tuple[str, str]]:
    """(message, hint) when the answer's result here is that of finish checks run before the token is
    appended (late_checks.py), of a stop string test other than `in` (stop_match.py), of a tail cut in
    characters (char_tail.py) or of a length test that counts the prompt (prompt_length.py), and its own probes
    confirm it: tried before the list of mistakes, whose length and window mistakes look the same here."""
    if late_here(fn, req, drafts, targets, got):
        return LATE, LATE_HINT
    # a tail of characters, or a length test that counts the prompt: they look like a window too short,
    # or a length test one early, on these steps
    return (
        match_class(fn, req, drafts, targets, got)
        or char_tail_class(fn, req, drafts, targets, got)
        or counts_the_prompt(fn, req, drafts, targets, got)
    )


NO_DRAFTS_UNCHECKED = (
    "a step with no drafts (only the model's own token) is still checked for EOS, stop strings and "
    "max_new_tokens: that token is a new output token like any other, so it can finish the request"
)


def _no_drafts_unchecked(fn, got: VerifyResult, want: VerifyResult, req, drafts, targets) -> bool:
    """A step without drafts that should finish was left unfinished, while the answer finishes the
    same request right when that same model's token comes after one rejected draft: the finish
    checks run on a run with drafts only, so a step with no drafts skips them."""
    if fn is None or drafts or not want.finish_reason or got.finish_reason or list(got.tokens) != list(want.tokens):
        return False
    t = targets[0]
    other = _id(" one") if t != _id(" one") else _id(" two")
    probe = ([other], [t, t])  # draft 0 rejected: the run is the model's token t alone
    try:
        with_draft = _call(fn, _copy(req), *probe)
    except Exception:
        return False
    return with_draft == package_step(_copy(req), *probe)


def _finds_stop(fn, output: list[str], drafts: list[str], model_token: str) -> Optional[bool]:
    """Whether the answer ends the run with 'stop' where the stop string 'two three' completes on
    the run's last token, in either of two steps: with that token as the model's own (after
    `drafts`), or as an accepted draft (then the model's token ' five' follows and is cut). True when
    it finds it in either (None when it raised), so an answer that skips only the model's token is
    not taken for one that decodes too little text."""
    found = False
    for words, bonus in ((list(drafts), model_token), ([*drafts, model_token], " five")):
        req = _req(_w(*output), len(words), stop=("two three",))
        run = _w(*words, bonus)
        keep = run if bonus == model_token else run[:-1]
        try:
            got = _call(fn, req, _w(*words), run)
        except Exception:
            return None
        found = found or (got.finish_reason == "stop" and got.tokens == keep)
    return found


def stop_decoding_mistake(fn) -> Optional[str]:
    """Which way of decoding too little text the answer has, told apart by two steps: 'two three'
    across two of this step's new tokens (found when the new tokens are decoded together), and
    'two three' begun in the output before this step (found only when that output is decoded with
    them). "stop_per_token" when it misses both, "stop_new_only" when it misses only the second,
    None when it finds both (or anything else)."""
    together = _finds_stop(fn, [" one"], [" two"], " three")
    with_output = _finds_stop(fn, [" one", " two"], [], " three")
    if together is False and with_output is False:
        return "stop_per_token"
    if together and with_output is False:
        return "stop_new_only"
    return None


def _stop_decoding_told_apart(named: list[str], fn) -> list[str]:
    """`named` where a step could not tell the answer's stop-string mistake apart from the other
    (a stop string begun before this step is missed both when each token is decoded alone and when
    only this step's tokens are): the one the answer makes alone, or neither when it makes neither."""
    made = stop_decoding_mistake(fn)
    if made in named:
        return [made]
    return [m for m in named if m not in STOP_DECODING]


def model_token_unchecked(fn) -> bool:
    """The answer ends the run on an EOS id or a completed stop string when it is an accepted draft,
    and misses the same when it is the model's own token (the last of the run): its finish checks
    skip the model's token."""
    one, two, three, four = _w(" one", " two", " three", " four")
    stop = ("two three",)
    try:
        eos_draft = _call(fn, _req([one], 2), [two, 2], [two, 2, four])
        eos_model = _call(fn, _req([one], 1), [two], [two, 2])
        stop_draft = _call(fn, _req([one], 2, stop=stop), [two, three], [two, three, four])
        stop_model = _call(fn, _req([one], 1, stop=stop), [two], [two, three])
    except Exception:
        return False
    eos = eos_draft.finish_reason == "stop" and eos_model.finish_reason != "stop"
    return eos or (stop_draft.finish_reason == "stop" and stop_model.finish_reason != "stop")


def decodes_in_pieces(fn) -> bool:
    """The answer finds 'two three' begun in the output before this step, and misses '🚀' whose four
    bytes (three tokens) are split between the output and this step's drafts: it decodes the output's
    tail and the new tokens apart and joins the strings, so a character across the join is lost."""
    ids = tokenizer().encode("go 🚀 now")  # 'go', ' ' with the rocket's first byte, two byte tokens, ' now'
    if len(ids) != 5 or "🚀" not in _decode(ids[:4]):
        return False
    try:
        got = _call(fn, _req(ids[:2], 2, stop=("🚀",)), ids[2:4], ids[2:5])
    except Exception:
        return False
    return got.finish_reason != "stop" and _finds_stop(fn, [" one", " two"], [], " three") is True


STOP_TEXT = {
    "stop_per_token",
    "stop_new_only",
    "stop_in_pieces",
    "stop_window_chars",
    "stop_window_bytes",
    "stop_window_margin",
    "stop_window_most_chars",
    "stop_window_shorter",
}


def _probed_classes(named: list[str], fn) -> list[str]:
    """`named` where a step cannot tell two newer classes of mistake from others: the model's own token
    not checked for EOS / stop strings, and the text decoded in pieces; also a loop that does not stop at
    the finish (no_break.py), the model's token appended after the finish (after_finish.py) and an end id
    that ignore_eos lets pass left out of the tokens (ignored_eos.py). Each is named alone when the
    answer, tried on the steps that show it, makes it; else it is not named. Requiring every stop string is told the same way: on a step it often looks
    like a tail too short for the longer one."""
    if "stop_all" in named:
        if fn is not None and needs_every_stop(fn):
            return ["stop_all"]
        named = [m for m in named if m != "stop_all"]
    if "no_break" in named:  # its tokens are those of a finish checked on the last token only
        if fn is not None and keeps_going(fn):
            return ["no_break"]
        named = [m for m in named if m != "no_break"]
    if AFTER_FINISH in named:  # on a finish at the last draft its tokens too are the whole run
        if fn is not None and appends_the_model_token(fn):
            return [AFTER_FINISH]
        named = [m for m in named if m != AFTER_FINISH]
    if DROPPED in named:  # fewer tokens, as many other mistakes of the run give on one step
        if fn is not None and drops_ignored_eos(fn):
            return [DROPPED]
        named = [m for m in named if m != DROPPED]
    if "finish_not_on_model_token" in named:
        if fn is not None and model_token_unchecked(fn):
            return ["finish_not_on_model_token"]
        named = [m for m in named if m != "finish_not_on_model_token"]
    if STOP_TEXT & set(named) and fn is not None and decodes_in_pieces(fn):
        return ["stop_in_pieces"]
    return [m for m in named if m != "stop_in_pieces"]


def length_one_past(fn) -> bool:
    """The answer goes on at the max_new_tokens-th token (the model's token of a step without drafts,
    4 of max 4), and answers 'length' one token later (a run of 2 tokens, 5 of max 4): its length test
    is > where >= is due."""
    one, two, three = _w(" one", " two", " three")
    try:
        at = _call(fn, _req([one] * 3, 0, max_new=4), [], [two])
        past = _call(fn, _req([one] * 3, 1, max_new=4), [two], [two, three])
    except Exception:
        return False
    return (at.tokens, at.finish_reason, past.tokens, past.finish_reason) == ([two], None, [two, three], "length")


def length_one_early(fn) -> bool:
    """The answer answers 'length' at the (max_new_tokens - 1)-th token (the model's token of a step
    without drafts, 3 of max 4), and cuts a run of 2 tokens after its first (also 3 of max 4): its
    length test fires one token before the last allowed."""
    one, two, three = _w(" one", " two", " three")
    try:
        at = _call(fn, _req([one] * 2, 0, max_new=4), [], [two])
        run = _call(fn, _req([one] * 2, 1, max_new=4), [two], [two, three])
    except Exception:
        return False
    return (at.tokens, at.finish_reason, run.tokens, run.finish_reason) == ([two], "length", [two], "length")


# the mistakes each length test off by one looks like on the step that shows it
_LOOKS_LIKE = {
    "length_one_past": ("finish_on_last_only",),
    "length_one_early": ("finishing_token_dropped", "whole_run"),
}


def _length_told_apart(named: list[str], fn) -> list[str]:
    """`named` where a step could not tell a length test one token off from another mistake (a run
    cut one token past max_new_tokens looks like a run that went on past its finish; one cut a token
    short looks like a dropped finishing token or checks that saw the whole run): the length test
    first when the answer makes it (then not the other, which the same run shows), else not by that
    name."""
    for m, alike in _LOOKS_LIKE.items():
        if m not in named:
            continue
        if fn is not None and (length_one_past if m == "length_one_past" else length_one_early)(fn):
            return [m] + [x for x in named if x != m and x not in alike]
        named = [x for x in named if x != m]
    return named


LENGTH_NOT_FIRST = (
    "your step answered 'stop', though no EOS or stop string finishes the request up to that token: the length "
    "limit was not tested on each new token as it came (tested once after the loop, or not at all), so something "
    "after the max_new_tokens-th token decided. Test the length for each new token in the same loop as EOS and "
    "stop strings, and stop at the first that finishes"
)


def whole_run_probed(fn) -> bool:
    """On a step that tells checks seeing the whole run from a length tested only after the loop (a
    length reached on the run's last token, or a stop string completed at the run's middle token), the
    answer's result is that of checks that see the whole run."""
    one, two, three = _w(" one", " two", " three")
    probes = [
        (_req([one] * 2, 1, max_new=4), [two], [two, three]),
        (_req([], 2, stop=(" two",)), [one, two], [one, two, three]),
    ]
    try:
        return any(_call(fn, _copy(r), list(d), list(t)) == _step(r, d, t, "whole_run") for r, d, t in probes)
    except Exception:
        return False


CAPPED = (
    "accepted counts every draft the model agreed with, also past max_new_tokens: do not cut the drafts to the "
    "tokens left yourself; count first, then the length limit cuts the tokens"
)


def caps_the_drafts(fn) -> bool:
    """The answer counts the drafts right when an EOS cuts the run (2 of 3 drafts kept, accepted 3):
    so an accepted too small at a length cut comes from cutting the drafts to the tokens left."""
    req = _req([_id(" one")], 3)
    drafts = _w(" two") + [2] + _w(" three")
    try:
        got = _call(fn, req, drafts, drafts + _w(" four"))
    except Exception:
        return False
    return got.accepted == 3 and got.tokens == drafts[:2]


def first_field(a: VerifyResult, b: VerifyResult) -> Optional[str]:
    return next((f for f in FIELDS if getattr(a, f) != getattr(b, f)), None)


def _kv_right_without_a_cut(fn) -> bool:
    """The answer's kv_len is right on a step that no finish cuts: so a kv_len one too big on a step
    cut one token short counts the tokens after the finish, not the newest token."""
    req = _req([_id(" one")], 3)
    drafts = _w(" two", " three", " four")
    try:
        got = _call(fn, req, drafts, drafts + _w(" five"))
    except Exception:
        return False
    return got.kv_len == package_step(_copy(req), list(drafts), drafts + _w(" five")).kv_len


KV_NEWEST_AT_A_FINISH = (
    "kv_len counted the newest token on a step that finishes the request (on a step no finish cuts, yours is "
    "right): a finish changes nothing in the roll back, valid positions stop one before the newest token there "
    "too, as after any decode step (the prefix cache takes kv_len tokens when the request ends). kv_len is "
    "prompt_len + len(output_ids) + len(tokens) - 1, whatever the finish"
)


def _newest_at_a_finish(fn) -> bool:
    """The answer's kv_len counts the newest kept token on a step an EOS cuts and on one max_new_tokens
    cuts (either), and never the tokens cut off: it counts the newest token only when the step
    finishes. Two steps, each cutting two tokens off a run of four."""
    one, two, three, four, five = _w(" one", " two", " three", " four", " five")
    steps = [
        (_req([one], 3), [two, 2, three], [two, 2, three, four]),  # keeps [two, 2]
        (_req([one], 3, max_new=2), [two, three, four], [two, three, four, five]),  # keeps [two]
    ]
    newest = False
    for req, drafts, targets in steps:
        try:
            got = _call(fn, req, drafts, targets).kv_len
        except Exception:
            return False
        want = package_step(_copy(req), list(drafts), list(targets))
        if got not in (want.kv_len, want.kv_len + 1):
            return False
        newest = newest or got == want.kv_len + 1
    return newest


def kv_story(req: VerifyRequest, drafts: list[int], want: VerifyResult, got: int, fn=None) -> tuple[str, str]:
    """What a wrong kv_len counted, from the direction and size of the difference, and its hint
    (`fn`: the answer, tried on a step without a finish where two mistakes give this kv_len)."""
    before = req.prompt_len + len(req.output_ids)
    total = before + len(want.tokens)
    known = {total: "kv_counts_newest", want.kv_len - req.prompt_len: "kv_no_prompt"}
    if want.accepted < len(drafts):  # with every draft accepted there is no rejected one to count
        known[before + len(drafts)] = "kv_counts_rejected"
    if len(want.tokens) > 1:
        known[before] = "kv_no_drafts"
    if want.finish_reason is not None and want.accepted + 1 > len(want.tokens):
        uncut = before + min(want.accepted + 1, len(drafts) + 1) - 1
        known.setdefault(uncut, "kv_uncut")
        if got == uncut == total and fn is not None and _kv_right_without_a_cut(fn):
            known[uncut] = "kv_uncut"
    if got == total and want.finish_reason and fn is not None and _kv_right_without_a_cut(fn):
        if _newest_at_a_finish(fn):
            return KV_NEWEST_AT_A_FINISH[0].upper() + KV_NEWEST_AT_A_FINISH[1:], KV_NEWEST_AT_A_FINISH
    # short by the prompt after the prefix: counted from prefix_len (with no prefix, that is all the prompt)
    if got == want.kv_len - req.prompt_len + req.prefix_len and fn is not None and counts_from_prefix(fn):
        return FROM_PREFIX[0].upper() + FROM_PREFIX[1:], FROM_PREFIX_HINT
    if got in known and got != want.kv_len:
        m = known[got]
        return MISTAKES[m][0].upper() + MISTAKES[m][1:], f"{MISTAKES[m]} ({HINTS[m]})"
    return (
        f"valid K/V covers the prompt ({req.prompt_len}), the output before this step ({len(req.output_ids)}) and "
        f"the {len(want.tokens)} new tokens, all but the newest: {want.kv_len}",
        _KV,
    )


def _check(fn, req: VerifyRequest, drafts: list[int], targets: list[int], why: str, mistakes=ALL_MISTAKES) -> None:
    try:
        with naming_float_pages(fn, req, drafts, targets):  # a TypeError of a float page count: its hint
            got = _call(fn, req, drafts, targets)
    except IndexError as e:  # the crash keeps its message (the student's line); the hint names the loop
        if reads_past_the_drafts(fn):
            e.hint = ACCEPT_PAST_THE_END
        raise
    want = package_step(_copy(req), list(drafts), list(targets))
    if got == want:
        return
    text, hint = diagnose(got, want, req, drafts, targets, mistakes, fn)
    raise Mistake(f"{why} ({describe(req, drafts, targets)}): {text}", hint)
