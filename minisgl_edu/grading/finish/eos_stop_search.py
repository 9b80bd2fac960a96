"""Exercise 1: under ignore_eos, the stop-string test skipped when the newest token is an EOS id ("an
EOS decodes to no text, so it cannot complete a stop string"). True only of end ids that are special
tokens for this tokenizer: eos_ids is the served model's set, an id in it may be ordinary text here
(10907 is ' ok'), and kept by ignore_eos it can complete a stop string.

The probe tells this from an answer that drops the end ids from the decoded text (decoded_calls.py):
both miss 'two ok' completed by ' ok' when ' ok' is an end id, so the hand case (base.py) and the
generated phase (scenes.reason_hint) ask this one first.
"""

from __future__ import annotations

from typing import Any

from minisgl_edu.grading.finish.tokens import PLAIN, _decode, _ids, _req

EOS_SKIPS_STOP_SEARCH = (
    "under ignore_eos an EOS id as the newest token still goes through the stop-string test: only the EOS test "
    "is turned off. eos_ids is the served model's set, and an id in it can be ordinary text for this tokenizer "
    "that completes a stop string, so never skip the stop-string search because the newest token is an EOS"
)


def eos_skips_stop_search(fn: Any, *extra: Any) -> bool:
    """Under ignore_eos, the answer misses 'two ok' in 'one two ok' when the newest token ' ok' is one of
    eos_ids {1, 10907}, yet finds it when eos_ids is {1} (the same output, ' ok' no end id), and the
    decode it is given holds the whole stop string either way: it skips the stop-string test when the
    newest token is an EOS id. It must find 'ok three' in 'one two ok three' with ' ok' an end id there,
    which an answer that drops the end ids from the text misses. (`*extra` is min_tokens, 0 there.)"""
    out = _ids("one two") + [PLAIN]
    inside = out + _ids(" three")
    if _decode(out) != "one two ok" or _decode(inside) != "one two ok three":
        return False

    def probe(ids: list[int], stop: str, eos_ids: set[int]) -> Any:
        return fn(_req(ids, ignore_eos=True, stop=[stop]), set(eos_ids), _decode, *extra)

    try:
        missed = probe(out, "two ok", {1, PLAIN}) in (None, "length") and probe(out, "two ok", {1}) == "stop"
        return missed and probe(inside, "ok three", {1, PLAIN}) == "stop"
    except Exception:
        return False
