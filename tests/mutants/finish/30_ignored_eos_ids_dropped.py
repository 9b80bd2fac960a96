"""With ignore_eos, takes the ids of eos_ids out of the output before decoding its tail ("an ignored
EOS decodes to no text, so dropping it changes nothing and the window needs no margin for it"). That
holds for SmolLM2's end ids, which are special tokens, but eos_ids is the served model's set: an end
id may be ordinary text for this tokenizer, and then, kept by ignore_eos, its text is part of the
output ("the text is what decode gives for the output's token ids") and of a stop string. Differs
e.g. for eos_ids {1, 10907} (10907 is ' ok'), ignore_eos, stop=["two ok"] and the output
'one two ok': the reference answers "stop", this answer None (it searches 'one two')."""

from __future__ import annotations

from typing import Callable, Optional

from minisgl_edu.core import Req

MUST_FAIL = {"ignore_eos", "generated: 200 requests grown token by token"}
MUST_SAY = "with the ids of eos_ids taken out"
CAUGHT_BY = {"hand", "generated"}
HINT_SAYS = "an id of eos_ids is not always a special token"


def check_finish(req: Req, eos_ids: set[int], decode: Optional[Callable[[list[int]], str]] = None) -> Optional[str]:
    """Return "stop", "length" or None for `req`, whose newest token is req.output_ids[-1]."""
    sp = req.sampling_params
    if not sp.ignore_eos and req.output_ids[-1] in eos_ids:
        return "stop"
    if sp.stop and decode is not None:
        ids = req.output_ids
        if sp.ignore_eos:
            ids = [t for t in ids if t not in eos_ids]  # an ignored EOS has no text
        window = max(len(s.encode("utf-8")) for s in sp.stop)
        tail = decode(ids[-window:])
        if any(s in tail for s in sp.stop):
            return "stop"
    if len(req.output_ids) >= req.max_new_tokens:
        return "length"
    return None
