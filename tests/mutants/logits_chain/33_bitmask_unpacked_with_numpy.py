"""Unpacks the XGrammar bitmask with `np.unpackbits` on its bytes, in numpy's default bit order
(bitorder="big": the highest bit of each byte first). The bitmask says that bit j of 32-bit word k,
counted from the low end, stands for token 32 * k + j, so within every byte the answer reads token
8 * b + j from bit 7 - j: the allowed tokens come out mirrored inside each group of 8. It masks the
tokens the grammar allows and keeps ones it forbids, greedy rows as much as sampling ones; the
grader's (yes|no) grammar on a 12-token vocabulary allows tokens 4, 5, 6 and 8, and this answer
keeps 1, 2 and 3 instead."""

from __future__ import annotations

import numpy as np
import torch
import xgrammar as xgr

MUST_FAIL = {
    "grammar mask, greedy rows too",
    "a batch that uses every link",
    "generated: 200 batches against the package's chain",
}
MUST_SAY = "the bits of each byte mirrored"
CAUGHT_BY = {"hand", "generated"}
HINT_SAYS = "lowest bit first, in every byte too"


def process_logits(logits, reqs):
    out = logits.float().clone()
    vocab = out.shape[-1]
    for i, req in enumerate(reqs):
        sp, row = req.sampling_params, out[i]
        if sp.repetition_penalty != 1.0:
            for t in set(req.input_ids + req.output_ids):
                row[t] = row[t] / sp.repetition_penalty if row[t] > 0 else row[t] * sp.repetition_penalty
        if req.output_ids:
            counts = torch.bincount(torch.tensor(req.output_ids), minlength=vocab).to(row.dtype)
            row -= sp.frequency_penalty * counts + sp.presence_penalty * (counts > 0).to(row.dtype)
        for t, b in sp.logit_bias.items():
            row[t] += b
        if req.grammar is not None:
            bitmask = xgr.allocate_token_bitmask(1, vocab)
            req.grammar.fill_mask(bitmask, 0)
            bits = np.unpackbits(bitmask[0].numpy().view(np.uint8))[:vocab]
            row[~torch.from_numpy(bits.astype(bool))] = float("-inf")
    return out
