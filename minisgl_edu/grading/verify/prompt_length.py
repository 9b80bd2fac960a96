"""Exercise 8: the length test counted the prompt, `prompt_len + len(output) >= max_new_tokens`.

The step needs the sum prompt_len + len(output) for kv_len and the pages, and reusing it for the length
test reads max_new_tokens as a cap on the request's positions. max_new_tokens counts generated tokens
only: with the prompt counted, a request stops with 'length' prompt_len tokens early (at once when the
prompt alone is as long as the budget). On the unit cases (prompt_len 10) this looks like other length
mistakes, and where a generated scene shrinks to prompt_len 1 it is exactly one token early
(step.length_one_early), so it is told apart here first.

Read from the answer on two steps that differ only in prompt_len (14 and 16; output 2, 6 new tokens,
max_new_tokens 20, so no limit is reached): it answers 'length' at 4 and at 2 new tokens, where the
output with them reaches max_new_tokens - prompt_len. The cut moves with the prompt; the contract's does
not. Named only when the answer's result on the failing step is also the one of a step that counts the
prompt.
"""

from __future__ import annotations

import dataclasses
from typing import Optional

from minisgl_edu.grading.verify.requests import _call, _copy, _req, _w
from minisgl_edu.scheduler.verify_step import VerifyRequest, VerifyResult
from minisgl_edu.scheduler.verify_step import verify_step as package_step

PROMPTS = (14, 16)  # the probe's two prompt lengths; nothing else differs between its steps
PROBE_MAX_NEW = 20
COUNTS_PROMPT = (
    "the length test counted the prompt (prompt_len + len(output) >= max_new_tokens): max_new_tokens counts "
    "generated tokens only, so your request stopped prompt_len ({p}) tokens early. Your step's cut moves with "
    "the prompt: with output 2 and max_new_tokens {m} it answered 'length' at {a} new tokens for prompt_len {p1} "
    "and at {b} for prompt_len {p2}. Test len(req.output_ids) + len(tokens) >= max_new_tokens without prompt_len "
    "(the sum with prompt_len is for kv_len and the pages)"
)
COUNTS_PROMPT_HINT = (
    "max_new_tokens counts generated tokens only: test len(req.output_ids) + len(tokens) >= max_new_tokens, "
    "without prompt_len (prompt_len + ... is for kv_len and the pages)"
)


def _cut_at(fn, prompt_len: int) -> Optional[int]:
    """How many new tokens the answer keeps before 'length' on the probe's step with this prompt_len
    (every draft accepted, 6 new tokens in all); None when it does not answer 'length' or raises."""
    drafts = _w(" two", " three", " four", " five", " six")
    req = _req(_w(" one", " one"), len(drafts), prompt_len=prompt_len, max_new=PROBE_MAX_NEW)
    try:
        got = _call(fn, req, drafts, drafts + _w(" seven"))
    except Exception:
        return None
    return len(got.tokens) if got.finish_reason == "length" else None


def prompt_cuts(fn) -> Optional[tuple[int, int]]:
    """The answer's 'length' cuts (new tokens kept) for the probe's two prompt lengths, when each is
    where the output reaches max_new_tokens - prompt_len; None otherwise."""
    if fn is None:
        return None
    cuts = tuple(_cut_at(fn, p) for p in PROMPTS)
    if cuts != tuple(PROBE_MAX_NEW - p - 2 for p in PROMPTS):
        return None
    return cuts


def prompt_counted_step(req: VerifyRequest, drafts: list[int], targets: list[int]) -> VerifyResult:
    """The reference step whose length test counts the prompt: max_new_tokens lowered by prompt_len."""
    counted = dataclasses.replace(_copy(req), max_new_tokens=req.max_new_tokens - req.prompt_len)
    return package_step(counted, list(drafts), list(targets))


def counts_the_prompt(fn, req: VerifyRequest, drafts: list[int], targets: list[int], got) -> Optional[tuple[str, str]]:
    """(message, hint) when the answer's result `got` on this step is the one of a length test that counts
    the prompt (and not the right one) and its probe confirms it; None otherwise."""
    if fn is None or got is None:
        return None
    mistaken = prompt_counted_step(req, drafts, targets)
    if mistaken != got or mistaken == package_step(_copy(req), list(drafts), list(targets)):
        return None
    cuts = prompt_cuts(fn)
    if cuts is None:
        return None
    text = COUNTS_PROMPT.format(p=req.prompt_len, m=PROBE_MAX_NEW, a=cuts[0], p1=PROMPTS[0], b=cuts[1], p2=PROMPTS[1])
    return text, COUNTS_PROMPT_HINT


def prompt_length_hint(fn, req: VerifyRequest, drafts: list[int], targets: list[int]) -> Optional[str]:
    """counts_the_prompt's message and hint for the generated phase (the answer called here; None when it
    raises or does not count the prompt)."""
    if fn is None:
        return None
    try:
        got = _call(fn, _copy(req), list(drafts), list(targets))
    except Exception:
        return None
    named = counts_the_prompt(fn, req, drafts, targets, got)
    return f"{named[0]} ({named[1]})" if named else None
