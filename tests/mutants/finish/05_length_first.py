"""Checks the length before EOS and stop strings. When the model ends its answer on the last
allowed token, the client is told 'length' (cut off) instead of 'stop' (finished)."""

MUST_FAIL = {"stop beats length"}
MUST_SAY = "'stop' wins over 'length'"


def check_finish(req, eos_ids, decode=None):
    sp = req.sampling_params
    if len(req.output_ids) >= req.max_new_tokens:
        return "length"
    if not sp.ignore_eos and req.output_ids[-1] in eos_ids:
        return "stop"
    if sp.stop and decode is not None:
        tail = decode(req.output_ids[-(max(len(s) for s in sp.stop) + 4) :])
        if any(s in tail for s in sp.stop):
            return "stop"
    return None


CAUGHT_BY = {"hand", "generated"}
HINT_SAYS = "EOS first, then stop strings, then the length"
