"""Keeps each node's hit count in a one-element list bumped in place, and on a split gives the upper
part the lower part's list itself (`hits[upper] = hits[node]`), not a copy of its value. The two parts
then share one counter: every later hit on the upper part (a match ending there, or any match passing
through) also counts on the lower part, so the lower part looks used and outlives leaves it should lose to."""

from __future__ import annotations

import heapq
from typing import Optional

MUST_FAIL = {"stretch: a split keeps the count in both parts", "stretch: a match counts its whole path"}
MUST_SAY = "the upper part's hits landed on it too"
CAUGHT_BY = {"hand", "generated"}
HINT_SAYS = "the two parts share one counter"


class Node:
    """A node of the tree and the edge that leads to it from its parent."""

    def __init__(
        self,
        key: tuple[int, ...] = (),
        pages: Optional[list[int]] = None,
        parent: Optional[Node] = None,
        lock_ref: int = 0,
        last_access: int = 0,
    ) -> None:
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

    def split(self, node: Node, n: int) -> Node:
        """Cut `node`'s run after its first n tokens (whole pages): returns the node that now holds
        those n tokens; `node` holds the rest, below it."""
        ps = self.page_size
        upper = Node(node.key[:n], node.pages[: n // ps], node.parent, node.lock_ref, node.last_access)
        node.parent.children[upper.key[:ps]] = upper
        node.key, node.pages, node.parent = node.key[n:], node.pages[n // ps :], upper
        upper.children[node.key[:ps]] = node
        return upper

    def match_prefix(self, ids: list[int]) -> tuple[Node, list[int]]:
        """The longest cached prefix of `ids`, in whole pages: (the node where it ends, its pages)."""
        whole = len(ids) // self.page_size * self.page_size
        node, _, pages = self.walk(tuple(ids[:whole]))
        return node, pages

    def lock(self, node: Node) -> None:
        while node is not self.root:
            node.lock_ref += 1
            node = node.parent

    def unlock(self, node: Node) -> None:
        while node is not self.root:
            if node.lock_ref <= 0:
                raise ValueError("unlocked more often than locked")
            node.lock_ref -= 1
            node = node.parent

    def insert(self, ids: list[int], pages: list[int]) -> int:
        """Add `ids` with their `pages` (one per page_size tokens; tokens past them are not
        cached). Returns how many leading pages were in the tree already."""
        ps = self.page_size
        key = tuple(ids[: len(pages) * ps])
        node, at, _ = self.walk(key)
        existing = at // ps
        if at < len(key):
            leaf = Node(key[at:], list(pages[existing:]), node)
            self.touch(leaf)
            node.children[leaf.key[:ps]] = leaf
        return existing

    def evict(self, num_pages: int) -> list[int]:
        """Free unlocked leaves, least recently used first, until at least num_pages are freed
        (or nothing unlocked is left). Returns the freed page ids."""
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


class LFURadixCache(RadixCache):
    """Your RadixCache, evicting the leaves with the fewest hits first."""

    def __init__(self, page_size: int) -> None:
        super().__init__(page_size)
        self.hits: dict[Node, list[int]] = {}  # one counter cell per node, bumped in place

    def split(self, node: Node, n: int) -> Node:
        upper = super().split(node, n)
        self.hits[upper] = self.hits.setdefault(node, [0])  # both parts keep the edge's count
        return upper

    def match_prefix(self, ids: list[int]) -> tuple[Node, list[int]]:
        node, pages = super().match_prefix(ids)
        up = node
        while up is not self.root:  # every node whose pages the match returns
            self.hits.setdefault(up, [0])[0] += 1
            up = up.parent
        return node, pages

    def evict(self, num_pages: int) -> list[int]:
        def order(node: Node) -> tuple[int, int, int, Node]:
            return (self.hits.get(node, [0])[0], node.last_access, node.pages[0], node)

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
