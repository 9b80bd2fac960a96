"""Exercise 8's shared pieces: hand-made requests, the step written again as plain loops with one
known mistake switched on at a time (`_step`), and the comparison that names the mistake a wrong
result shows (`explain`). The unit cases (base.py) and the engine cases (engine.py) both use them.

The unit cases build `VerifyRequest`s by hand, with the default model's real tokenizer as `decode`
(a stop string spans tokens there) and pages of 4 positions. Where a field of the student's result
differs from the package's, `_step` recomputes the step with each known mistake in turn and the
failure names the mistake whose result matches.
"""

from __future__ import annotations

import dataclasses
from typing import Optional

from minisgl_edu.grading.core import Mistake
from minisgl_edu.grading.harness import tokenizer
from minisgl_edu.grading.verify.mistakes import _KV, _PAGES, ALL_MISTAKES, HINTS, MISTAKES, PAGE_MISTAKES
from minisgl_edu.kvcache.manager import pages_for
from minisgl_edu.scheduler.verify_step import VerifyRequest, VerifyResult
from minisgl_edu.scheduler.verify_step import verify_step as package_step

EOS = {0, 2}  # SmolLM2's <|endoftext|> and <|im_end|>
PAGE = 4  # the page size of the unit cases and of the grading engine
FIELDS = ("accepted", "tokens", "finish_reason", "kv_len", "free_pages")


def _decode(ids: list[int]) -> str:
    """What the scheduler passes as `decode` (Scheduler._decode_tail)."""
    return tokenizer().decode(ids, skip_special_tokens=True)


def _id(word: str) -> int:
    ids = tokenizer().encode(word)
    assert len(ids) == 1, f"setup: {word!r} should be one token"
    return ids[0]


def _req(
    output: list[int],
    drafts: int,
    *,
    prompt_len: int = 10,
    max_new: int = 50,
    ignore_eos: bool = False,
    stop: tuple[str, ...] = (),
    prefix_len: int = 0,
) -> VerifyRequest:
    """A request as the scheduler sees it before the step: pages reserved for its prompt, its
    output and `drafts` drafts (what `_schedule_decode` reserves), with page ids that are not in
    order, as in a real row."""
    held = pages_for(prompt_len + len(output) + drafts, PAGE)
    pages = [(37 * i + 11) % 101 for i in range(held)]
    return VerifyRequest(
        prompt_len=prompt_len,
        output_ids=list(output),
        max_new_tokens=max_new,
        eos_ids=set(EOS),
        ignore_eos=ignore_eos,
        stop=list(stop),
        decode=_decode,
        pages=pages,
        page_size=PAGE,
        prefix_len=prefix_len,
    )


def _copy(req: VerifyRequest) -> VerifyRequest:
    return dataclasses.replace(
        req, output_ids=list(req.output_ids), eos_ids=set(req.eos_ids), stop=list(req.stop), pages=list(req.pages)
    )


# --- the step as plain loops, with one mistake switched on at a time ------------------------------


def _accept(drafts: list[int], targets: list[int], mistake: Optional[str]) -> tuple[int, list[int]]:
    """(drafts the model agreed with, the run before any cut)."""
    if mistake == "past_mismatch":
        agreed = [d for d, t in zip(drafts, targets) if d == t]
        n = len(agreed)
        return n, agreed + targets[n : n + 1]
    n = 0
    while n < len(drafts) and n < len(targets) and drafts[n] == targets[n]:
        n += 1
    run = list(drafts[:n])
    if mistake == "rejected_draft_kept" and n < len(drafts):
        return n, run + [drafts[n]]
    if mistake == "model_token_missing" or (mistake == "no_bonus" and n == len(drafts)):
        return n, run
    if mistake == "model_token_next" and n + 1 < len(targets):
        return n, run + [targets[n + 1]]
    if mistake == "model_token_last":
        return n, run + targets[-1:]
    return n, run + [targets[n]]


def _finish(
    req: VerifyRequest, output: list[int], new_from: int, model_token: bool, mistake: Optional[str], token=None
):
    """The finish check of the newest token of `output` (the request's tokens so far, this step's
    from `new_from`; `token`: the one checked, when `output` runs past it)."""
    eos = (output[-1] if token is None else token) in req.eos_ids and (
        not req.ignore_eos or mistake == "ignore_eos_ignored"
    )
    stop = False
    if req.stop and not (mistake == "ignore_eos_stops_off" and req.ignore_eos):
        if mistake == "stop_per_token":
            text = req.decode(output[-1:])
        elif mistake == "stop_new_only":
            text = req.decode(output[new_from:])
        elif mistake == "stop_window_chars":
            text = req.decode(output[-(max(len(s) for s in req.stop) + 4) :])
        elif mistake == "stop_window_bytes":
            text = req.decode(output[-max(len(s.encode("utf-8")) for s in req.stop) :])
        elif mistake == "stop_window_most_chars":
            text = req.decode(output[-(len(max(req.stop, key=len).encode("utf-8")) + 4) :])
        elif mistake == "stop_window_shorter":
            text = req.decode(output[-(min(len(s.encode("utf-8")) for s in req.stop) + 4) :])
        elif mistake == "stop_window_margin":  # room for two ignored end ids, not three
            text = req.decode(output[-(max(len(s.encode("utf-8")) for s in req.stop) + 2) :])
        else:  # the engine's window: a token stands for at least one byte of UTF-8
            text = req.decode(output[-(max(len(s.encode("utf-8")) for s in req.stop) + 4) :])
        stop = any(s in text for s in req.stop)
    limit = req.max_new_tokens + (mistake == "length_one_past") - (mistake == "length_one_early")
    length = len(output) >= limit
    if mistake == "length_overshoot" or (mistake == "length_not_on_model_token" and model_token):
        length = False
    if mistake == "length_first" and length:
        return "length"
    if eos or stop:
        return "stop"
    return "length" if length else None


def _step(req: VerifyRequest, drafts: list[int], targets: list[int], mistake: Optional[str] = None) -> VerifyResult:
    """The verify step written again, independently of the package's, with `mistake` (a key of
    MISTAKES) made on purpose."""
    n, run = _accept(drafts, targets, mistake)
    tokens: list[int] = []
    reason = None
    for i, token in enumerate(run):
        tokens.append(token)
        if mistake == "finish_on_last_only" and i < len(run) - 1:
            continue
        if mistake == "whole_run":  # the checks see the run's later tokens too
            reason = _finish(req, req.output_ids + run, len(req.output_ids), i == n, mistake, token)
        else:
            reason = _finish(req, req.output_ids + tokens, len(req.output_ids), i == n, mistake)
        if reason is not None:
            if mistake == "finishing_token_dropped":  # checked before the append, and left without it
                tokens.pop()
            break
    before = req.prompt_len + len(req.output_ids)
    total = before + len(tokens)
    uncut = before + len(run)
    kv_len = {
        "kv_counts_rejected": before + len(drafts),
        "kv_counts_newest": total,
        "kv_no_prompt": total - req.prompt_len - 1,
        "kv_uncut": uncut - 1,
        "kv_no_drafts": before,
    }.get(mistake, total - 1)
    keep = {
        "pages_none": len(req.pages),
        "pages_round_down": total // req.page_size,
        "pages_round_up": total // req.page_size + 1,
        "pages_newest": pages_for(total - 1, req.page_size),
        "pages_no_prompt": pages_for(total - req.prompt_len, req.page_size),
        "pages_uncut": pages_for(uncut, req.page_size),
        "pages_per_rejected_draft": len(req.pages) - pages_for(len(drafts) - n, req.page_size),
        "pages_of_four": pages_for(total, 4),
    }.get(mistake, pages_for(total, req.page_size))
    accepted = n + 1 if mistake == "bonus_accepted" and n == len(drafts) else n
    free = req.pages[keep:]
    if mistake == "pages_minus_zero" and not free:  # req.pages[-drop:] with drop == 0
        free = list(req.pages)
    return VerifyResult(accepted, tokens, reason, kv_len, free)


# --- calling the student's function and explaining a difference ------------------------------------


def _as_result(out) -> VerifyResult:
    if out is None:
        raise AssertionError("verify_step returned None: return a VerifyResult(accepted, tokens, finish_reason, ...)")
    missing = [f for f in FIELDS if not hasattr(out, f)]
    if missing:
        raise AssertionError(
            f"verify_step must return a VerifyResult (fields {', '.join(FIELDS)}); got a {type(out).__name__} "
            f"without {', '.join(missing)}"
        )

    def ints(name):
        value = getattr(out, name)
        try:
            items = list(value)
            if all(int(x) == x for x in items):
                return [int(x) for x in items]
        except (TypeError, ValueError):
            pass
        raise AssertionError(f"VerifyResult.{name} must be a list of ints, got {value!r}")

    def one_int(name):
        value = getattr(out, name)
        if isinstance(value, bool) or not isinstance(value, int):
            raise AssertionError(f"VerifyResult.{name} must be an int, got {value!r}")
        return value

    reason = out.finish_reason
    if reason not in (None, "stop", "length"):
        raise AssertionError(f"VerifyResult.finish_reason must be None, 'stop' or 'length', got {reason!r}")
    return VerifyResult(one_int("accepted"), ints("tokens"), reason, one_int("kv_len"), ints("free_pages"))


def _call(fn, req: VerifyRequest, drafts: list[int], targets: list[int]) -> VerifyResult:
    """The student's result on copies of the inputs (only the case that looks for it sees a change)."""
    return _as_result(fn(_copy(req), list(drafts), list(targets)))


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
    if first == "kv_len":
        story, hint = kv_story(req, drafts, want, got.kv_len, fn)
        return f"{text}. {story}", hint
    if first == "free_pages":
        story, hint = pages_story(req, want, got.free_pages)
        m = page_mistake(req, drafts, targets, got.free_pages, mistakes)
        m = confirmed(m, fn, req, drafts, targets, got.free_pages)
        if m is None and fn is not None:
            m = _pages_on_a_longer_row(fn, req, drafts, targets, mistakes)
        if m:
            story, hint = f"{story}: {MISTAKES[m]}", MISTAKES[m]
        return f"{text}. {story}", hint
    variants = {m: _step(req, drafts, targets, m) for m in mistakes}
    whole = [m for m, r in variants.items() if r == got]
    # a mistake whose result differs first in another field would name another mistake than this one
    field_only = [
        m for m, r in variants.items() if first_field(r, want) == first and getattr(r, first) == getattr(got, first)
    ]
    named = whole or field_only
    if fn is not None and STOP_DECODING & set(named):
        named = _stop_decoding_told_apart(named, fn)
    named = _length_told_apart(named, fn)
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


def _finds_stop(fn, output: list[str], drafts: list[str], model_token: str) -> Optional[bool]:
    """Whether the answer ends the run with 'stop' where the stop string 'two three' completes on
    the run's last token (None when it raised)."""
    req = _req(_w(*output), len(drafts), stop=("two three",))
    run = _w(*drafts, model_token)
    try:
        got = _call(fn, req, run[:-1], run)
    except Exception:
        return None
    return got.finish_reason == "stop" and got.tokens == run


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


def _frees_the_end_of_a_longer_row(fn, req, drafts, targets) -> bool:
    """The answer gives back the right pages of the same step with two more pages in its row."""
    longer = _copy(req)
    longer.pages = list(req.pages) + [max(req.pages, default=0) + 1, max(req.pages, default=0) + 2]
    try:
        got = _call(fn, longer, drafts, targets)
    except Exception:
        return False
    return got.free_pages == package_step(_copy(longer), list(drafts), list(targets)).free_pages


def confirmed(m: Optional[str], fn, req, drafts, targets, got: list[int]) -> Optional[str]:
    """The page mistake to name for these free_pages: the slice req.pages[-0:] where the answer gave back
    the whole row on a step that gives back nothing, yet the right pages where some do go (the same
    step with two more pages in its row); else `m`, the page mistake page_mistake found."""
    none_go = not package_step(_copy(req), list(drafts), list(targets)).free_pages
    if none_go and got and got == list(req.pages) and fn is not None:
        if _frees_the_end_of_a_longer_row(fn, req, drafts, targets):
            return "pages_minus_zero"
    return m


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


def page_mistake(req, drafts, targets, free_pages, mistakes=ALL_MISTAKES) -> Optional[str]:
    """The known mistake of PAGE_MISTAKES that gives these free_pages, when only one does (a step
    where two give the same pages does not tell them apart). The slice req.pages[-0:] is left to
    `confirmed`: it gives the right pages wherever some go, so only a probe of the answer names it."""
    alike = [
        m
        for m in PAGE_MISTAKES
        if m in mistakes and m != "pages_minus_zero" and _step(req, drafts, targets, m).free_pages == free_pages
    ]
    return alike[0] if len(alike) == 1 else None


def _pages_on_a_longer_row(fn, req, drafts, targets, mistakes) -> Optional[str]:
    """The page mistake the answer makes on the same step with two more pages in its row, where
    keeping every page and keeping one too many no longer give the same pages."""
    longer = _copy(req)
    longer.pages = list(req.pages) + [max(req.pages, default=0) + 1, max(req.pages, default=0) + 2]
    try:
        got = _call(fn, longer, drafts, targets)
    except Exception:
        return None  # its other mistake is named where it shows
    return page_mistake(longer, drafts, targets, got.free_pages, mistakes)


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
    if got in known and got != want.kv_len:
        m = known[got]
        return MISTAKES[m][0].upper() + MISTAKES[m][1:], f"{MISTAKES[m]} ({HINTS[m]})"
    return (
        f"valid K/V covers the prompt ({req.prompt_len}), the output before this step ({len(req.output_ids)}) and "
        f"the {len(want.tokens)} new tokens, all but the newest: {want.kv_len}",
        _KV,
    )


def pages_story(req: VerifyRequest, want: VerifyResult, got: list[int]) -> tuple[str, str]:
    """Which pages a wrong free_pages gave back or kept, and what positions they hold, and its hint."""
    ps, pages = req.page_size, req.pages
    total = want.kv_len + 1
    tail = pages[len(pages) - len(got) :] if got else []
    if got != tail:
        if sorted(got) == sorted(want.free_pages):
            return "Give them in the row's order: they are the end of req.pages", (
                "free_pages are the end of req.pages, in the row's order"
            )
        return (
            "free_pages must be the end of req.pages (the pages past the request's new length), in the row's order",
            _PAGES,
        )
    kept, need = len(pages) - len(got), pages_for(total, ps)
    if kept < need:
        page, lo, hi = pages[kept], kept * ps, (kept + 1) * ps - 1
        if kept < req.prefix_len // ps:
            what = f"page {page} belongs to the prefix cache (the first {req.prefix_len} positions)"
        elif lo == total - 1:
            what = (
                f"page {page} (positions {lo}..{hi}) is where the newest token's K/V goes next step, at position {lo}"
            )
        else:
            what = (
                f"page {page} (positions {lo}..{hi}) still holds positions {lo}..{total - 1} of the request's "
                f"{total} tokens (the newest's, {total - 1}, included)"
            )
        return (
            f"A page still needed was given back: {what}",
            f"{_PAGES}: the newest token's page and the prefix cache's pages included",
        )
    extra = pages[need:kept]
    if kept == len(pages):
        what = "no page was given back"
    else:
        what = f"page(s) {extra} were kept"
    return (
        f"{what[0].upper()}{what[1:]}, but the request's {total} tokens need only the first {need} pages of the row: "
        f"pages past position {total - 1} hold only rejected drafts or tokens after a finish, and go back now",
        _PAGES,
    )


def _check(fn, req: VerifyRequest, drafts: list[int], targets: list[int], why: str, mistakes=ALL_MISTAKES) -> None:
    got = _call(fn, req, drafts, targets)
    want = package_step(_copy(req), list(drafts), list(targets))
    if got == want:
        return
    text, hint = diagnose(got, want, req, drafts, targets, mistakes, fn)
    raise Mistake(f"{why} ({describe(req, drafts, targets)}): {text}", hint)


def _w(*words: str) -> list[int]:
    return [_id(w) for w in words]
