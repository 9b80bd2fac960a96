from cells import code, md

CELLS = [
    md("""
# Exercise 6 — The radix prefix cache

**Goal:** write the tree that lets requests with a common beginning (a system prompt, a chat
history) share the KV pages of that beginning: match, insert, lock, and evict unused leaves.
**Time:** about 45 minutes.

Where it sits (`minisgl_edu/kvcache/manager.py`, the scheduler's `CacheManager`):

* **admit** — `match_prefix(prompt[:-1])` returns the deepest node that matches and the pages on
  the way. The request reuses those pages (its `prefix_len`) and computes only the rest, and
  `lock(node)` pins them while it runs. (The last prompt token is always computed: its logits give
  the first output token.)
* **finish** — `insert(tokens, pages)` adds what the request computed, in whole pages, and
  returns how many leading pages were in the tree already: the manager frees its own copies of
  those. `unlock(node)` releases the pin.
* **out of pages** — `reserve` calls `evict(n)`: remove unlocked leaves, least recently used
  first, until at least `n` pages are freed, and return their page ids.
* `num_evictable` (pages no running request uses, which `num_available` counts as free),
  `num_cached` and `cached_pages()` are given below: they walk the tree.

The tree works in whole pages. An edge holds a run of tokens whose length is a multiple of
`page_size`, with one page id per `page_size` tokens; a node's children are keyed by the first
page of their tokens (a tuple of `page_size` ids). A page is shared only if **all** its tokens
match. When a match or an insert ends inside an edge, **split** it there: the upper part gets the
matched tokens and pages and the lock count, the lower part keeps the rest. `lock` adds one to
`lock_ref` of the node **and every node above it** up to the root (a running request needs its
whole prefix); `unlock` takes it back. Only a leaf with `lock_ref == 0` may be evicted; when its
parent loses its last child, the parent may be evicted next.

The package's own version is `minisgl_edu/kvcache/radix_cache.py`; don't peek before you try (the
grader refuses an answer that uses it).

**How mini-sglang does it** (`python/minisgl/kvcache/radix_cache.py`): the same tree, page-aligned
matches, splits (`split_at`), lock counts up to the root (`lock_handle`) and least recently used
leaves first (a heap on `timestamp`). Its nodes store one KV slot index per *token* where this
engine stores one page id per page, so its `evict(size)` and its sizes count tokens; `match_prefix`
returns a handle whose indices are collected by walking up to the root, and `evict` asserts that
enough is evictable, where this engine's returns what it can. Its scheduler also inserts a prompt
into the tree right after its prefill (`cache_req(req, finished=False)`) so that requests running
at the same time share it; here a request's tokens go into the tree when it finishes.
"""),
    code("""
from __future__ import annotations

import heapq
from typing import Optional

from minisgl_edu.grading import check
"""),
    code('''
class Node:
    """A node of the tree and the edge that leads to it from its parent."""

    def __init__(self, key: tuple[int, ...] = (), pages: Optional[list[int]] = None,
                 parent: Optional[Node] = None, lock_ref: int = 0, last_access: int = 0) -> None:
        self.key = key  # tokens on the edge from the parent (a multiple of page_size)
        self.pages = pages if pages is not None else []  # one page id per page_size tokens of key
        self.parent = parent
        self.children: dict[tuple[int, ...], Node] = {}  # keyed by the first page of their key
        self.lock_ref = lock_ref  # running requests that use this node
        self.last_access = last_access


class RadixCache:
    def __init__(self, page_size: int) -> None:
        self.page_size = page_size
        self.root = Node()
        self.root.lock_ref = 1  # the root is never evicted
        self.clock = 0

    def touch(self, node: Node) -> None:
        self.clock += 1
        node.last_access = self.clock

    # --- given: what the cache manager reads --------------------------------------------
    def nodes(self) -> list[Node]:
        out, stack = [], list(self.root.children.values())
        while stack:
            node = stack.pop()
            out.append(node)
            stack.extend(node.children.values())
        return out

    @property
    def num_evictable(self) -> int:
        return sum(len(n.pages) for n in self.nodes() if n.lock_ref == 0)

    @property
    def num_cached(self) -> int:
        return sum(len(n.pages) for n in self.nodes())

    def cached_pages(self) -> set[int]:
        return {p for n in self.nodes() for p in n.pages}

    # --- yours ----------------------------------------------------------------------------
    def walk(self, key: tuple[int, ...]) -> tuple[Node, int, list[int]]:
        """Follow `key` (whole pages) down as far as it matches, splitting the last edge if the
        match ends inside it. Returns (deepest matched node, tokens matched, pages on the way)."""
        ### BEGIN SOLUTION
        ### HINT: look up children[key[at:at + page_size]], compare page by page, split on a partial match
        ps = self.page_size
        node, at, pages = self.root, 0, []
        while at < len(key):
            child = node.children.get(key[at : at + ps])
            if child is None:
                break
            n = 0  # matching tokens, in whole pages
            while n < len(child.key) and child.key[n : n + ps] == key[at + n : at + n + ps]:
                n += ps
            if n < len(child.key):
                child = self.split(child, n)
            pages += child.pages
            at += n
            node = child
            self.touch(node)
        return node, at, pages
        ### END SOLUTION

    def split(self, node: Node, n: int) -> Node:
        """Cut `node`'s edge after its first n tokens; return the new upper node."""
        ### BEGIN SOLUTION
        ### HINT: a new upper node takes key[:n], pages[:n // page_size], the parent, lock_ref and last_access
        ps = self.page_size
        upper = Node(node.key[:n], node.pages[: n // ps], node.parent, node.lock_ref, node.last_access)
        node.parent.children[upper.key[:ps]] = upper
        node.key, node.pages, node.parent = node.key[n:], node.pages[n // ps :], upper
        upper.children[node.key[:ps]] = node
        return upper
        ### END SOLUTION

    def match_prefix(self, ids: list[int]) -> tuple[Node, list[int]]:
        """The longest cached prefix of `ids`, in whole pages: (its deepest node, its pages)."""
        ### BEGIN SOLUTION
        ### HINT: cut ids to whole pages, then walk
        whole = len(ids) // self.page_size * self.page_size
        node, _, pages = self.walk(tuple(ids[:whole]))
        return node, pages
        ### END SOLUTION

    def lock(self, node: Node) -> None:
        ### BEGIN SOLUTION
        ### HINT: every node from here up to (not including) the root
        while node is not self.root:
            node.lock_ref += 1
            node = node.parent
        ### END SOLUTION

    def unlock(self, node: Node) -> None:
        ### BEGIN SOLUTION
        while node is not self.root:
            if node.lock_ref <= 0:
                raise ValueError("unlocked more often than locked")
            node.lock_ref -= 1
            node = node.parent
        ### END SOLUTION

    def insert(self, ids: list[int], pages: list[int]) -> int:
        """Add `ids` with their `pages` (one per page_size tokens; a partial last page is not
        cached). Returns how many leading pages were in the tree already."""
        ### BEGIN SOLUTION
        ### HINT: walk the key; the part that did not match becomes a new leaf under the node reached
        ps = self.page_size
        key = tuple(ids[: len(pages) * ps])
        node, at, _ = self.walk(key)
        existing = at // ps
        if at < len(key):
            leaf = Node(key[at:], list(pages[existing:]), node)
            self.touch(leaf)
            node.children[leaf.key[:ps]] = leaf
        return existing
        ### END SOLUTION

    def evict(self, num_pages: int) -> list[int]:
        """Remove unlocked leaves, least recently used first, until at least num_pages are freed
        (or nothing unlocked is left). Returns the freed page ids."""
        ### BEGIN SOLUTION
        ### HINT: a heap of (last_access, id(node), node) over unlocked leaves; a parent left childless joins it
        heap = [(n.last_access, id(n), n) for n in self.nodes() if not n.children and n.lock_ref == 0]
        heapq.heapify(heap)
        freed: list[int] = []
        while heap and len(freed) < num_pages:
            _, _, node = heapq.heappop(heap)
            freed += node.pages
            parent = node.parent
            del parent.children[node.key[: self.page_size]]
            if parent is not self.root and not parent.children and parent.lock_ref == 0:
                heapq.heappush(heap, (parent.last_access, id(parent), parent))
        return freed
        ### END SOLUTION
'''),
    md("""
## Try it

Two prompts that share their first six tokens, with a page size of 2: the second finds three
pages, the match splits the first prompt's edge there, and the shared node ends up with two
children. (Until your methods exist, the cell says so.)
"""),
    code("""
cache = RadixCache(page_size=2)
try:
    print(cache.insert([1, 2, 3, 4, 5, 6, 7, 8], [10, 11, 12, 13]))   # nothing was there: 0
    node, pages = cache.match_prefix([1, 2, 3, 4, 5, 6, 9, 9, 9])
    print("matched:", pages, "at the node", node.key)                 # the edge was split after 6 tokens
    print(cache.insert([1, 2, 3, 4, 5, 6, 9, 9], [20, 21, 22, 23]))   # 3 pages were there
    print("its children now:", sorted(c.key for c in node.children.values()))
    print("cached:", sorted(cache.cached_pages()), "evictable:", cache.num_evictable)
except NotImplementedError as e:
    print("not written yet:", e)
"""),
    md("""
## Check your answer

Unit cases on hand-built trees (page size 2): matches in whole pages, inserts that meet an
existing prefix, splits, lock counts, and eviction (locked nodes stay, leaves go first, least
recently used first, enough pages). Then your class runs inside a `CacheManager` through a
workload of requests that share prefixes, finish, are aborted and force evictions, with
`check()` after every operation; and finally inside the real engine on the default model, where
a second request reuses the first one's pages and gets the same tokens as with the package's
cache.
"""),
    code("""
result = check("prefix_cache", RadixCache)
"""),
    md("""
## Stretch: least-frequently-used eviction (not in this engine)

Your `evict` frees the least recently used leaves. A system prompt that hundreds of requests share
can still lose its pages to a prompt that one request used a moment ago. SGLang offers the other
order with `--radix-eviction-policy lfu`: its `LFUStrategy` ranks a leaf by `(hit_count,
last_access_time)`, fewest hits first. (mini-sglang has LRU only: one `timestamp` per node.) This
engine has no such option, so write `LFURadixCache(page_size)`: the same interface as
`RadixCache`, the same tree and the same answers from `match_prefix`, `insert`, `lock` and
`unlock`, and an `evict(n)` in this order.

**The contract.**

* **A hit.** Every call of `match_prefix` adds one hit to *each* node whose pages it returns: the
  deepest node and all its ancestors up to, not including, the root. A match that returns no pages
  counts nothing. `insert` counts no hit: it is a finished request handing its pages back, and that
  request's own match already counted when it was admitted. A new leaf starts with 0 hits. (The
  cache manager calls `match_prefix` when it admits a request.)
* **Use** is what the base part already tracks: `match_prefix` and `insert` mark every node they
  pass, and a new leaf, as used just now.
* **A split** (by a match or by an insert that ends inside an edge): both parts keep the hit count
  the edge had, and the lower part keeps its last use; the call that split the edge then counts
  (a match) and marks as used the upper part, which is on its path.
* **`evict(n)`** frees unlocked leaves until at least `n` pages are freed (or none are left), in
  this order: fewest hits first; among equal hits, the least recently used first; if hits and last
  use are both equal (the tree never produces that), the node with the smaller first page id.
  A node goes whole. A parent left childless (and unlocked) becomes a candidate in the same call,
  with its own hit count, and competes with the other leaves. A locked node (`lock_ref > 0`) is
  never evicted, whatever its count.
* `num_evictable`, `num_cached` and `cached_pages()` mean what they mean in the base part, and the
  cache manager's `check()` must hold after every call.

You may subclass your own `RadixCache` from the cell above (the solution does), or write the class
from scratch; subclassing or calling the package's `minisgl_edu.kvcache.radix_cache.RadixCache` is
not an answer. SGLang's own counting: for a long time its plain radix cache initialised
`hit_count` but never incremented it, so `lfu` evicted as `lru`; SGLang PR #18843 (2026) added the
increments, in `insert` too, which this contract leaves out. Its hierarchical cache
(`HiRadixCache`) counts a hit for every node on a matched path and copies `hit_count` into the
upper node when it splits an edge, as here.

`check` grades it on its own score line, `prefix_cache_lfu`: unit cases on small trees (page size
2) where LFU and LRU disagree, ties, counts along a path, splits, locks and chains of parents;
then the class inside a `CacheManager` with few pages, where which prefixes survive decides each
admission's prefix hit; last, the real engine with a pool of 9 pages: a prompt that three requests
used and a newer prompt that one used, then a long request that must evict, then the first prompt
again, which must still find its prefix.
"""),
    code('''
class LFURadixCache(RadixCache):
    """Your RadixCache, evicting the leaves with the fewest hits first."""

    def __init__(self, page_size: int) -> None:
        super().__init__(page_size)
        ### BEGIN SOLUTION
        self.hits: dict[Node, int] = {}  # a Node compares by identity: a dict key per node
        ### END SOLUTION

    def split(self, node: Node, n: int) -> Node:
        ### BEGIN SOLUTION
        upper = super().split(node, n)
        self.hits[upper] = self.hits.get(node, 0)  # both parts keep the edge's count
        return upper
        ### END SOLUTION

    def match_prefix(self, ids: list[int]) -> tuple[Node, list[int]]:
        ### BEGIN SOLUTION
        node, pages = super().match_prefix(ids)
        up = node
        while up is not self.root:  # every node whose pages the match returns
            self.hits[up] = self.hits.get(up, 0) + 1
            up = up.parent
        return node, pages
        ### END SOLUTION

    def evict(self, num_pages: int) -> list[int]:
        ### BEGIN SOLUTION
        def order(node: Node) -> tuple[int, int, int, Node]:
            return (self.hits.get(node, 0), node.last_access, node.pages[0], node)

        heap = [order(n) for n in self.nodes() if not n.children and n.lock_ref == 0]
        heapq.heapify(heap)
        freed: list[int] = []
        while heap and len(freed) < num_pages:
            node = heapq.heappop(heap)[-1]
            freed += node.pages
            self.hits.pop(node, None)
            parent = node.parent
            del parent.children[node.key[: self.page_size]]
            if parent is not self.root and not parent.children and parent.lock_ref == 0:
                heapq.heappush(heap, order(parent))
        return freed
        ### END SOLUTION
'''),
    code("""
try:
    cache = LFURadixCache(page_size=2)
    cache.insert([1, 1, 2, 2], [20, 21])   # X
    cache.insert([3, 3, 4, 4], [30, 31])   # Y
    for _ in range(3):
        cache.match_prefix([1, 1, 2, 2])   # X: 3 hits, long ago
    cache.match_prefix([3, 3, 4, 4])       # Y: 1 hit, just now
    print("evicted:", cache.evict(1))      # LRU would take X; fewest hits takes Y
except NotImplementedError as e:
    print("not written yet:", e)
"""),
    code("""
result_stretch = check("prefix_cache_lfu", LFURadixCache)
"""),
    md("""
## Going further

* Why does the manager match `prompt[:-1]` and not the whole prompt, even when the whole prompt
  is cached?
* A chat client sends the whole conversation again with every turn. Which pages does the second
  turn reuse, and which does it compute? (Chapter 06's page map shows it.)
"""),
]
