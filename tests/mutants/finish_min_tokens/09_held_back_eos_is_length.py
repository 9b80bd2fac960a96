"""Answers "stop" when the last allowed token is a held-back EOS: below min_tokens the EOS does
not count, so the request ends by its length limit, with "length"."""

MUST_FAIL = {"stretch: max_tokens still ends it"}
MUST_SAY = "not 'stop'"


def check_finish_min_tokens(req, eos_ids, decode, min_tokens):
    sp = req.sampling_params
    n = len(req.output_ids)
    if n >= req.max_new_tokens and not sp.ignore_eos and req.output_ids[-1] in eos_ids:
        return "stop"
    if n < min_tokens:
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
HINT_SAYS = "answer 'length' when it is reached"
