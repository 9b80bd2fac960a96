"""Treats min_tokens as ignore_eos for the whole request: with any min_tokens set, an EOS never
finishes it, even after the minimum."""

MUST_FAIL = {"stretch: with ignore_eos"}
MUST_SAY = "not an ignore_eos for the whole"


def check_finish_min_tokens(req, eos_ids, decode, min_tokens):
    sp = req.sampling_params
    n = len(req.output_ids)
    ignore_eos = sp.ignore_eos or min_tokens > 0
    if not ignore_eos and req.output_ids[-1] in eos_ids:
        return "stop"
    if n >= min_tokens and sp.stop and decode is not None:
        tail = decode(req.output_ids[-(max(len(s) for s in sp.stop) + 4) :])
        if any(s in tail for s in sp.stop):
            return "stop"
    if n >= req.max_new_tokens:
        return "length"
    return None


CAUGHT_BY = {"hand", "generated"}
HINT_SAYS = "from min_tokens on, an EOS finishes the request again"
