"""Holds back only the EOS test: a stop string still finishes the request before min_tokens."""

MUST_FAIL = {"stretch: stop strings wait too"}
MUST_SAY = "stop strings wait"


def check_finish_min_tokens(req, eos_ids, decode, min_tokens):
    sp = req.sampling_params
    n = len(req.output_ids)
    if n >= min_tokens and not sp.ignore_eos and req.output_ids[-1] in eos_ids:
        return "stop"
    if sp.stop and decode is not None:
        tail = decode(req.output_ids[-(max(len(s) for s in sp.stop) + 4) :])
        if any(s in tail for s in sp.stop):
            return "stop"
    if n >= req.max_new_tokens:
        return "length"
    return None


CAUGHT_BY = {"hand", "generated"}
HINT_SAYS = "hold back the stop-string test as well as EOS"
