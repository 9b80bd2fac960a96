"""Looks for stop strings in the prompt and the output together (`req.all_ids`). A stop string that
appears in the prompt then ends the request at its first token."""

MUST_FAIL = {"stop string in the prompt only"}
MUST_SAY = "decode req.output_ids only"


def check_finish(req, eos_ids, decode=None):
    sp = req.sampling_params
    if not sp.ignore_eos and req.output_ids[-1] in eos_ids:
        return "stop"
    if sp.stop and decode is not None:
        if any(s in decode(req.all_ids) for s in sp.stop):
            return "stop"
    if len(req.output_ids) >= req.max_new_tokens:
        return "length"
    return None


CAUGHT_BY = {"hand", "generated"}
HINT_SAYS = "decode the output tokens, not the prompt"
