"""Looks for each stop string with `re.search(s, tail)`, as if a stop string were a pattern. A stop
string is plain text: one with regex metacharacters ('1+2', '2 =?', '.', '**') is read as a pattern,
so '1+2' matches '112' but not the text '1+2' itself, '.' matches any character, and '(' raises
re.error. The test is the plain substring test `s in tail`."""

from __future__ import annotations

import re
from typing import Callable, Optional

from minisgl_edu.core import Req

MUST_FAIL = {"an ignored EOS inside a stop string"}
MUST_SAY = "it searches the stop strings as regex patterns"
CAUGHT_BY = {"hand", "generated"}
HINT_SAYS = "a stop string is plain text, not a pattern"


def check_finish(req: Req, eos_ids: set[int], decode: Optional[Callable[[list[int]], str]] = None) -> Optional[str]:
    """Return "stop", "length" or None for `req`, whose newest token is req.output_ids[-1]."""
    sp = req.sampling_params
    if not sp.ignore_eos and req.output_ids[-1] in eos_ids:
        return "stop"
    if sp.stop and decode is not None:
        window = max(len(s.encode("utf-8")) for s in sp.stop) + 4
        tail = decode(req.output_ids[-window:])
        if any(re.search(s, tail) for s in sp.stop):
            return "stop"
    if len(req.output_ids) >= req.max_new_tokens:
        return "length"
    return None
