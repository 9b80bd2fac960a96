"""The radix prefix cache: share the KV pages of a common prompt prefix between requests.

Where this sits on the request path: when the scheduler admits a request it calls
`match_prefix(prompt)`; every leading page whose tokens are already in the tree is reused, and
only the rest of the prompt is computed. When a request finishes, `insert()` adds its tokens and
pages to the tree so the next request with the same prefix (a shared system prompt, a chat
history) finds them.

The tree works in whole pages: an edge holds a run of tokens whose length is a multiple of
`page_size`, with one page id per `page_size` tokens. A node that a running request uses is
*locked* (`lock_ref > 0`) and can not be evicted; unlocked leaves are evicted least recently
used first when the allocator runs dry.

Exercise 6 of the course replaces this class (see `CacheManager.prefix_cache`).
"""

from __future__ import annotations

import heapq
import itertools
from dataclasses import dataclass, field
from typing import Optional

_clock = itertools.count()


@dataclass(eq=False)
class RadixNode:
    key: tuple[int, ...] = ()  # tokens on the edge from the parent (len % page_size == 0)
    pages: list[int] = field(default_factory=list)  # one page per page_size tokens of `key`
    parent: Optional["RadixNode"] = None
    children: dict[tuple[int, ...], "RadixNode"] = field(default_factory=dict)
    lock_ref: int = 0
    last_access: int = 0

    def touch(self) -> None:
        self.last_access = next(_clock)


class RadixCache:
    name = "radix"

    def __init__(self, page_size: int) -> None:
        self.page_size = page_size
        self.root = RadixNode()
        self.root.lock_ref = 1  # the root is never evicted
        self._evictable_pages = 0  # pages in nodes with lock_ref == 0
        self._locked_pages = 0

    # --- lookup ----------------------------------------------------------------------------
    def _first(self, ids: tuple[int, ...], at: int) -> tuple[int, ...]:
        return ids[at : at + self.page_size]

    def match_prefix(self, ids: list[int]) -> tuple[RadixNode, list[int]]:
        """Longest cached prefix of `ids` in whole pages: (deepest node, its pages in order)."""
        node, _, pages = self._walk(tuple(ids[: len(ids) // self.page_size * self.page_size]))
        return node, pages

    def _walk(self, key: tuple[int, ...]) -> tuple[RadixNode, int, list[int]]:
        """Follow `key` down the tree as far as it matches, splitting the last edge if the match
        ends inside it. Returns (deepest matched node, tokens matched, pages on the way)."""
        node, pages, at = self.root, [], 0
        while at < len(key):
            child = node.children.get(self._first(key, at))
            if child is None:
                break
            n = self._common_len(child.key, key[at:])
            if n < len(child.key):
                child = self._split(child, n)
            pages.extend(child.pages)
            at += len(child.key)
            node = child
            node.touch()
        return node, at, pages

    def _common_len(self, a: tuple[int, ...], b: tuple[int, ...]) -> int:
        """Length of the common prefix, rounded down to whole pages."""
        n = 0
        limit = min(len(a), len(b))
        while n < limit and a[n] == b[n]:
            n += 1
        return n // self.page_size * self.page_size

    def _split(self, node: RadixNode, n: int) -> RadixNode:
        """Cut `node`'s edge after n tokens; returns the new upper part."""
        ps = self.page_size
        upper = RadixNode(key=node.key[:n], pages=node.pages[: n // ps], parent=node.parent)
        upper.lock_ref = node.lock_ref
        upper.last_access = node.last_access
        node.parent.children[self._first(upper.key, 0)] = upper
        node.key, node.pages = node.key[n:], node.pages[n // ps :]
        node.parent = upper
        upper.children[self._first(node.key, 0)] = node
        return upper

    # --- locking: a running request pins its matched prefix ---------------------------------
    def lock(self, node: RadixNode) -> None:
        while node is not self.root:
            if node.lock_ref == 0:
                self._evictable_pages -= len(node.pages)
                self._locked_pages += len(node.pages)
            node.lock_ref += 1
            node = node.parent

    def unlock(self, node: RadixNode) -> None:
        while node is not self.root:
            if node.lock_ref <= 0:
                raise ValueError("radix node unlocked more often than locked")
            node.lock_ref -= 1
            if node.lock_ref == 0:
                self._evictable_pages += len(node.pages)
                self._locked_pages -= len(node.pages)
            node = node.parent

    # --- insert: a finished request donates its pages ---------------------------------------
    def insert(self, ids: list[int], pages: list[int]) -> int:
        """Add `ids` (whole pages) with their `pages`.

        Returns how many leading pages were already in the tree: for those, the tree keeps its
        own copy and the caller must free the duplicates among `pages` that it owns.
        """
        ps = self.page_size
        key = tuple(ids[: len(pages) * ps])
        node, at, _ = self._walk(key)
        existing = at // ps
        if at < len(key):
            leaf = RadixNode(key=key[at:], pages=list(pages[existing:]), parent=node)
            leaf.touch()
            node.children[self._first(leaf.key, 0)] = leaf
            self._evictable_pages += len(leaf.pages)
        return existing

    # --- eviction ---------------------------------------------------------------------------
    def evict(self, num_pages: int) -> list[int]:
        """Remove unlocked leaves, least recently used first, until `num_pages` are freed."""
        heap = [(n.last_access, id(n), n) for n in self._leaves() if n.lock_ref == 0]
        heapq.heapify(heap)
        freed: list[int] = []
        while heap and len(freed) < num_pages:
            _, _, node = heapq.heappop(heap)
            freed.extend(node.pages)
            self._evictable_pages -= len(node.pages)
            parent = node.parent
            del parent.children[self._first(node.key, 0)]
            if parent is not self.root and not parent.children and parent.lock_ref == 0:
                heapq.heappush(heap, (parent.last_access, id(parent), parent))
        return freed

    def _leaves(self) -> list[RadixNode]:
        out, stack = [], [self.root]
        while stack:
            node = stack.pop()
            if node is not self.root and not node.children:
                out.append(node)
            stack.extend(node.children.values())
        return out

    def _nodes(self) -> list[RadixNode]:
        out, stack = [], list(self.root.children.values())
        while stack:
            node = stack.pop()
            out.append(node)
            stack.extend(node.children.values())
        return out

    @property
    def num_evictable(self) -> int:
        return self._evictable_pages

    @property
    def num_cached(self) -> int:
        return self._evictable_pages + self._locked_pages

    def cached_pages(self) -> set[int]:
        return {p for node in self._nodes() for p in node.pages}

    def sequences(self) -> set[tuple[int, ...]]:
        """Every token sequence the tree holds in full: the keys from the root down to each leaf
        (what tests and graders compare to check which tokens were cached)."""
        out = set()
        for node in self._leaves():
            keys = []
            while node is not self.root:
                keys.append(node.key)
                node = node.parent
            out.add(tuple(t for key in reversed(keys) for t in key))
        return out
