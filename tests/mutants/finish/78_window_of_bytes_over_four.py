"""Sizes the decode window by the rule of thumb "a token is about 4 bytes of text":
len(s.encode()) // 4 + 4 tokens for the longest stop string. That is an average for English
words; a byte-level tokenizer can spend one token per byte (emoji, CJK, digits and punctuation,
an ignored EOS has none), so '🚀🚀🚀' (12 bytes, 9 tokens) gets a window of 7 and is never seen."""

from __future__ import annotations

from typing import Callable, Optional

MUST_FAIL = {"stop string of emoji, at the edge of the window", "the longest stop string sets the window"}
MUST_SAY = "3 characters but 12 bytes, spanning the last 9 tokens"
CAUGHT_BY = {"hand", "generated"}
HINT_SAYS = "a byte-level token can hold a single byte"


def check_finish(req, eos_ids: set[int], decode: Optional[Callable[[list[int]], str]] = None) -> Optional[str]:
    sp = req.sampling_params
    if not sp.ignore_eos and req.output_ids[-1] in eos_ids:
        return "stop"
    if sp.stop and decode is not None:
        # about 4 bytes of text per token, plus a margin for the token the stop string starts in
        window = max(len(s.encode("utf-8")) for s in sp.stop) // 4 + 4
        tail = decode(req.output_ids[-window:])
        if any(s in tail for s in sp.stop):
            return "stop"
    if len(req.output_ids) >= req.max_new_tokens:
        return "length"
    return None
