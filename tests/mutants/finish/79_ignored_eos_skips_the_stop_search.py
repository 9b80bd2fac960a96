"""With ignore_eos, when the newest token is one of eos_ids it skips the stop-string search ("an
EOS decodes to no text, so it cannot complete a stop string") and goes on to the length test. True
only of end ids that are special tokens for this tokenizer: eos_ids is the served model's set, an
id in it may be ordinary text here (10907 is ' ok'), and kept by ignore_eos it can complete a stop
string ('two ok'), which this answer then never sees."""

from __future__ import annotations

from typing import Callable, Optional

from minisgl_edu.core import Req

MUST_FAIL = {"ignore_eos"}
MUST_SAY = "your check finds 'two ok' there when ' ok' is no end id"
CAUGHT_BY = {"generated", "hand"}
HINT_SAYS = "an EOS id as the newest token still goes through the stop-string test"


def check_finish(req: Req, eos_ids: set[int], decode: Optional[Callable[[list[int]], str]] = None) -> Optional[str]:
    """Return "stop", "length" or None for `req`, whose newest token is req.output_ids[-1]."""
    sp = req.sampling_params
    newest = req.output_ids[-1]
    if newest in eos_ids:
        if not sp.ignore_eos:
            return "stop"
        silent = True  # an ignored EOS adds no text: nothing new to search
    else:
        silent = False
    if sp.stop and decode is not None and not silent:
        window = max(len(s.encode("utf-8")) for s in sp.stop) + 4
        tail = decode(req.output_ids[-window:])
        if any(s in tail for s in sp.stop):
            return "stop"
    if len(req.output_ids) >= req.max_new_tokens:
        return "length"
    return None
