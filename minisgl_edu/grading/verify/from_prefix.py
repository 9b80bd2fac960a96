"""Exercise 8: positions counted from the cached prefix (req.prefix_len) instead of the prompt's first
token (req.prompt_len).

The whole prompt is in the request's row, the prefix cache's pages and the prompt tokens computed after
them alike, so kv_len counts from prompt_len. An answer that starts from prefix_len ("its first
prefix_len tokens sit in pages of the prefix cache" read as where the request's own positions begin) is
short by the prompt tokens after the prefix. With no prefix (prefix_len 0) that looks like leaving the
prompt out altogether, so step.py names it only once the answer, on a small step of its own with a
prefix, comes out short by exactly prompt_len - prefix_len.
"""

from __future__ import annotations

from minisgl_edu.grading.verify.requests import _call, _copy, _req, _w
from minisgl_edu.scheduler.verify_step import verify_step as package_step

FROM_PREFIX = (
    "kv_len counted positions from req.prefix_len (the cached prefix), not from the prompt's first token: the "
    "whole prompt is in the row, the prefix cache's tokens and the prompt tokens computed after them alike, so "
    "kv_len left out the prompt tokens after the prefix"
)
FROM_PREFIX_HINT = (
    f"{FROM_PREFIX} (kv_len = prompt_len + len(req.output_ids) + len(tokens) - 1: prompt_len, not prefix_len)"
)


def counts_from_prefix(fn) -> bool:
    """On a step with a prompt of 10 tokens, 4 of them a cached prefix, the answer's kv_len is short by
    exactly the 6 prompt tokens after the prefix."""
    one, two, three = _w(" one", " two", " three")
    req = _req([one], 1, prompt_len=10, prefix_len=4)
    try:
        got = _call(fn, req, [two], [two, three]).kv_len
    except Exception:
        return False
    want = package_step(_copy(req), [two], [two, three]).kv_len
    return got == want - (req.prompt_len - req.prefix_len)
