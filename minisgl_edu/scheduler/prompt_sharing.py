"""`n > 1`: several answers to one prompt, which is computed for the first and shared by the rest.

Where this sits on the request path: the tokenizer worker turns a request with `n` answers into n
`UserMsg`s with the same prompt; the first is the "leader", and each other one names it
(`UserMsg.prompt_leader`). The scheduler calls this module at three fixed points:

    receive    `follow(req, leader)`: the request waits for its leader's prompt
    schedule   `waits(req)`: while the leader's prompt is being computed, the follower (and so
               everyone behind it in the queue) is not admitted
    results    `prompt_done(req, cache)`: right after the leader's prefill, its full prompt pages
               go to the prefix cache, while it keeps running on them

So each follower is admitted with a prefix-cache hit on the leader's full pages, and computes only
the prompt's last partial page again (a page is shared only once every token of it is computed),
instead of the whole prompt. The same happens without this module when the answers arrive one
after another; what it adds is the wait, so that n answers sent at once do not all compute the
prompt side by side in the same prefill batch.
"""

from __future__ import annotations

from typing import Optional

from minisgl_edu.core import Req, ReqStatus
from minisgl_edu.kvcache import CacheManager


def follow(req: Req, leader: Optional[Req]) -> None:
    """`req` waits for `leader`'s prompt pages, if the leader has not computed its prompt yet."""
    if leader is not None and leader.status in (ReqStatus.WAITING, ReqStatus.PREFILLING):
        req.prompt_leader = leader
        leader.shares_prompt = True


def waits(req: Req) -> bool:
    """Is `req` still waiting for its leader's prompt to be computed?"""
    leader = req.prompt_leader
    if leader is not None and leader.status in (ReqStatus.WAITING, ReqStatus.PREFILLING):
        return True
    req.prompt_leader = None  # done (or the leader was aborted): admitted like any request now
    return False


def prompt_done(req: Req, cache: CacheManager) -> None:
    """`req`'s prompt is computed: if others wait for it, its full pages go to the prefix cache."""
    if req.shares_prompt:
        _hand_to_cache(req, cache)


def _hand_to_cache(req: Req, cache: CacheManager) -> None:
    """Hand `req`'s full prompt pages to the prefix cache now, right after its prefill, while it
    keeps running on them (locked), so the other answers to the same prompt are admitted with a
    prefix hit instead of computing the prompt again. SGLang does the same for every request
    (`cache_unfinished_req`); here only the first of n answers does, so the cache holds what it
    held before for ordinary requests. Afterwards the row's first `req.shared_len` tokens are the
    prefix cache's, as a prefix hit's are: `CacheManager.release` and `trim` never free them."""
    ps, tree = cache.page_size, cache.prefix_cache
    full = len(req.input_ids) // ps
    own_from = req.prefix_len // ps
    if full <= own_from:
        return  # the whole prompt's full pages were a prefix hit already
    key = req.input_ids[: full * ps]
    _, cached = tree.match_prefix(key)
    if len(cached) > own_from:
        return  # another request cached this prompt meanwhile: the others will find its copy
    if tree.insert(key, cache.page_table.pages[req.table_idx][:full]) != own_from:
        return  # a cache that keeps nothing (naive): the pages stay the request's own
    handle, _ = tree.match_prefix(key)
    tree.lock(handle)  # the new node first, so its parents stay locked throughout
    tree.unlock(req.cache_handle)
    req.cache_handle = handle
    req.shared_len = full * ps
