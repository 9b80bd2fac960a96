"""Decodes exactly len(stop) tokens, "one token per character at most". Wrong for characters that
take several byte tokens: '北京' has 2 characters but 4 tokens, so the window misses its start."""

MUST_FAIL = {"stop string of CJK characters"}
MUST_SAY = "margin"


def check_finish(req, eos_ids, decode=None):
    sp = req.sampling_params
    if not sp.ignore_eos and req.output_ids[-1] in eos_ids:
        return "stop"
    if sp.stop and decode is not None:
        for s in sp.stop:
            if s in decode(req.output_ids[-len(s) :]):
                return "stop"
    if len(req.output_ids) >= req.max_new_tokens:
        return "length"
    return None


CAUGHT_BY = {"hand", "generated"}
HINT_SAYS = "count the stop string's bytes, len(s.encode()), not its characters"
