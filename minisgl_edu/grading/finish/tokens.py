"""The real tokenizer and hand-made requests, shared by exercise 1's cases, its generated scenes
and the diagnoses that re-run an answer on a variant of a request.

`decode` is what the scheduler passes to the finish check (Scheduler._decode_tail): the default
model's tokenizer, special tokens skipped, so an EOS id (and any other special token) decodes to ''.
"""

from __future__ import annotations

from typing import Callable

from minisgl_edu.core import Req, SamplingParams
from minisgl_edu.grading.harness import tokenizer

EOS = {0, 2}  # SmolLM2's <|endoftext|> and <|im_end|>
PLAIN = 10907  # " ok" in SmolLM2's vocabulary: neither EOS nor part of any case's stop string


def _decode(ids: list[int]) -> str:
    """What the scheduler passes as `decode` (Scheduler._decode_tail)."""
    return tokenizer().decode(ids, skip_special_tokens=True)


def _ids(text: str) -> list[int]:
    return tokenizer().encode(text)


def noting_decode(calls: list[list[int]]) -> Callable[[list[int]], str]:
    """The scheduler's decode, which also notes the ids of each call in `calls`: how much an answer
    decodes, and in how many parts."""

    def decode(ids: list[int]) -> str:
        calls.append(list(ids))
        return _decode(ids)

    return decode


def _req(output: list[int], max_new: int = 50, prompt: str = "Count for me.", **kw) -> Req:
    req = Req(0, _ids(prompt), SamplingParams(max_tokens=kw.pop("max_tokens", max_new), **kw), output_ids=list(output))
    req.max_new_tokens = max_new
    return req
