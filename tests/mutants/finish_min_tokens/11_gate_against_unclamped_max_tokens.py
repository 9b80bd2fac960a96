"""Below min_tokens it tests the length against `req.sampling_params.max_tokens`, the limit the
client asked for, instead of `req.max_new_tokens`, that limit clamped to what fits in the model's
context: a request with a long prompt and min_tokens runs past the end of its context."""

MUST_FAIL = {"stretch: max_tokens still ends it"}
MUST_SAY = "clamped"


def check_finish_min_tokens(req, eos_ids, decode, min_tokens):
    sp = req.sampling_params
    n = len(req.output_ids)
    if n < min_tokens:
        return "length" if n >= sp.max_tokens else None
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
HINT_SAYS = "req.max_new_tokens, not sampling_params.max_tokens"
