"""Removes a held-back EOS from req.output_ids, thinking it should not be part of the answer. The
check only decides: the token was sampled and streamed, and the scheduler's page count and the
client's text rely on the output as it is."""

MUST_FAIL = {"stretch: EOS waits for min_tokens"}
MUST_SAY = "changed req.output_ids"


def check_finish_min_tokens(req, eos_ids, decode, min_tokens):
    sp = req.sampling_params
    n = len(req.output_ids)
    if n < min_tokens:
        if req.output_ids[-1] in eos_ids:
            req.output_ids.pop()
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
HINT_SAYS = "leave req.output_ids as it is"
