"""Looks for a stop string in the decoded newest token only. On a real tokenizer a stop string
usually spans several tokens ('two three' is ' two' + ' three'), so it is never found."""

MUST_FAIL = {"stop string across tokens"}
MUST_SAY = "not only the newest one"


def check_finish(req, eos_ids, decode=None):
    sp = req.sampling_params
    if not sp.ignore_eos and req.output_ids[-1] in eos_ids:
        return "stop"
    if sp.stop and decode is not None:
        piece = decode(req.output_ids[-1:])
        if any(s in piece for s in sp.stop):
            return "stop"
    if len(req.output_ids) >= req.max_new_tokens:
        return "length"
    return None


CAUGHT_BY = {"hand", "generated"}
HINT_SAYS = "decode(req.output_ids[-window:])"
