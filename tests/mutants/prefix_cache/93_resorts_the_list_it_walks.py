"""evict walks a sorted list of leaves with `for node in leaves` and, when a parent is left childless,
appends it and re-sorts that same list inside the loop. The for loop keeps its index: a parent older
than the leaf just taken sorts into a slot already passed (never freed), and a leaf already freed moves
into the next slot and is freed again (KeyError / a page returned twice). Use a heap, or pop from the front."""

from __future__ import annotations

from typing import Optional

MUST_FAIL = {"evict frees enough pages", "a childless parent keeps its own last use"}
MUST_SAY = "the parent is lost only when it was used before the leaf"
CAUGHT_BY = {"hand", "generated"}
HINT_SAYS = "Never reorder a list that a for loop walks"


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
        leaves = sorted((n for n in self.nodes() if not n.children and n.lock_ref == 0), key=lambda n: n.last_access)
        freed: list[int] = []
        for node in leaves:  # oldest first
            if len(freed) >= num_pages:
                break
            freed += node.pages
            parent = node.parent
            del parent.children[node.key[: self.page_size]]
            if parent is not self.root and not parent.children and parent.lock_ref == 0:
                leaves.append(parent)  # it is a leaf now: it competes by its own last use
                leaves.sort(key=lambda n: n.last_access)
        return freed
