"""Tests `tail.endswith(stop)`. A token can carry the end of a stop string and more ('two th'
completes inside ' three'), and then the text never ends with it: the request runs on."""

MUST_FAIL = {"stop string inside a token"}
MUST_SAY = "not only at its end"


def check_finish(req, eos_ids, decode=None):
    sp = req.sampling_params
    if not sp.ignore_eos and req.output_ids[-1] in eos_ids:
        return "stop"
    if sp.stop and decode is not None:
        tail = decode(req.output_ids[-(max(len(s) for s in sp.stop) + 4) :])
        if any(tail.endswith(s) for s in sp.stop):
            return "stop"
    if len(req.output_ids) >= req.max_new_tokens:
        return "length"
    return None


CAUGHT_BY = {"hand", "generated"}
HINT_SAYS = "`s in tail`, not tail.endswith(s)"
