"""Once the minimum is reached, finishes with "stop" when an EOS appears anywhere in the output,
reasoning that a held-back EOS, like a held-back stop string the tail still shows, fires as soon as
the minimum allows it. The contract: from the min_tokens-th token on, check_finish's rules apply
unchanged, and its EOS test looks at the newest token only; an EOS that was held back earlier does
not end the request. Differs e.g. with min_tokens=3, output [EOS, 5, 6] (no stop strings, large
max_tokens): reference None, this answer "stop"."""

MUST_FAIL = {"stretch: EOS waits for min_tokens", "stretch: generated: 200 requests grown token by token"}
MUST_SAY = "held back"
CAUGHT_BY = {"hand", "generated"}
HINT_SAYS = "an EOS held back earlier never finishes the request"


def check_finish(req, eos_ids, decode=None):
    sp = req.sampling_params
    if not sp.ignore_eos and req.output_ids[-1] in eos_ids:
        return "stop"
    if sp.stop and decode is not None:
        window = max(len(s.encode("utf-8")) for s in sp.stop) + 4
        tail = decode(req.output_ids[-window:])
        if any(s in tail for s in sp.stop):
            return "stop"
    if len(req.output_ids) >= req.max_new_tokens:
        return "length"
    return None


def check_finish_min_tokens(req, eos_ids, decode, min_tokens):
    n = len(req.output_ids)
    if n < min_tokens:
        return "length" if n >= req.max_new_tokens else None
    # the minimum is reached: an EOS held back before now counts as well
    if min_tokens > 0 and not req.sampling_params.ignore_eos and any(t in eos_ids for t in req.output_ids):
        return "stop"
    return check_finish(req, eos_ids, decode)
