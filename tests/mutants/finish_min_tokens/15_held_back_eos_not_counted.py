"""Counts toward min_tokens only the output tokens that are not EOS ("a held-back EOS is not part of
the answer, so it does not make it longer"). The contract counts every output token: the EOS stays
in the output and counts. After a held-back EOS the minimum is reached one token later than it
should be, and an EOS that is itself the min_tokens-th output token is held back: with min_tokens=2
and output [a, EOS] the reference answers "stop" (the contract: "an EOS as that very token finishes
with 'stop'"), this answer None (it counts 1 token); likewise [a, EOS, b, EOS] with min_tokens=3."""

from __future__ import annotations

MUST_FAIL = {"stretch: the min_tokens-th token counts", "stretch: in the real engine"}
MUST_SAY = "EOS tokens too"
CAUGHT_BY = {"hand", "generated"}
HINT_SAYS = "count len(req.output_ids), not the tokens that are not EOS"


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
    n = sum(1 for t in req.output_ids if t not in eos_ids)
    if n < min_tokens:
        return "length" if len(req.output_ids) >= req.max_new_tokens else None
    return check_finish(req, eos_ids, decode)
