"""Builds the output's text incrementally on the request, appending decode([newest]) at every call,
so that nothing is decoded twice ("the check runs after every token, so decode only the new one").
A token decoded on its own is not its share of the text: the byte tokens of a CJK character or an
emoji each decode to U+FFFD, so a stop string made of such characters is never found, and a check
called once on a request (as after a restart) sees only its newest token."""

from __future__ import annotations

from typing import Callable, Optional

from minisgl_edu.core import Req

MUST_FAIL = {"stop string across tokens"}
MUST_SAY = "not only the newest one"
CAUGHT_BY = {"hand", "generated"}
HINT_SAYS = "decode(req.output_ids[-window:])"


def check_finish(req: Req, eos_ids: set[int], decode: Optional[Callable[[list[int]], str]] = None) -> Optional[str]:
    sp = req.sampling_params
    if not sp.ignore_eos and req.output_ids[-1] in eos_ids:
        return "stop"
    if sp.stop and decode is not None:
        text = getattr(req, "_stop_text", "") + decode(req.output_ids[-1:])
        req._stop_text = text
        if any(s in text[-(max(len(s) for s in sp.stop) + 16) :] for s in sp.stop):
            return "stop"
    if len(req.output_ids) >= req.max_new_tokens:
        return "length"
    return None
