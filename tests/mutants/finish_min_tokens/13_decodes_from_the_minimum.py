"""Once the minimum is reached, decodes only the tokens from the min_tokens-th on, reasoning that
earlier text "was held back already". A stop string that completed before the minimum and that the
decoded tail still shows must finish the request on the min_tokens-th token (SGLang's choice, the
contract's); this answer never sees it, and a stop string that begins before that token and ends
after it is missed too."""

MUST_FAIL = {"stretch: generated: 200 requests grown token by token"}
MUST_SAY = "first difference"
CAUGHT_BY = {"hand", "generated"}
HINT_SAYS = "a stop string may begin before the min_tokens-th token"


def check_finish_min_tokens(req, eos_ids, decode, min_tokens):
    n = len(req.output_ids)
    if n < min_tokens:
        return "length" if n >= req.max_new_tokens else None
    sp = req.sampling_params
    if not sp.ignore_eos and req.output_ids[-1] in eos_ids:
        return "stop"
    if sp.stop and decode is not None:
        window = max(len(s.encode("utf-8")) for s in sp.stop) + 4
        start = max(n - window, min_tokens - 1, 0)
        if any(s in decode(req.output_ids[start:]) for s in sp.stop):
            return "stop"
    if n >= req.max_new_tokens:
        return "length"
    return None
