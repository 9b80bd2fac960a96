"""Decodes len(stop) + 4 tokens, "a few tokens more than the stop string has characters": enough for
'北京' and for '🦀🦀!', not for '🚀🚀🚀' (12 bytes in UTF-8, 9 tokens) or '🇫🇷🇩🇪' (16 bytes, 12
tokens): a stop string the request then never stops on. The window must be counted in bytes."""

MUST_FAIL = {"stop string of emoji, at the edge of the window"}
MUST_SAY = "never stops"


def check_finish(req, eos_ids, decode=None):
    sp = req.sampling_params
    if not sp.ignore_eos and req.output_ids[-1] in eos_ids:
        return "stop"
    if sp.stop and decode is not None:
        window = max(len(s) for s in sp.stop) + 4
        tail = decode(req.output_ids[-window:])
        if any(s in tail for s in sp.stop):
            return "stop"
    if len(req.output_ids) >= req.max_new_tokens:
        return "length"
    return None


CAUGHT_BY = {"hand", "generated"}
HINT_SAYS = "count the window in bytes, len(s.encode()), not in characters"
