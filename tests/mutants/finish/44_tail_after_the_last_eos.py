"""Under ignore_eos, starts the decoded tail after the last id of eos_ids in the window ("an end
token separates two texts"). An ignored EOS stays in the output, and when it is ordinary text for
this tokenizer (another model's end id) its text is part of a stop string: the tail is
decode(req.output_ids[-window:]) as it is, end ids included."""

from typing import Callable, Optional

from minisgl_edu.core import Req

MUST_FAIL = {"ignore_eos"}
MUST_SAY = "after the last id of eos_ids"
CAUGHT_BY = {"hand", "generated"}
HINT_SAYS = "nor starting the text after the last of them"


def check_finish(req: Req, eos_ids: set[int], decode: Optional[Callable[[list[int]], str]] = None) -> Optional[str]:
    """Return "stop", "length" or None for `req`, whose newest token is req.output_ids[-1]."""
    sp = req.sampling_params
    if not sp.ignore_eos and req.output_ids[-1] in eos_ids:
        return "stop"
    if sp.stop and decode is not None:
        window = max(len(s.encode("utf-8")) for s in sp.stop) + 4
        ids = req.output_ids[-window:]
        start = 0
        for i, token in enumerate(ids):
            if token in eos_ids:
                start = i + 1
        tail = decode(ids[start:])
        if any(s in tail for s in sp.stop):
            return "stop"
    if len(req.output_ids) >= req.max_new_tokens:
        return "length"
    return None
