"""Reads "only the output counts" as "a stop string the prompt holds does not count": it skips a
stop string that the decoded prompt also holds. Only the generated text is searched, so the
prompt cannot change the answer: a stop string the output produces ends the request whether or
not the prompt holds it too (a prompt that quotes its own stop string, "Say STOP when done.",
then never stops on it)."""

from typing import Callable, Optional

from minisgl_edu.core import Req

MUST_FAIL = {"stop string in the prompt only", "generated: 200 requests grown token by token"}
MUST_SAY = "the prompt changed your answer"
CAUGHT_BY = {"hand", "generated"}
HINT_SAYS = "whether or not the prompt (or anything outside req.output_ids) holds it too"


def check_finish(req: Req, eos_ids: set[int], decode: Optional[Callable[[list[int]], str]] = None) -> Optional[str]:
    """Return "stop", "length" or None for `req`, whose newest token is req.output_ids[-1]."""
    sp = req.sampling_params
    if not sp.ignore_eos and req.output_ids[-1] in eos_ids:
        return "stop"
    if sp.stop and decode is not None:
        window = max(len(s.encode("utf-8")) for s in sp.stop) + 4
        tail = decode(req.output_ids[-window:])
        prompt = decode(list(req.input_ids))
        if any(s in tail and s not in prompt for s in sp.stop):
            return "stop"
    if len(req.output_ids) >= req.max_new_tokens:
        return "length"
    return None
