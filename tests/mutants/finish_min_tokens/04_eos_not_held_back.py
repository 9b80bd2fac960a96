"""Holds back only the stop strings: an EOS still finishes the request before min_tokens, which
is exactly what min_tokens is for (a minimum length the model cannot cut short)."""

MUST_FAIL = {"stretch: EOS waits for min_tokens", "stretch: in the real engine"}
MUST_SAY = "an EOS before min_tokens"


def check_finish_min_tokens(req, eos_ids, decode, min_tokens):
    sp = req.sampling_params
    n = len(req.output_ids)
    if not sp.ignore_eos and req.output_ids[-1] in eos_ids:
        return "stop"
    if n >= min_tokens and sp.stop and decode is not None:
        tail = decode(req.output_ids[-(max(len(s) for s in sp.stop) + 4) :])
        if any(s in tail for s in sp.stop):
            return "stop"
    if n >= req.max_new_tokens:
        return "length"
    return None


CAUGHT_BY = {"hand", "generated"}
HINT_SAYS = "while len(req.output_ids) < min_tokens, ignore EOS"
