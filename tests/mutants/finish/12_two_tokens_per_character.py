"""Decodes 2 * len(stop) tokens, "a character takes at most two tokens". True of '北京' (4 tokens),
wrong for an emoji: '🦀' is 4 UTF-8 bytes, and the byte-level tokenizer can spend up to one token
per byte, so '🦀🦀' takes 6 tokens and the window of 4 misses its first crab."""

MUST_FAIL = {"stop string of emoji, at the edge of the window"}
MUST_SAY = "four bytes"


def check_finish(req, eos_ids, decode=None):
    sp = req.sampling_params
    if not sp.ignore_eos and req.output_ids[-1] in eos_ids:
        return "stop"
    if sp.stop and decode is not None:
        for s in sp.stop:
            if s in decode(req.output_ids[-2 * len(s) :]):
                return "stop"
    if len(req.output_ids) >= req.max_new_tokens:
        return "length"
    return None


CAUGHT_BY = {"hand", "generated"}
HINT_SAYS = "a character is up to four bytes, and a byte-level token can hold a single byte"
