"""Compares the output length with `sampling_params.max_tokens`, what the client asked for. The
scheduler clamps it to what fits in the context (`req.max_new_tokens`); past that the request
would run out of context."""

MUST_FAIL = {"the clamped limit"}
MUST_SAY = "req.max_new_tokens"


def check_finish(req, eos_ids, decode=None):
    sp = req.sampling_params
    if not sp.ignore_eos and req.output_ids[-1] in eos_ids:
        return "stop"
    if sp.stop and decode is not None:
        tail = decode(req.output_ids[-(max(len(s) for s in sp.stop) + 4) :])
        if any(s in tail for s in sp.stop):
            return "stop"
    if len(req.output_ids) >= sp.max_tokens:
        return "length"
    return None


CAUGHT_BY = {"hand", "generated"}
HINT_SAYS = "req.max_new_tokens, not sampling_params.max_tokens"
