"""Exercise 8 — the verify step of speculative decoding: `verify_step(req, drafts, targets) -> VerifyResult`.

The scheduler calls it for every request that verified drafts in a batch (`Scheduler.verify_fn`),
then gives back the pages it names, sets `req.cached_len = kv_len` and appends its tokens. The
unit cases build `VerifyRequest`s by hand, with the default model's real tokenizer as `decode`
(a stop string spans tokens there) and pages of 4 positions, and compare every field with the
package's `verify_step`. Where a field differs, the grader recomputes the step with one known
mistake at a time (`_step` below: the step written as plain loops, with switches for the
mistakes) and names the mistake whose result matches the student's.

The engine cases plug the function into the real scheduler with speculation on, on a tiny
random-weight model (milliseconds a step): with the scheduler's own n-gram drafts, and with drafts
the grader proposes (the answer without drafts, changed at a seeded place, so that every number of
accepted drafts happens), then with EOS, stop strings and `max_tokens` falling inside accepted
runs. They compare the tokens with a run without drafts, check the cache after every step, the
pages at the end and the prefix cache, run the same prompts again on the cached prefixes, and
compare every verify result with the package's on the same input.
"""

from __future__ import annotations

import dataclasses
import random
import traceback
from dataclasses import dataclass, field
from typing import Callable, Optional

from minisgl_edu.core import SamplingParams
from minisgl_edu.engine.verify import accept_greedy
from minisgl_edu.grading.core import Case
from minisgl_edu.grading.harness import new_scheduler, remember, tiny_model, tokenizer
from minisgl_edu.grading.own_code import borrowed
from minisgl_edu.kvcache.manager import pages_for
from minisgl_edu.scheduler import verify_step as step_module
from minisgl_edu.scheduler.finish import check_finish
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

MISTAKES = {
    "no_bonus": "when every draft is accepted, the model's token at the last position (targets[k]) still comes "
    "(the 'bonus'): a verify step gives the accepted drafts plus one token of the model's",
    "rejected_draft_kept": "the rejected draft was kept: at the first mismatch the model's own token there "
    "(targets[n]) replaces it",
    "model_token_missing": "the model's own token is missing: after the n accepted drafts comes targets[n], "
    "always (so a step gives at least one token)",
    "model_token_next": "the model's token was taken one position too far: after n accepted drafts it is "
    "targets[n] (targets[j] is the model's token after the newest token and drafts 0..j-1)",
    "past_mismatch": "drafts after the first mismatch were accepted: once a draft is rejected, the positions "
    "after it were computed on a token the request never gets, so the run ends at the first mismatch",
    "finish_on_last_only": "a token inside the run finishes the request, but the run went on past it: check "
    "each new token as if it had come in a step of its own, and stop at the first that finishes",
    "ignore_eos_ignored": "an EOS stopped a request that has ignore_eos set: with ignore_eos only stop "
    "strings and max_new_tokens end it",
    "length_overshoot": "the run went past max_new_tokens: count every new token, and stop at the last one allowed",
    "length_not_on_model_token": "the model's own token (the last of the run) was not checked against "
    "max_new_tokens: it is an output token like the accepted drafts",
    "length_first": "'length' was reported for a token that also ends the answer (an EOS or a stop string): "
    "'stop' wins, as in the finish check of exercise 1",
    "stop_per_token": "each token was decoded on its own: a stop string that spans two tokens only shows in "
    "the text of several tokens decoded together (decode a tail of the output with the new tokens)",
    "stop_new_only": "only this step's tokens were decoded: a stop string can begin in the output before "
    "this step and end in it; decode a tail of the whole output, old and new tokens together",
    "stop_window_chars": "the tail you decoded was too short to hold the stop string: its length was counted "
    "in characters, but an emoji or a CJK character is 3 or 4 bytes in UTF-8 and the byte-level tokenizer "
    "can spend a token on each byte. Count the window in bytes (len(s.encode())) plus a margin, as the "
    "engine's check_finish does",
    "kv_counts_rejected": "kv_len counted the positions of the rejected drafts: their K/V is dead. kv_len "
    "goes to req.cached_len, and the prefix cache takes that many tokens when the request finishes, so "
    "unverified K/V would be cached under the wrong tokens",
    "kv_counts_newest": "kv_len counted the newest token: its K/V is computed in the next step, so valid "
    "positions stop one before it (counting it would let the prefix cache take a token without its K/V)",
    "kv_no_prompt": "kv_len left out the prompt: positions count from the prompt's first token",
    "kv_uncut": "kv_len counted tokens after the finish: only the tokens the request keeps count",
    "pages_none": "no page was given back: the pages past the request's new length hold only rejected "
    "drafts and go back to the free list now",
    "pages_round_down": "a page that still holds valid positions was given back: keep every page that holds "
    "a position below the new length (round up: pages_for(total, page_size))",
    "pages_newest": "the page where the newest token's K/V goes in the next step was given back: keep the "
    "pages of positions 0..total-1, the newest token's included",
    "pages_no_prompt": "pages were counted from the start of the output: positions and pages count from the "
    "prompt's first token, so this gave back pages of the prompt (and of the prefix cache)",
    "pages_uncut": "pages were kept for tokens after the finish: only the tokens the request keeps need pages",
    "pages_per_rejected_draft": "pages were counted from the number of rejected drafts: a page can hold "
    "valid positions and rejected ones at once; give back only the pages past the new length",
}
ACCEPT_MISTAKES = ["no_bonus", "rejected_draft_kept", "model_token_missing", "model_token_next", "past_mismatch"]
FINISH_MISTAKES = [
    "finish_on_last_only",
    "ignore_eos_ignored",
    "length_overshoot",
    "length_not_on_model_token",
    "length_first",
    "stop_per_token",
    "stop_new_only",
    "stop_window_chars",
]
KV_MISTAKES = ["kv_counts_rejected", "kv_counts_newest", "kv_no_prompt", "kv_uncut"]
PAGE_MISTAKES = [
    "pages_none",
    "pages_round_down",
    "pages_newest",
    "pages_no_prompt",
    "pages_uncut",
    "pages_per_rejected_draft",
]
ALL_MISTAKES = ACCEPT_MISTAKES + FINISH_MISTAKES + KV_MISTAKES + PAGE_MISTAKES


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
    return n, run + [targets[n]]


def _finish(req: VerifyRequest, output: list[int], new_from: int, model_token: bool, mistake: Optional[str]):
    """The finish check of the newest token of `output` (the request's tokens so far, this step's
    from `new_from`)."""
    eos = output[-1] in req.eos_ids and (not req.ignore_eos or mistake == "ignore_eos_ignored")
    stop = False
    if req.stop:
        if mistake == "stop_per_token":
            text = req.decode(output[-1:])
        elif mistake == "stop_new_only":
            text = req.decode(output[new_from:])
        elif mistake == "stop_window_chars":
            text = req.decode(output[-(max(len(s) for s in req.stop) + 4) :])
        else:  # the engine's window: a token stands for at least one byte of UTF-8
            text = req.decode(output[-(max(len(s.encode("utf-8")) for s in req.stop) + 4) :])
        stop = any(s in text for s in req.stop)
    length = len(output) >= req.max_new_tokens
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
        reason = _finish(req, req.output_ids + tokens, len(req.output_ids), i == n, mistake)
        if reason is not None:
            break
    before = req.prompt_len + len(req.output_ids)
    total = before + len(tokens)
    uncut = before + len(run)
    kv_len = {
        "kv_counts_rejected": before + len(drafts),
        "kv_counts_newest": total,
        "kv_no_prompt": total - req.prompt_len - 1,
        "kv_uncut": uncut - 1,
    }.get(mistake, total - 1)
    keep = {
        "pages_none": len(req.pages),
        "pages_round_down": total // req.page_size,
        "pages_newest": pages_for(total - 1, req.page_size),
        "pages_no_prompt": pages_for(total - req.prompt_len, req.page_size),
        "pages_uncut": pages_for(uncut, req.page_size),
        "pages_per_rejected_draft": len(req.pages) - pages_for(len(drafts) - n, req.page_size),
    }.get(mistake, pages_for(total, req.page_size))
    return VerifyResult(n, tokens, reason, kv_len, req.pages[keep:])


# --- calling the student's function and explaining a difference ------------------------------------


def _own_code(fn) -> None:
    """The own-code rule also covers the package's pieces the step is made of: the greedy acceptance
    rule, the finish check and the verify step's module (its dataclasses are fine: they are the
    exercise's types)."""
    if fn is SOLUTION:
        return
    helpers = [accept_greedy, check_finish, step_module._finish_reason]
    for helper in helpers:
        used = borrowed(fn, helper)
        if used:
            raise AssertionError(f"this is not your own code: it uses {used}. Write the answer yourself")


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
    _own_code(fn)
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


def explain(got: VerifyResult, want: VerifyResult, req, drafts, targets, mistakes=ALL_MISTAKES) -> str:
    """What differs, and the known mistake that gives the student's result, if one does."""
    diffs = [f for f in FIELDS if getattr(got, f) != getattr(want, f)]
    first = diffs[0]
    text = f"{first}: yours {getattr(got, first)!r}, expected {getattr(want, first)!r}"
    variants = {m: _step(req, drafts, targets, m) for m in mistakes}
    whole = [m for m, r in variants.items() if r == got]
    field_only = [m for m, r in variants.items() if getattr(r, first) == getattr(got, first) and r != want]
    named = whole or field_only
    if named:
        text += f". {MISTAKES[named[0]][0].upper()}{MISTAKES[named[0]][1:]}"
        if len(named) > 1:  # this input does not tell the two apart
            text += f" (or: {MISTAKES[named[1]]})"
    elif first == "accepted" and got.accepted == len(want.tokens) - 1:
        text += (
            ". accepted counts the drafts the model agreed with, before any cut by a finish (the acceptance "
            "rate is about the drafts): len(tokens) - 1 only when nothing was cut"
        )
    elif first == "free_pages" and sorted(got.free_pages) == sorted(want.free_pages):
        text += ". Give them in the row's order: they are the end of req.pages"
    return text


def _check(fn, req: VerifyRequest, drafts: list[int], targets: list[int], why: str, mistakes=ALL_MISTAKES) -> None:
    got = _call(fn, req, drafts, targets)
    want = package_step(_copy(req), list(drafts), list(targets))
    if got == want:
        return
    raise AssertionError(
        f"{why} ({describe(req, drafts, targets)}): {explain(got, want, req, drafts, targets, mistakes)}"
    )


# --- the unit cases -------------------------------------------------------------------------------------


def _w(*words: str) -> list[int]:
    return [_id(w) for w in words]


def case_bonus(fn):
    one, two, three, four, five = _w(" one", " two", " three", " four", " five")
    _check(fn, _req([one], 3), [two, three, four], [two, three, four, five], "every draft is accepted")
    _check(fn, _req([one], 0), [], [two], "no drafts: the model's token, as in a plain decode step")
    _check(fn, _req([one, two], 1), [three], [three, five], "the one draft is accepted")


def case_first_mismatch(fn):
    one, two, three, four, five, six, seven = _w(" one", " two", " three", " four", " five", " six", " seven")
    _check(fn, _req([one], 4), [two, three, four, five], [two, six, four, five, seven], "draft 1 is rejected")
    _check(fn, _req([one], 3), [two, three, four], [six, three, four, five], "draft 0 is rejected")
    _check(fn, _req([one], 4), [two, three, four, five], [two, three, four, six, seven], "the last draft is rejected")


def case_sampled_targets(fn):
    # With sampling, the engine's rule stops drawing at the first draft it rejects: fewer targets.
    one, two, three, four, six = _w(" one", " two", " three", " four", " six")
    _check(
        fn,
        _req([one], 3),
        [two, three, four],
        [two, six],
        "targets as the engine gives them for a sampled request (its rule stops at the first rejected draft)",
    )


def case_eos_in_run(fn):
    one, two, three, four = _w(" one", " two", " three", " four")
    _check(fn, _req([one], 3), [two, 2, three], [two, 2, three, four], "draft 1 is an EOS id (2) and is accepted")
    _check(fn, _req([one], 2), [two, three], [two, 0, four], "the model's own token is an EOS id (0)")
    _check(fn, _req([one], 3), [0, two, three], [0, two, three, four], "the first draft is an EOS id (0)")


def case_ignore_eos(fn):
    one, two, three, four = _w(" one", " two", " three", " four")
    _check(
        fn,
        _req([one], 3, ignore_eos=True),
        [two, 2, three],
        [two, 2, three, four],
        "ignore_eos is set: the accepted EOS does not stop it",
    )
    _check(
        fn,
        _req([one, two], 2, max_new=4, ignore_eos=True),
        [2, 0],
        [2, 0, three],
        "ignore_eos is set, and max_new_tokens allows two more tokens",
    )


def case_max_new_tokens(fn):
    a, b, c, d = _w(" red", " green", " blue", " ok")
    seven = [_id(" one")] * 7
    _check(
        fn,
        _req(seven, 2, max_new=10),
        [a, b],
        [a, b, c],
        "3 tokens are left and the scheduler drafted 2: the model's token is the last one allowed",
    )
    _check(
        fn,
        _req(seven + [d], 3, max_new=10),
        [a, b, c],
        [a, b, c, d],
        "2 tokens are left but 3 drafts came (the scheduler caps them; the step must not rely on it)",
    )
    _check(fn, _req(seven + [d, d], 0, max_new=10), [], [a], "one token is left and no drafts")


def case_stop_within_run(fn):
    one, two, three, four, five = _w(" one", " two", " three", " four", " five")
    _check(
        fn,
        _req([one], 3, stop=("two three",)),
        [two, three, four],
        [two, three, four, five],
        "the stop string 'two three' spans accepted drafts 0 and 1",
    )
    _check(
        fn,
        _req([one], 3, stop=("xyz", "three four")),
        [two, three, four],
        [two, three, four, five],
        "the second stop string spans accepted drafts 1 and 2",
    )


def case_stop_from_output(fn):
    one, two, three, four, five = _w(" one", " two", " three", " four", " five")
    _check(
        fn,
        _req([one, two], 2, stop=("two three",)),
        [three, four],
        [three, four, five],
        "the stop string 'two three' begins in the output before this step and ends in its first token",
    )


def case_stop_multibyte(fn):
    ids = tokenizer().encode("go 🚀🚀🚀 now")  # 'go', 9 byte tokens for the three rockets, ' now'
    assert len(ids) == 11 and "🚀🚀🚀" in _decode(ids[1:10]) and "🚀🚀🚀" not in _decode(ids[2:10]), (
        "setup: the three rockets should span 9 tokens"
    )
    _check(
        fn,
        _req(ids[:4], 7, stop=("🚀🚀🚀",)),
        ids[4:],
        ids[4:] + [_id(" one")],
        "the stop string '🚀🚀🚀' (3 characters, 12 bytes) begins in the output and ends in draft 5: it "
        "spans 9 tokens",
        ["stop_window_chars"] + [m for m in ALL_MISTAKES if m != "stop_window_chars"],  # the likeliest first
    )


def case_stop_beats_length(fn):
    one, two, three, four = _w(" one", " two", " three", " four")
    _check(
        fn,
        _req([one] * 3, 1, max_new=5, stop=("two three",)),
        [two],
        [two, three],
        "the last allowed token also completes a stop string",
    )
    _check(fn, _req([one] * 3, 1, max_new=5), [four], [four, 2], "the last allowed token is also an EOS id")


def case_kv_len(fn):
    one, two, three, four, five, six = _w(" one", " two", " three", " four", " five", " six")
    out = [one, two, three]
    _check(fn, _req(out, 4), [four, five, six, one], [four, two, six, one, two], "1 of 4 drafts accepted")
    _check(fn, _req(out, 4), [four, five, six, one], [four, five, six, one, two], "all 4 drafts accepted")
    _check(fn, _req(out, 3, prompt_len=21), [four, five, six], [one, five, six, two], "no draft accepted")


def case_rejected_pages(fn):
    one, two, three, four, five, six, seven = _w(" one", " two", " three", " four", " five", " six", " seven")
    # Prompt 10 + output 3: drafts at 13..15, and the row ends at position 15. The last draft is
    # rejected, and the request's 16 tokens fill the row: nothing goes back.
    _check(fn, _req([one, two, three], 3), [four, five, six], [four, five, seven, one], "2 of 3 drafts accepted")
    # Prompt 10 + output 1: the newest token sits at position 10, the 6 drafts at 11..16, on pages
    # 2, 3 and 4 of the row (pages for positions 0..19 are reserved).
    drafts = [three, four, five, six, seven, one]
    for n in (0, 1, 2, 4, 5, 6):
        # drafts 0..n-1 agree, draft n does not (the targets after it happen to equal the drafts)
        targets = drafts[:n] + [two] + drafts[n + 1 :] + [two] if n < 6 else drafts + [two]
        _check(fn, _req([one], 6), drafts, targets, f"{n} of 6 drafts accepted")


def case_newest_tokens_page(fn):
    one, two, three, four, five = _w(" one", " two", " three", " four", " five")
    # prompt 11 + output 3 (positions 0..13); 3 drafts at 14..16. With 2 accepted the request has
    # 17 tokens: its newest is at position 16, the first of page 4, where its K/V goes next step.
    _check(
        fn,
        _req([one, two, three], 3, prompt_len=11),
        [four, five, one],
        [four, five, two, three],
        "the newest token's position is the first of a page",
    )
    _check(
        fn,
        _req([one, two, three], 3, prompt_len=11),
        [four, one, one],
        [four, five, two, three],
        "the newest token's position is the last of a page",
    )


def case_prefix_pages(fn):
    one, two, three, four, five = _w(" one", " two", " three", " four", " five")
    # A prompt of 24 tokens whose first 16 (4 pages) came from the prefix cache, and one output token.
    _check(
        fn,
        _req([one], 4, prompt_len=24, prefix_len=16),
        [two, three, four, five],
        [one, three, four, five, two],
        "the request's first 4 pages belong to the prefix cache",
    )


def case_finish_pages(fn):
    one, two, three, four, five, six = _w(" one", " two", " three", " four", " five", " six")
    # prompt 13 + output 2; 6 drafts at 15..20. EOS at draft 0: the request has 16 tokens.
    _check(
        fn,
        _req([one, two], 6, prompt_len=13),
        [2, three, four, five, six, one],
        [2, three, four, five, six, one, two],
        "an accepted EOS ends the request at draft 0: kv_len and pages of the cut run",
    )


def case_inputs_unchanged(fn):
    one, two, three, four, five = _w(" one", " two", " three", " four", " five")
    req = _req([one, two], 3)
    drafts, targets = [three, four, five], [three, four, one, two]
    before = (list(req.output_ids), list(req.pages), list(drafts), list(targets))
    _own_code(fn)
    _as_result(fn(req, drafts, targets))
    after = (req.output_ids, req.pages, drafts, targets)
    for name, b, a in zip(("req.output_ids", "req.pages", "drafts", "targets"), before, after):
        assert a == b, (
            f"your verify_step changed {name} (from {b} to {a}). Return the new tokens and the pages to give "
            "back: the scheduler appends the tokens and frees the pages itself, so leave what you were given "
            "as it was"
        )


# --- the real engine ------------------------------------------------------------------------------------

K = 8  # drafts per verify in the engine cases (4 positions a page: the rejected ones span up to 3 pages)
SPEC = dict(speculative_algorithm="ngram", speculative_num_draft_tokens=K)


def _prompt(seed: int, n: int, repeat: bool) -> list[int]:
    rng = random.Random(seed)
    if not repeat:
        return [rng.randrange(100, 40000) for _ in range(n)]
    phrase = [rng.randrange(100, 40000) for _ in range(rng.randrange(3, 8))]
    return (phrase * (n // len(phrase) + 1))[:n]


NGRAM_PROMPTS = [_prompt(seed, n, True) for seed, n in enumerate([9, 23, 40, 64, 5, 31])]
PLAIN_PROMPTS = [_prompt(100 + seed, n, False) for seed, n in enumerate([12, 17, 21, 26, 9])]


@dataclass
class Scenario:
    prompts: list[list[int]]
    params: list[SamplingParams]
    eos_ids: Optional[set[int]] = None  # replaces the scheduler's EOS ids (both runs)
    drafts: Optional[str] = None  # None: the scheduler's n-gram drafts; "seeded" or "right": the grader's
    draft_from: dict[int, list[int]] = field(default_factory=dict)  # uid -> the answer the grader drafts from


@dataclass
class Call:
    req: VerifyRequest
    drafts: list[int]
    targets: list[int]
    result: object = None  # what the function returned


@dataclass
class EngineRun:
    tokens: dict[int, list[int]] = field(default_factory=dict)
    reasons: dict[int, Optional[str]] = field(default_factory=dict)
    calls: list[Call] = field(default_factory=list)
    problem: Optional[str] = None  # the first broken rule after a step, if any
    cached: set[tuple[int, ...]] = field(default_factory=set)  # the prefix cache's sequences at the end
    again: dict[int, list[int]] = field(default_factory=dict)  # the same prompts once more, on the cache


class _StudentRaised(Exception):
    pass


def _drafter(s, answers: dict[int, list[int]], how: str, uid_of: Callable[[int], int]):
    """Drafts the grader proposes in place of the n-gram lookup: what the request says without
    drafts and without finishing early (`answers`), capped as the scheduler caps them, with one
    token changed at a seeded place ("seeded", so every number of accepted drafts happens) or
    unchanged ("right")."""

    def draft(req) -> list[int]:
        have = len(req.output_ids)
        room = min(K, req.max_new_tokens - have - 1)
        follow = list(answers[uid_of(req.uid)][have : have + max(room, 0)])
        if how == "seeded" and follow:
            at = random.Random(1000 * req.uid + have).randrange(len(follow) + 1)
            if at < len(follow):
                follow[at] = follow[at] + 1 if follow[at] + 1 < 40000 else 100
        return follow

    s.speculator.drafts = draft  # an instance attribute: `_schedule_decode` calls speculator.drafts(req)


def _run(fn, scenario: Scenario, again: bool = False) -> EngineRun:
    """The scenario with speculation on and `fn` as the verify step (None: no speculation, the
    reference). With `again`, the same prompts once more afterwards, on the prefix cache."""
    run = EngineRun()
    s = new_scheduler(model=tiny_model(), **(SPEC if fn is not None else {}))
    if scenario.eos_ids is not None:  # in place: the scheduler's parts share this one set
        s.eos_ids.clear()
        s.eos_ids.update(scenario.eos_ids)
    n = len(scenario.prompts)
    if fn is not None:

        def recorded(req, drafts, targets):
            call = Call(_copy(req), list(drafts), list(targets))
            run.calls.append(call)
            try:
                call.result = fn(req, drafts, targets)
            except Exception as e:
                raise _StudentRaised() from e
            return call.result

        s.verify_fn = recorded
        if scenario.drafts is not None:
            _drafter(s, scenario.draft_from, scenario.drafts, lambda uid: uid % n)
    for base in [0, n] if again else [0]:
        for i, (prompt, sp) in enumerate(zip(scenario.prompts, scenario.params)):
            s.add_request(base + i, list(prompt), sp)
        steps = 0
        while not s.is_idle:
            try:
                s.step()
            except _StudentRaised as e:
                raise e.__cause__ from None  # the student's own error, with their line
            except Exception as e:
                where = traceback.extract_tb(e.__traceback__)[-1].name
                _fail(f"after your verify step, the engine failed in {where}(): {type(e).__name__}: {e}", run)
            steps += 1
            if steps > 2000:
                _fail("the requests never finished (does every verify step give at least one token?)", run)
            run.problem = _after_step(s)
            if run.problem:
                return run
        for msg in s.io.drain():
            out = run.tokens if msg.uid < n else run.again
            out.setdefault(msg.uid % n, [])
            if msg.next_token >= 0:
                out[msg.uid % n].append(msg.next_token)
            if msg.finished and msg.uid < n:
                run.reasons[msg.uid] = msg.finish_reason
        if base == 0:
            run.problem = _at_the_end(s)
            run.cached = s.cache.prefix_cache.sequences()
            if run.problem:
                return run
    return run


def _after_step(s) -> Optional[str]:
    try:
        s.cache.check()
    except AssertionError as e:
        return f"the cache's bookkeeping is broken after a step: {e}"
    ps = s.cache.page_size
    for req in s.running:
        held, total = s.cache.held_pages(req), req.total_len
        if held > pages_for(total, ps):
            return (
                f"after a step, request {req.uid} has {total} tokens (pages for {pages_for(total, ps)}) but still "
                f"holds {held} pages: the pages of its rejected drafts were not given back"
            )
        if held < pages_for(total - 1, ps):
            return (
                f"after a step, request {req.uid} has {total} tokens but holds only {held} pages: a page that "
                f"still held K/V of its tokens was given back (positions 0..{total - 2} need "
                f"{pages_for(total - 1, ps)} pages)"
            )
        if req.cached_len != total - 1:
            return (
                f"after a step, request {req.uid} has {total} tokens and cached_len {req.cached_len} (your kv_len): "
                f"the K/V of all but its newest token is valid, {total - 1} positions"
            )
    return None


def _at_the_end(s) -> Optional[str]:
    cache = s.cache
    if cache.page_table.used_rows():
        return "a page-table row is still in use after every request finished"
    if cache.num_available != cache.num_pages:
        return f"{cache.num_pages - cache.num_available} page(s) are neither free nor in the prefix cache at the end"
    return None


def _first_wrong_call(calls: list[Call]) -> Optional[str]:
    """The first verify step where the student's result is not the package's on the same input."""
    for i, call in enumerate(calls):
        want = package_step(_copy(call.req), list(call.drafts), list(call.targets))
        try:
            got = _as_result(call.result)
        except AssertionError as e:
            return f"verify {i + 1} of the run: {e}"
        if got != want:
            why = explain(got, want, call.req, call.drafts, call.targets)
            return f"verify {i + 1} of the run ({describe(call.req, call.drafts, call.targets, words=False)}): {why}"
    return None


def _fail(what: str, run: EngineRun) -> None:
    wrong = _first_wrong_call(run.calls)
    raise AssertionError(
        f"{what}. The first verify where your function differs from the package's: {wrong}" if wrong else what
    )


def _compare(got: EngineRun, ref: EngineRun, scenario: Scenario, again: bool) -> None:
    if got.problem:
        _fail(got.problem, got)
    for uid in range(len(scenario.prompts)):
        mine, theirs = got.tokens.get(uid, []), ref.tokens[uid]
        for i, (a, b) in enumerate(zip(mine, theirs)):
            if a != b:
                _fail(f"request {uid}: token {i} is {a}, without drafts it is {b}", got)
        if len(mine) != len(theirs) or got.reasons.get(uid) != ref.reasons[uid]:
            _fail(
                f"request {uid}: {len(mine)} tokens, finish {got.reasons.get(uid)!r}; without drafts "
                f"{len(theirs)} tokens, finish {ref.reasons[uid]!r}",
                got,
            )
    if got.cached != ref.cached:
        extra = sorted(got.cached - ref.cached, key=len)
        _fail(
            "at the end the prefix cache holds other tokens than after the run without drafts"
            + (f" (e.g. a sequence of {len(extra[0])} tokens)" if extra else "")
            + ": it takes req.cached_len tokens (your kv_len) of a finished request",
            got,
        )
    if again:
        for uid in range(len(scenario.prompts)):
            if got.again.get(uid) != ref.tokens[uid]:
                _fail(
                    f"the same prompts once more, now on the prefix cache's pages: request {uid} gives other tokens "
                    "(K/V in the cache or in the pages the request kept was wrong)",
                    got,
                )
    wrong = _first_wrong_call(got.calls)
    if wrong:
        raise AssertionError(
            "the requests' tokens and pages came out right, but a verify result was not the package's (a mistake "
            "the output does not show here: fewer tokens in a step, or a finish that the scheduler's own check of "
            f"each token it appends caught): {wrong}"
        )


def reference_run(key: str, scenario: Callable[[], Scenario]) -> tuple[Scenario, EngineRun]:
    """The scenario and its run without speculation, computed once per process (untimed)."""
    sc = remember(f"verify/{key}/scenario", scenario)
    return sc, remember(f"verify/{key}", lambda: _run(None, sc))


def _engine_case(fn, key: str, scenario: Callable[[], Scenario], again: bool, reasons=None) -> None:
    one, two, three = _w(" one", " two", " three")
    _call(fn, _req([one], 1), [two], [two, three])  # an unfinished stub fails here, before the engine runs
    sc, ref = reference_run(key, scenario)
    if reasons is not None:
        assert [ref.reasons[u] for u in range(len(reasons))] == reasons, f"setup: the reference finished {ref.reasons}"
    _compare(_run(fn, sc, again=again), ref, sc, again)


GREEDY = SamplingParams(max_tokens=32, ignore_eos=True)


def ngram_scenario() -> Scenario:
    return Scenario(NGRAM_PROMPTS, [GREEDY] * len(NGRAM_PROMPTS))


def _answers(prompts: list[list[int]], max_tokens: int = 32) -> dict[int, list[int]]:
    """Each prompt's greedy answer without drafts, EOS ignored."""
    sp = SamplingParams(max_tokens=max_tokens, ignore_eos=True)
    return _run(None, Scenario(prompts, [sp] * len(prompts))).tokens


def seeded_scenario() -> Scenario:
    return Scenario(PLAIN_PROMPTS, [GREEDY] * len(PLAIN_PROMPTS), drafts="seeded", draft_from=_answers(PLAIN_PROMPTS))


def _runs(max_new: int) -> list[list[int]]:
    """Output indices by step when every draft is right: token 0 from the prefill, then runs of up
    to K drafts and the model's token, the drafts capped by the room left."""
    runs, have = [[0]], 1
    while have < max_new:
        n = min(K, max_new - have - 1) + 1
        runs.append(list(range(have, have + n)))
        have += n
    return runs


def finish_scenario() -> Scenario:
    """EOS, stop strings and max_tokens inside accepted runs, on the grader's right drafts:
    request 0 stops on an EOS that is an accepted draft, request 1 (the same prompt, ignore_eos)
    goes past it, requests 2 and 3 stop on stop strings that span two accepted tokens (3's begins in
    the previous step's last token), request 4 ends on max_tokens with the model's token."""
    base = _answers(PLAIN_PROMPTS)
    mid = [i for run in _runs(GREEDY.max_tokens)[1:] for i in run[1:-1]]  # inside a run: a token follows
    eos_at = next(i for i in mid if base[0][i] not in base[0][:i])
    eos = base[0][eos_at]
    stops = []
    for uid, spans_runs in ((2, False), (3, True)):
        starts = [run[-1] for run in _runs(GREEDY.max_tokens)[1:-1]] if spans_runs else mid
        stops.append(_stop_at(base[uid], starts, eos))
    params = [
        SamplingParams(max_tokens=32),
        SamplingParams(max_tokens=32, ignore_eos=True),
        SamplingParams(max_tokens=32, ignore_eos=True, stop=[stops[0]]),
        SamplingParams(max_tokens=32, ignore_eos=True, stop=[stops[1]]),
        SamplingParams(max_tokens=13, ignore_eos=True),  # runs 0 | 1..9 | 10..12: the 13th is the model's
    ]
    which = [0, 0, 2, 3, 4]
    prompts = [PLAIN_PROMPTS[i] for i in which]
    answers = {uid: base[i] for uid, i in enumerate(which)}
    return Scenario(prompts, params, eos_ids={eos}, drafts="right", draft_from=answers)


def _stop_at(tokens: list[int], starts: list[int], eos: int) -> str:
    """A stop string made of tokens[i] and tokens[i + 1] for the first i in `starts` where it first
    completes at i + 1 and spans both tokens."""
    for i in starts:
        if eos in tokens[: i + 2]:
            continue
        text, a, b = _decode(tokens[i : i + 2]), _decode(tokens[i : i + 1]), _decode(tokens[i + 1 : i + 2])
        if not a.strip() or not b.strip() or text != a + b:
            continue
        req = VerifyRequest(0, [], 99, set(), True, [text], _decode, [], PAGE)
        ends = [j for j in range(i + 2) if step_module._finish_reason(req, tokens[: j + 1]) == "stop"]
        if ends and ends[0] == i + 1:
            return text
    raise AssertionError("setup: no stop string spans two tokens of the reference answer")


def case_engine_ngram(fn):
    _engine_case(fn, "ngram", ngram_scenario, again=True)


def case_engine_seeded(fn):
    _engine_case(fn, "seeded", seeded_scenario, again=True)


def case_engine_finish(fn):
    _engine_case(fn, "finish", finish_scenario, again=False, reasons=["stop", "length", "stop", "stop", "length"])


CASES = [
    Case(
        "every draft accepted: the model's token comes too",
        case_bonus,
        "accept draft j while drafts[j] == targets[j]; then append targets[n]: the model's own token, also when n == k",
    ),
    Case(
        "the first mismatch ends the run",
        case_first_mismatch,
        "stop comparing at the first draft that differs: targets[n] replaces it",
    ),
    Case(
        "targets of a sampled request",
        case_sampled_targets,
        "never read targets past the first mismatch: with sampling there may be none",
    ),
    Case("an EOS inside the run cuts it", case_eos_in_run, "check each new token as if it came alone"),
    Case("ignore_eos", case_ignore_eos, "with ignore_eos only stop strings and max_new_tokens end the request"),
    Case(
        "max_new_tokens counts every new token",
        case_max_new_tokens,
        "len(output_ids) + new tokens reaches max_new_tokens: 'length', and nothing after it",
    ),
    Case(
        "a stop string across accepted tokens",
        case_stop_within_run,
        "decode a tail of output_ids + the new tokens so far, not each token alone",
    ),
    Case(
        "a stop string that begins before this step",
        case_stop_from_output,
        "the decoded tail includes the output before this step",
    ),
    Case(
        "a stop string of multi-byte characters",
        case_stop_multibyte,
        "the decoded tail must be long enough for the longest stop string, whatever its characters",
    ),
    Case("'stop' beats 'length'", case_stop_beats_length, "EOS and stop strings first, then the length"),
    Case(
        "kv_len: the valid K/V positions",
        case_kv_len,
        "prompt_len + len(output_ids) + len(tokens) - 1: every token but the newest",
    ),
    Case(
        "pages holding only rejected drafts go back",
        case_rejected_pages,
        "keep pages_for(total, page_size) pages, where total = prompt_len + len(output_ids) + len(tokens)",
    ),
    Case(
        "the newest token's page stays",
        case_newest_tokens_page,
        "the newest token's K/V is written next step at position total - 1: keep its page",
    ),
    Case(
        "never a page of the prefix cache",
        case_prefix_pages,
        "positions count from the prompt's first token; the first prefix_len // page_size pages are the cache's",
    ),
    Case(
        "a finish: kv_len and pages of the cut run",
        case_finish_pages,
        "total counts only the tokens the request keeps",
    ),
    Case(
        "the inputs are left as they were",
        case_inputs_unchanged,
        "build new lists; the scheduler appends the tokens and frees the pages itself",
    ),
    Case(
        "in the real engine, with n-gram drafts",
        case_engine_ngram,
        "the scheduler applies your result: pages back, cached_len = kv_len, tokens appended",
        engine=True,
    ),
    Case(
        "in the real engine, drafts rejected at every place",
        case_engine_seeded,
        "0 to 8 drafts accepted, rejected ones on one or two pages, then the prompts again on the prefix cache",
        engine=True,
    ),
    Case(
        "in the real engine, EOS, stop strings and max_tokens inside a run",
        case_engine_finish,
        "the request ends on the token that finishes it, as without drafts",
        engine=True,
    ),
]
SYMBOL = "verify_step"
SOLUTION = package_step
