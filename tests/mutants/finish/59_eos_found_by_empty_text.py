"""Recognises an EOS by its text: the newest token ends the request when decode([token]) is empty,
"since an EOS decodes to no text". Other special tokens (<|im_start|>, the chat markers) decode to
nothing as well, and another model's end ids are ordinary text in this tokenizer: the test is on the
ids in eos_ids, not on what a token prints."""

from __future__ import annotations

from typing import Callable, Optional

from minisgl_edu.core import Req

MUST_FAIL = {"EOS ids finish with 'stop'", "eos_ids is the model's set"}
MUST_SAY = "decodes to no text for an EOS"
CAUGHT_BY = {"hand", "generated"}
HINT_SAYS = "not a token that decodes to no text"


def check_finish(req: Req, eos_ids: set[int], decode: Optional[Callable[[list[int]], str]] = None) -> Optional[str]:
    sp = req.sampling_params
    last = req.output_ids[-1]
    is_eos = decode([last]) == "" if decode is not None else last in eos_ids
    if not sp.ignore_eos and is_eos:
        return "stop"
    if sp.stop and decode is not None:
        window = max(len(s.encode("utf-8")) for s in sp.stop) + 4
        tail = decode(req.output_ids[-window:])
        if any(s in tail for s in sp.stop):
            return "stop"
    if len(req.output_ids) >= req.max_new_tokens:
        return "length"
    return None
