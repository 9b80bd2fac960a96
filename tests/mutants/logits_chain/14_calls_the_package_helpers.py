"""Imports the package's own links (apply_penalties, apply_logit_bias) one by one and writes only
the glue around them. Full marks for the package, none for the student: the graded code must be
theirs."""

import torch
import xgrammar

from minisgl_edu.engine.logits_chain import apply_logit_bias, apply_penalties

MUST_FAIL = {"repetition penalty: prompt and output tokens", "logit_bias is added"}
MUST_SAY = "not your own code"
CAUGHT_BY = {"hand", "generated"}


def process_logits(logits, reqs):
    out = logits.float().clone()
    rows = [i for i, r in enumerate(reqs) if r.sampling_params.has_penalties]
    if rows:
        apply_penalties(out, rows, [reqs[i] for i in rows])
    rows = [i for i, r in enumerate(reqs) if r.sampling_params.logit_bias]
    if rows:
        apply_logit_bias(out, rows, [reqs[i] for i in rows])
    masked = [i for i, r in enumerate(reqs) if r.grammar is not None]
    if masked:
        bitmask = xgrammar.allocate_token_bitmask(len(reqs), out.shape[-1])
        for i in masked:
            reqs[i].grammar.fill_mask(bitmask, i)
        xgrammar.apply_token_bitmask_inplace(out, bitmask, indices=masked)
    for i, req in enumerate(reqs):
        sp, min_p = req.sampling_params, getattr(req.sampling_params, "min_p", 0.0)
        if min_p > 0 and not sp.is_greedy:
            probs = torch.softmax(out[i] / sp.temperature, dim=-1)
            out[i][probs < min_p * probs.max()] = float("-inf")
    return out


HINT_SAYS = "write the answer without calling, subclassing or keeping"
