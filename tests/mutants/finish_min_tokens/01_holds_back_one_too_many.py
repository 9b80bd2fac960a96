"""Holds EOS and stop strings back while len(output) <= min_tokens: one token too long. The
min_tokens-th output token is the first that may finish the request."""

MUST_FAIL = {"stretch: the min_tokens-th token counts"}
MUST_SAY = "not <="


def check_finish_min_tokens(req, eos_ids, decode, min_tokens):
    sp = req.sampling_params
    n = len(req.output_ids)
    if n > min_tokens:
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
HINT_SAYS = "< min_tokens holds back, == min_tokens does not"
