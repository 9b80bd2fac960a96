"""Exercise 5's check of a batch's phase name, called by checks.check_batch.

The engine tells a prompt batch by `batch.phase == "prefill"` and a decode batch by `"decode"`. A batch
under another name ("extend", as mini-sglang and SGLang call a prompt pass, or "mixed") is not run as
either. Two mistakes give one: the right items under another word, and a mixed batch (prompt chunks and
decode tokens together). The items tell them apart: only waiting requests, each starting at its
req.cached_len, are a prefill batch's items; only running requests, each with its newest token, a
decode batch's. Such a batch needs only its phase renamed; any other is mixed.
"""

from __future__ import annotations

from minisgl_edu.grading.core import Mistake

ONE_PHASE = (
    "a batch is either prefill or decode: a prefill batch holds waiting requests only, and the running "
    "requests wait for the next decode batch, built only when no prompt token can run (no mixed batches)"
)


def _phase_of_items(s, batch) -> str:
    """ "prefill" or "decode" when every item is one of that phase's, else ""."""
    if all(it.req in s.waiting and it.start == it.req.cached_len for it in batch.items):
        return "prefill"
    if all(it.req in s.running and (it.start, it.num_tokens) == (it.req.total_len - 1, 1) for it in batch.items):
        return "decode"
    return ""


def check_phase(s, batch) -> None:
    """The batch's phase is "prefill" or "decode"; another name is told as a misnamed phase when the
    items are all of one phase, as a mixed batch otherwise."""
    if batch.phase in ("prefill", "decode"):
        return
    right = _phase_of_items(s, batch) if batch.items else ""
    if not right:
        raise Mistake(f"a batch's phase is 'prefill' or 'decode', not {batch.phase!r}", ONE_PHASE)
    raise Mistake(
        f"a batch's phase is 'prefill' or 'decode', not {batch.phase!r}: your batch holds the right kind of items "
        f"for a {right} batch, under another name",
        f'the phase is the exact string the engine compares with: Batch("{right}", items), with "prefill" for prompt '
        'chunks and "decode" for one new token per running request; no other word (not "extend") is run',
    )
