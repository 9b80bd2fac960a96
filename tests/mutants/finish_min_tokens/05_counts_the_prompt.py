"""Counts the prompt into the minimum (len(input_ids) + len(output_ids)): a long prompt meets
min_tokens before a single token was generated. min_tokens is about the output."""

MUST_FAIL = {"stretch: output tokens only"}
MUST_SAY = "never the prompt"


def check_finish_min_tokens(req, eos_ids, decode, min_tokens):
    sp = req.sampling_params
    n = len(req.output_ids)
    if len(req.input_ids) + n >= min_tokens:
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
HINT_SAYS = "len(req.output_ids), not the prompt's length"
