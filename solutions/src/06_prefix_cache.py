from cells import code, md

CELLS = [
    md("""
# Exercise 6 — The radix prefix cache

**Goal:** write the cache that lets requests with a common beginning (a system prompt, a chat
history) share the KV pages of that beginning, and that gives back the pages nobody uses when
memory runs out.
**Time:** about 45 minutes.

Where it sits: the scheduler's `CacheManager` (`minisgl_edu/kvcache/manager.py`) owns one, as
`cache.prefix_cache`, and calls it at four moments of a request's life:

* **admit**: `match_prefix(prompt[:-1])`. The request starts with the pages returned (its
  `prefix_len` is their tokens) and computes only the rest; then `lock(node)` on the node returned.
  (The last prompt token is always computed: its logits give the first output token.)
* **finish**: `insert(tokens, pages)` with what the request computed, in whole pages. The count it
  returns tells the manager which of the request's pages are duplicates of pages the tree already
  had (it frees those); the tree keeps the others. Then `unlock(node)`, with the node of the admission.
* **abort**: `unlock(node)` only; the request's own pages go back to the free list.
* **out of pages**: `reserve` calls `evict(n)` and puts the page ids it returns on the free list.

In between, the manager counts `num_evictable` cached pages as free (`num_available`), and its
`check()` verifies that every page is exactly one of: free, cached (`cached_pages()`), or held by a
running request that computed it.

## The contract

**Whole pages.** The cache stores K/V in pages of `page_size` tokens (2 in the grader's small
trees, 16 in the engine). A page is shared only if **all** its tokens match: the K/V of a token
depends on every token before it. Tokens after the last whole page are ignored, by `match_prefix`
and `insert` alike.

**The tree** (given: `Node`, and `nodes`, `num_evictable`, `num_cached`, `cached_pages`, which read
it). A node holds a run of tokens (`key`) and one page id per `page_size` of them (`pages`): page `i`
holds the K/V of `key[i * page_size:(i + 1) * page_size]`, after the tokens on the path from the root;
every node but the root holds at least one page. The given readers rely on three invariants, after
every call:

1. every cached page is in exactly one node, once;
2. the children of a node start with different pages (`children` is keyed by the first
   `page_size` tokens of a child's `key`);
3. `lock_ref` of a node counts the locks taken on it or on a node below it and not yet undone
   (the root's is 1: it is never evicted). `num_evictable` counts the pages of nodes whose
   `lock_ref` is 0, and the manager counts those as free: `evict` must be able to free every one.

**`match_prefix(ids)`** returns `(node, pages)`: `pages` are the page ids of the longest cached
prefix of `ids`, in whole pages, in order (`[]` and the root when nothing matches), and the pages on
the path from the root to `node` are exactly `pages`, no more. When the cached run goes on past the
match, the node holding it is cut in two there (both parts keep its `lock_ref`; the lower part keeps
its last use), so that such a node exists. A match never changes which pages are cached.

**`lock(node)` / `unlock(node)`**: `lock` protects every page on the path from the root to `node`
(the pages the match returned) from eviction until the matching `unlock`. Locks count: two
requests that locked the same node need two unlocks. `unlock` gets the node that `lock` got, even
if a later call has cut it in two meanwhile.

**`insert(ids, pages)`** returns `k`, the number of leading pages of this sequence that the tree
had before the call (what `match_prefix` would have returned, counted), not the number added.
`pages[i]` holds tokens `ids[i * page_size:(i + 1) * page_size]`; only those `len(pages)` pages count.
The tree keeps its own pages for the first `k` and takes `pages[k:]`; `pages[:k]` stay the caller's.
Inserting a sequence that is cached already returns `len(pages)` and changes no page.

**A use.** `match_prefix` and `insert` use the cached pages they reach: those they return or find,
and those `insert` adds. Pages of a cached run that goes on past the sequence are not used by that
call (the run is cut there, as for a match). `evict` goes by the order of last use.

**`evict(n)`** frees cached pages and returns their ids, each once; they leave the tree, and the
caller hands them out again.

* It removes whole nodes, and only unlocked leaves (`lock_ref == 0`, no children). A node whose
  last child goes becomes a leaf, and may go in the same call, by its own last use.
* The least recently used leaf goes first. A locked leaf is never freed, even when it is the least
  recently used and memory is tight: the others can still go.
* It stops as soon as it has freed at least `n` pages: it frees more than `n` only because the last
  node goes whole, and fewer only when nothing unlocked is left (it returns what it freed, no error).

**What the grader plays** (the unit cases, page size 2 but one tree of pages of 3, through these
methods only, and the root's `lock_ref`): matches in whole pages and with tokens past the last whole
page; inserts over a cached prefix and of what is cached already; matches that end inside a run,
locked or not; locks held by one and by two requests; eviction order against insertion order both
ways, with uses by `match_prefix` and by `insert`; a parent left childless; a prefix that running
requests hold while memory is tight; `evict(n)` with `n` below, equal to and above a node's pages.
Then your class runs inside a `CacheManager` for hundreds of steps with few pages, where what it
keeps decides every admission's prefix hit, against the package's cache; and in the real engine.

The package's own version is `minisgl_edu/kvcache/radix_cache.py`; don't read it before you try
(the grader refuses an answer that uses it). A failed case says what went wrong and gives a hint.

**How mini-sglang does it** (`python/minisgl/kvcache/radix_cache.py`): the same tree, page-aligned
matches, splits (`split_at`), lock counts up to the root (`lock_handle`) and least recently used
leaves first (a `timestamp` per node). Its nodes store one KV slot index per *token* where this
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

    # --- yours: walk and split are helpers you may shape as you like (the grader and the
    # cache manager call only the methods of the contract) -----------------------------------
    def walk(self, key: tuple[int, ...]) -> tuple[Node, int, list[int]]:
        """The longest cached prefix of `key` (whole pages), as (the node where it ends, tokens
        matched, its pages), with the tree cut so that such a node exists."""
        ### BEGIN SOLUTION
        ### HINT: see the contract above
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
        """Cut `node`'s run after its first n tokens (whole pages): returns the node that now holds
        those n tokens; `node` holds the rest, below it."""
        ### BEGIN SOLUTION
        ### HINT: see the contract above
        ps = self.page_size
        upper = Node(node.key[:n], node.pages[: n // ps], node.parent, node.lock_ref, node.last_access)
        node.parent.children[upper.key[:ps]] = upper
        node.key, node.pages, node.parent = node.key[n:], node.pages[n // ps :], upper
        upper.children[node.key[:ps]] = node
        return upper
        ### END SOLUTION

    def match_prefix(self, ids: list[int]) -> tuple[Node, list[int]]:
        """The longest cached prefix of `ids`, in whole pages: (the node where it ends, its pages)."""
        ### BEGIN SOLUTION
        ### HINT: see the contract above
        whole = len(ids) // self.page_size * self.page_size
        node, _, pages = self.walk(tuple(ids[:whole]))
        return node, pages
        ### END SOLUTION

    def lock(self, node: Node) -> None:
        ### BEGIN SOLUTION
        ### HINT: see the contract above
        while node is not self.root:
            node.lock_ref += 1
            node = node.parent
        ### END SOLUTION

    def unlock(self, node: Node) -> None:
        ### BEGIN SOLUTION
        ### HINT: see the contract above
        while node is not self.root:
            if node.lock_ref <= 0:
                raise ValueError("unlocked more often than locked")
            node.lock_ref -= 1
            node = node.parent
        ### END SOLUTION

    def insert(self, ids: list[int], pages: list[int]) -> int:
        """Add `ids` with their `pages` (one per page_size tokens; tokens past them are not
        cached). Returns how many leading pages were in the tree already."""
        ### BEGIN SOLUTION
        ### HINT: see the contract above
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
        """Free unlocked leaves, least recently used first, until at least num_pages are freed
        (or nothing unlocked is left). Returns the freed page ids."""
        ### BEGIN SOLUTION
        ### HINT: see the contract above
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

The cases of "What the grader plays" above: unit cases on small trees, your class inside a
`CacheManager` (a workload with plenty of pages, then hundreds of steps with few, `check()` after
every operation), and last the real engine on the default model, where a second request reuses the
first one's pages and gets the same tokens as with the package's cache. A failed case says what
went wrong, on which tokens and pages, and gives a hint.
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
2) where LFU and LRU disagree, ties, counts along a path, splits, locks (a locked parent whose last
child goes too), a node evicted and then inserted again in its recycled pages, a new leaf below a
node with hits, chains of parents; then the class inside a `CacheManager` with few pages, where
which prefixes survive decides each admission's prefix hit; last, the real engine with a pool of 9
pages: a prompt that three requests used and a newer prompt that one used, then a long request
that must evict, then the first prompt again, which must still find its prefix.
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
