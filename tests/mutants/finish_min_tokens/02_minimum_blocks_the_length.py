"""Returns None before anything else while below min_tokens, so the length limit waits too: a
request with min_tokens above max_tokens runs past its max_tokens."""

MUST_FAIL = {"stretch: max_tokens still ends it"}
MUST_SAY = "never max_tokens"


def check_finish_min_tokens(req, eos_ids, decode, min_tokens):
    if len(req.output_ids) < min_tokens:
        return None
    sp = req.sampling_params
    if not sp.ignore_eos and req.output_ids[-1] in eos_ids:
        return "stop"
    if sp.stop and decode is not None:
        tail = decode(req.output_ids[-(max(len(s) for s in sp.stop) + 4) :])
        if any(s in tail for s in sp.stop):
            return "stop"
    if len(req.output_ids) >= req.max_new_tokens:
        return "length"
    return None


CAUGHT_BY = {"hand", "generated"}
HINT_SAYS = "below min_tokens only the length limit can finish the request"
