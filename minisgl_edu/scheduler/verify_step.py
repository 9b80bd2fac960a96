"""The verify step of speculative decoding: what one request keeps after a verify forward pass.

Where this sits on the request path: with `SchedulerConfig.speculative_algorithm` on, a decode
batch may carry drafts (`Speculator.drafts`, `ngram.py`): a request computes its newest token and
its k drafts as k+1 positions in one forward pass, and the engine gives back the model's own
token at each of them (`engine/verify.py`), the "targets". Then `Speculator.verified` calls
`Scheduler.verify_fn` (by default `verify_step`, below) for that request, and applies what it
returns: the pages go back (`CacheManager.trim`), `req.cached_len` becomes `kv_len`; the scheduler
appends the tokens one by one (`_add_token`, which sends each to the detokenizer and runs the
finish check on it).

The step, from the request's state, its drafts and the targets:

1. **accept**: draft j is accepted while it equals targets[j] (the model's token after the newest
   token and drafts 0..j-1); at the first mismatch the model's own token there replaces it, and
   if every draft was accepted, targets[k] comes free (the "bonus"). So 1 to k+1 tokens.
2. **cut**: each new token is checked as if it had come in a step of its own (EOS unless
   `ignore_eos`, stop strings in the decoded tail, `max_new_tokens`): the first one that finishes
   the request is its last token; the rest of the run is dropped.
3. **roll back**: K/V was computed for the newest token and every draft, but only the positions
   of tokens the request now has are valid, all but its newest (whose K/V is computed next step,
   as after any decode step). A rejected draft's K/V is dead: `kv_len` stops before it, so the
   prefix cache (which takes `req.cached_len` tokens when the request finishes) never sees it,
   and a page that holds no position of the request's tokens goes back to the free list.

Exercise 8 of the course replaces `verify_step` (see `Scheduler.verify_fn`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Callable, Optional

from minisgl_edu.core import Req, SamplingParams
from minisgl_edu.engine.verify import accept_greedy
from minisgl_edu.kvcache.manager import pages_for
from minisgl_edu.scheduler.finish import check_finish

if TYPE_CHECKING:
    from minisgl_edu.kvcache.manager import CacheManager


@dataclass
class VerifyRequest:
    """What the verify step reads about one request, as it was before this step."""

    prompt_len: int  # tokens of the prompt; positions count from its first token
    output_ids: list[int]  # generated so far; output_ids[-1] is the newest token, computed in this pass
    max_new_tokens: int  # the request stops after this many output tokens ("length")
    eos_ids: set[int]  # the model's end-of-sequence ids ("stop", unless ignore_eos)
    ignore_eos: bool
    stop: list[str]  # stop strings ("stop" when the generated text contains one)
    decode: Callable[[list[int]], str]  # token ids -> text, as the scheduler decodes a tail
    pages: list[int]  # its page-table row: pages[i] holds positions i*page_size .. (i+1)*page_size - 1
    page_size: int
    prefix_len: int = 0  # its first prefix_len tokens sit in pages of the prefix cache: never free those

    @classmethod
    def of(cls, req: Req, cache: CacheManager, eos_ids: set[int], decode: Callable[[list[int]], str]) -> VerifyRequest:
        sp = req.sampling_params
        return cls(
            prompt_len=len(req.input_ids),
            output_ids=list(req.output_ids),
            max_new_tokens=req.max_new_tokens,
            eos_ids=set(eos_ids),
            ignore_eos=sp.ignore_eos,
            stop=list(sp.stop),
            decode=decode,
            pages=list(cache.page_table.pages[req.table_idx]),
            page_size=cache.page_size,
            # a prefix hit, or (n > 1) the prompt pages it handed to the prefix cache
            prefix_len=max(req.prefix_len, req.shared_len),
        )


@dataclass
class VerifyResult:
    """What the request keeps from one verify step."""

    accepted: int  # drafts the model agreed with (0..k), before any cut
    tokens: list[int]  # its new tokens in order: accepted drafts, then the model's own; cut at a finish
    finish_reason: Optional[str] = None  # "stop" | "length" if a token of `tokens` finishes it, else None
    kv_len: int = 0  # positions 0..kv_len-1 hold valid K/V: prompt + output (with `tokens`) - 1
    free_pages: list[int] = field(default_factory=list)  # the end of `pages` that holds no token: back to the free list


def verify_step(req: VerifyRequest, drafts: list[int], targets: list[int]) -> VerifyResult:
    """The verify step of one request (see the module docstring). `targets[j]` is the model's
    token after the newest token and drafts 0..j-1 (len(drafts) + 1 of them with greedy decoding;
    with sampling, the engine's rule stops them at the first draft it rejects)."""
    run = accept_greedy(drafts, targets)
    tokens: list[int] = []
    reason = None
    for token in run:
        tokens.append(token)
        reason = _finish_reason(req, req.output_ids + tokens)
        if reason is not None:
            break  # the request ends on this token: the rest of the run never happened
    total = req.prompt_len + len(req.output_ids) + len(tokens)
    # Keep the pages of positions 0..total-1: the newest token's K/V goes to position total-1 next
    # step. Pages past them hold only rejected drafts. (The prefix's pages come first, so they
    # are always kept; the max() says so.)
    keep = max(pages_for(total, req.page_size), req.prefix_len // req.page_size)
    return VerifyResult(
        accepted=len(run) - 1,
        tokens=tokens,
        finish_reason=reason,
        kv_len=total - 1,
        free_pages=req.pages[keep:],
    )


def _finish_reason(req: VerifyRequest, output: list[int]) -> Optional[str]:
    """The scheduler's finish check (`check_finish`) for a request whose output is `output`."""
    probe = Req(
        uid=-1,
        input_ids=[],
        sampling_params=SamplingParams(ignore_eos=req.ignore_eos, stop=list(req.stop)),
        output_ids=output,
        max_new_tokens=req.max_new_tokens,
    )
    return check_finish(probe, req.eos_ids, req.decode)


__all__ = ["VerifyRequest", "VerifyResult", "verify_step"]
