"""Diagnoses for exercise 1 and its stretch about the EOS test itself: which token is an EOS (an id
of eos_ids, not a token that prints no text) and which reason it ends the request with ('stop').

The hand cases (expect.py, through `end_test_reading`) and the generated phase (scenes.reason_hint,
through `end_test_hint`) both ask them, and whether the EOS test is inverted (it stops only under
ignore_eos=True). Each probe runs the answer on a small request of its own, so a hint names the mistake
only where the answer really makes it. `*extra` is min_tokens for the stretch (0 there: nothing held back).
"""

from __future__ import annotations

from typing import Any, Optional

from minisgl_edu.core import Req
from minisgl_edu.grading.finish.tokens import EOS, PLAIN, _decode, _req
from minisgl_edu.grading.harness import tokenizer

REASONS = ("stop", "length")  # with None, all that check_finish may return
EOS_IS_STOP = (
    "an EOS ends the request with the reason 'stop', the same reason as a stop string: the contract, and the "
    "finish_reason a client reads (OpenAI's), have no reason of their own for an EOS, so return 'stop', never a "
    "name of your own such as 'eos'"
)
ONE_OF_THREE = (
    "check_finish returns only 'stop' (an EOS or a stop string), 'length' (the limit) or None (it goes on): "
    "clients test finish_reason against these words, so never return another"
)


def odd_reason(fn: Any, got: Any, *extra: Any) -> Optional[str]:
    """The hint where the answer returned a string that is not a reason of the contract: the EOS one
    when it returns that same string for ' ok' + an EOS (2 of eos_ids {0, 2}, room left), else the
    list of reasons. None when `got` is a reason, None or not a string."""
    if not isinstance(got, str) or got in REASONS:
        return None
    try:
        for_eos = fn(_req([PLAIN, 2]), set(EOS), _decode, *extra)
    except Exception:
        for_eos = None
    if for_eos == got:
        return f"your check returns {got!r} for an EOS: {EOS_IS_STOP}"
    return f"your check returned {got!r}: {ONE_OF_THREE}"


SILENT_NOT_EOS = (
    "an EOS is a token whose id is in eos_ids (test req.output_ids[-1] in eos_ids), not a token that decodes to "
    "no text: other special tokens (<|im_start|>, the chat markers) decode to '' as well and do not "
    "end the request, and another model's end id can be a token with text"
)
SILENT = 1  # <|im_start|>: a special token of SmolLM2 (decode gives ''), not one of its end ids {0, 2}


def _showing_specials(ids: list[int]) -> str:
    """The scheduler's decode, except that special tokens print their names ('<|im_start|>')."""
    return tokenizer().decode(ids, skip_special_tokens=False)


def silent_is_eos(fn: Any, *extra: Any) -> bool:
    """The answer ends ' ok' + <|im_start|> (not an end id of eos_ids {0, 2}) with 'stop', yet goes on
    when decode prints that token as '<|im_start|>': it takes a token that decodes to '' for an EOS."""
    assert _decode([SILENT]) == "" and SILENT not in EOS, "setup: token 1 should be a special token, not EOS"
    try:
        silent = fn(_req([PLAIN, SILENT]), set(EOS), _decode, *extra)
        return silent == "stop" and fn(_req([PLAIN, SILENT]), set(EOS), _showing_specials, *extra) is None
    except Exception:
        return False


SILENT_FOUND = (  # what silent_is_eos saw, for a failure message
    f"your check ends ' ok' + token {SILENT} (<|im_start|>, not in eos_ids {sorted(EOS)}) with 'stop', and goes on "
    "when decode prints that token as '<|im_start|>': it takes a token that decodes to no text for an EOS"
)


def end_test_hint(answer: list, got: Any, token: int, counts: bool, stretch: bool) -> Optional[str]:
    """The generated phase's hint where the answer (answer[0], when the search has it) returned `got`
    after `token` (an EOS that counts, or not): a reason outside the contract, or an EOS found by its
    empty text. None for other mistakes."""
    if not answer:
        return None
    fn, extra = answer[0], (0,) if stretch else ()
    odd = odd_reason(fn, got, *extra)
    if odd:
        return odd
    inverted = token in EOS and (got == "stop") != counts and eos_test_inverted(fn, *extra)
    if inverted:
        return EOS_TEST_INVERTED
    wrong = (got == "stop") != counts and (_decode([token]) == "") != counts
    if wrong and silent_is_eos(fn, *extra):
        kind = "one of eos_ids" if counts else "not one of eos_ids"
        return f"token {token} ({_decode([token])!r}) is {kind}: {SILENT_NOT_EOS}"
    return None


EOS_TEST_INVERTED = (
    "the EOS test is inverted: an id of eos_ids ends the request when ignore_eos is NOT set, so the test reads "
    "`not req.sampling_params.ignore_eos and req.output_ids[-1] in eos_ids` (ignore_eos=True is the benchmark "
    "flag that asks to run past the EOS)"
)


def eos_test_inverted(fn: Any, *extra: Any) -> Optional[str]:
    """What the answer does with ' ok' + an EOS (2 of eos_ids {0, 2}, room left) under ignore_eos False
    and True, where it goes on in the first and answers 'stop' in the second: it stops on an EOS only
    for the requests that asked to ignore it (the `not` of `not sp.ignore_eos` lost). None otherwise."""
    try:
        counted = fn(_req([PLAIN, 2]), set(EOS), _decode, *extra)
        ignored = fn(_req([PLAIN, 2], ignore_eos=True), set(EOS), _decode, *extra)
    except Exception:
        return None
    if counted is not None or ignored != "stop":
        return None
    return (
        "your check goes on at ' ok' + token 2 (in eos_ids {0, 2}) with ignore_eos=False, and answers 'stop' for "
        "the same output with ignore_eos=True: its EOS test stops only the requests that ask to ignore the EOS"
    )


def end_test_reading(fn: Any, req: Req, eos_ids: set[int], got: Any) -> Optional[tuple[str, str]]:
    """A hand case's (what to add to its message, hint) where the answer returned `got` for `req`: a
    reason outside the contract, an EOS test inverted by ignore_eos, or an EOS found by its empty text,
    each confirmed by a probe of the answer; None for other mistakes."""
    odd = odd_reason(fn, got)
    if odd:
        return "", odd
    eos_last = bool(req.output_ids) and req.output_ids[-1] in eos_ids
    eos_now = eos_last and not req.sampling_params.ignore_eos
    inverted = eos_last and (got == "stop") != eos_now and eos_test_inverted(fn)
    if inverted:
        return f"; {inverted}", EOS_TEST_INVERTED
    if (got == "stop") != eos_now and (_decode(req.output_ids[-1:]) == "") != eos_now and silent_is_eos(fn):
        return f"; {SILENT_FOUND}", SILENT_NOT_EOS
    return None
