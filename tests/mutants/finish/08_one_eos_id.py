"""Treats `eos_ids` as one id (takes the smallest). It is a set because some models end with any
of several ids (the Llama 3 and Qwen chat models list more than one): with the "wrong" one of
them, the request never stops at the end of its answer."""

MUST_FAIL = {"EOS ids finish with 'stop'"}
MUST_SAY = "every id counts"


def check_finish(req, eos_ids, decode=None):
    sp = req.sampling_params
    if not sp.ignore_eos and req.output_ids[-1] == min(eos_ids):
        return "stop"
    if sp.stop and decode is not None:
        tail = decode(req.output_ids[-(max(len(s) for s in sp.stop) + 4) :])
        if any(s in tail for s in sp.stop):
            return "stop"
    if len(req.output_ids) >= req.max_new_tokens:
        return "length"
    return None


CAUGHT_BY = {"hand", "generated"}
HINT_SAYS = "with the set eos_ids"
