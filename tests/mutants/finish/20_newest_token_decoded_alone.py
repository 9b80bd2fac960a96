"""Decodes the window in two parts and joins the texts: the tokens before the newest one, then the
newest token on its own ("decode the new token and append it to what was there"). A byte-level
token is not always whole characters: when the newest token carries the last bytes of a CJK
character or an emoji whose first bytes are in the token before, each half decodes to '\ufffd', so
a stop string made of such characters (stop=["北京"], output ending in the tokens of "北京") is
never found on the token that completes it, and the request runs on (None instead of "stop")."""

from __future__ import annotations

MUST_FAIL = {"stop string of CJK characters"}
MUST_SAY = "in parts"
CAUGHT_BY = {"hand", "generated"}
HINT_SAYS = "decode the window in one call"


def check_finish(req, eos_ids, decode=None):
    sp = req.sampling_params
    if not sp.ignore_eos and req.output_ids[-1] in eos_ids:
        return "stop"
    if sp.stop and decode is not None:
        window = max(len(s.encode("utf-8")) for s in sp.stop) + 4
        ids = req.output_ids[-window:]
        tail = decode(ids[:-1]) + decode(ids[-1:])
        if any(s in tail for s in sp.stop):
            return "stop"
    if len(req.output_ids) >= req.max_new_tokens:
        return "length"
    return None
