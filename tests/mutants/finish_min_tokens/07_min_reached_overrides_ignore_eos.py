"""Once min_tokens is reached, finishes on EOS whatever ignore_eos says: the two rules are
separate, and ignore_eos keeps turning the EOS test off after the minimum."""

MUST_FAIL = {"stretch: with ignore_eos"}
MUST_SAY = "ignore_eos is set"


def check_finish_min_tokens(req, eos_ids, decode, min_tokens):
    sp = req.sampling_params
    n = len(req.output_ids)
    if n >= min_tokens:
        if req.output_ids[-1] in eos_ids:
            return "stop"
        if sp.stop and decode is not None:
            tail = decode(req.output_ids[-(max(len(s) for s in sp.stop) + 4) :])
            if any(s in tail for s in sp.stop):
                return "stop"
    if n >= req.max_new_tokens:
        return "length"
    return None


CAUGHT_BY = {"hand", "generated"}
HINT_SAYS = "reaching min_tokens does not undo ignore_eos"
