"""Normalises the decoded tail and the stop strings to Unicode NFC before the search ("so that an accented stop
string matches however the model spelled the accent"). The contract is a plain text test: the output's text
contains the stop string as given, code point for code point; a model that writes 'e' + U+0301 has not written
the stop string 'é' (U+00E9), and the detokenizer (exercise 3), which cuts on the exact text, would find no
stop string to cut, so the request must go on."""

from __future__ import annotations

import unicodedata
from typing import Callable, Optional

from minisgl_edu.core import Req

MUST_FAIL = {"stop string across tokens"}
MUST_SAY = "U+0301 (a combining accent)"
CAUGHT_BY = {"hand"}
HINT_SAYS = "never unicodedata.normalize() the text or the stop strings"


def check_finish(req: Req, eos_ids: set[int], decode: Optional[Callable[[list[int]], str]] = None) -> Optional[str]:
    sp = req.sampling_params
    if not sp.ignore_eos and req.output_ids[-1] in eos_ids:
        return "stop"
    if sp.stop and decode is not None:
        window = max(len(s.encode("utf-8")) for s in sp.stop) + 4
        tail = unicodedata.normalize("NFC", decode(req.output_ids[-window:]))
        if any(unicodedata.normalize("NFC", s) in tail for s in sp.stop):
            return "stop"
    if len(req.output_ids) >= req.max_new_tokens:
        return "length"
    return None
