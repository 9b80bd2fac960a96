"""Holds EOS back below min_tokens only when a decode function is passed, as if the minimum belonged
to the stop-string machinery: with decode=None (which the signature allows, e.g. for a request with
no stop strings) an EOS before min_tokens finishes the request, which min_tokens forbids."""

MUST_FAIL = {"stretch: EOS waits for min_tokens"}
MUST_SAY = "decode=None"


def check_finish_min_tokens(req, eos_ids, decode, min_tokens):
    sp = req.sampling_params
    n = len(req.output_ids)
    if decode is not None and n < min_tokens:
        return "length" if n >= req.max_new_tokens else None
    if not sp.ignore_eos and req.output_ids[-1] in eos_ids:
        return "stop"
    if sp.stop and decode is not None:
        window = max(len(s.encode("utf-8")) for s in sp.stop) + 4
        if any(s in decode(req.output_ids[-window:]) for s in sp.stop):
            return "stop"
    if n >= req.max_new_tokens:
        return "length"
    return None


CAUGHT_BY = {"hand"}
HINT_SAYS = "the min_tokens hold-back does not depend on decode"
