"""Skips the min_tokens gate when ignore_eos is set ("ignore_eos already keeps the EOS from
finishing it"): the gate holds back stop strings too, so with ignore_eos a stop string before
min_tokens finishes the request."""

MUST_FAIL = {"stretch: with ignore_eos"}
MUST_SAY = "stop strings wait for min_tokens with ignore_eos too"


def check_finish_min_tokens(req, eos_ids, decode, min_tokens):
    sp = req.sampling_params
    n = len(req.output_ids)
    if n < min_tokens and not sp.ignore_eos:
        return "length" if n >= req.max_new_tokens else None
    if not sp.ignore_eos and req.output_ids[-1] in eos_ids:
        return "stop"
    if sp.stop and decode is not None:
        tail = decode(req.output_ids[-(max(len(s) for s in sp.stop) + 4) :])
        if any(s in tail for s in sp.stop):
            return "stop"
    if n >= req.max_new_tokens:
        return "length"
    return None


CAUGHT_BY = {"hand", "generated"}
HINT_SAYS = "keep the min_tokens gate when ignore_eos is set"
