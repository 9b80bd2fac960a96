"""The LFU stretch: which call, other than a plain match, changed a node's hit count, or which kind
of match counted nothing.

Only `match_prefix` changes a count (one hit on each node whose pages it returns, wherever the match
ends). An answer whose lock/unlock, insert or evict also changes a count (resets it, say) orders the
leaves wrongly later, and so does one whose match counts only some matches (those that end at a
leaf, or that use every id); the failing evict looks like any other miscount. This probe tells them
apart: it plays one control scene, then the same scene with one thing changed, and names the first
change after which P goes where Q should.

The control: P = [1, 1, 2, 2] (pages 20, 21) matched 3 times, then Q = [3, 3, 4, 4] (pages 30, 31)
twice; evict(1) frees Q (fewer hits). An answer that gets the control wrong (plain LRU, the most
hits first...) has another mistake, and the probe says nothing. The evict variant makes P's hits
while P is a leaf, and the internal one while P has a child, so each blames only its own mistake.
"""

from __future__ import annotations

from minisgl_edu.grading.prefix_cache.tree import _new

P, P_PAGES, Q, Q_PAGES = [1, 1, 2, 2], [20, 21], [3, 3, 4, 4], [30, 31]
CHILD, CHILD_PAGES = [1, 1, 2, 2, 5, 5], [20, 21, 22]  # P with one page more: a child [5, 5] below P
LONGER = P + [9, 9]  # ids whose match ends at P, before the ids' end

RULE = "Only a match changes a count: lock, unlock, insert and evict leave the hits of the nodes they keep as they were"
CALLS = {
    "lock": "a lock() and unlock() of the node P's last match returned",
    "insert": "an insert of P's ids again (every page already cached)",
    "evict": "an evict(1) that frees P's only child [5, 5] (page 22, inserted after P's hits, never matched)",
}
MATCHES = {
    "internal": (
        "a match that ends at an internal node (not a leaf)",
        "made while P had a child [5, 5] (page 22, never matched), so each match ended at an internal node",
        "A match that ends at an internal node (not a leaf) counts a hit too: every node whose pages it returns "
        "gets one, whether or not it has children",
    ),
    "partial": (
        "a match that stops before the end of its ids",
        f"made by match_prefix({LONGER}), which returns P's pages and stops before the ids' end",
        "A match counts a hit on every node whose pages it returns, also when it stops before the end of the "
        "ids (a partial match)",
    ),
}


def _played(cls, extra: str) -> list[int] | None:
    """The pages evict(1) frees after P's 3 hits, `extra` (a key of CALLS or MATCHES, or '' for the
    control), and Q's 2 hits; None where the scene itself went otherwise (a crash, the child not
    freed alone)."""
    try:
        cache = _new(cls)
        cache.insert(list(P), list(P_PAGES))
        if extra == "internal":
            cache.insert(list(CHILD), list(CHILD_PAGES))
        node = None
        for _ in range(3):
            node = cache.match_prefix(list(LONGER if extra == "partial" else P))[0]
        if extra == "lock":
            cache.lock(node)
            cache.unlock(node)
        if extra == "insert":
            cache.insert(list(P), [60, 61])
        if extra == "evict":
            cache.insert(list(CHILD), list(CHILD_PAGES))
        cache.insert(list(Q), list(Q_PAGES))
        if extra in ("evict", "internal") and sorted(cache.evict(1)) != [22]:
            return None
        for _ in range(2):
            cache.match_prefix(list(Q))
        return sorted(cache.evict(1))
    except Exception:
        return None


def _control(what: str) -> str:
    return (
        f"of P = {P} (pages 20, 21) matched 3 times, then Q = {Q} (pages 30, 31) twice, your evict(1) frees Q, "
        f"as it should; but {what}"
    )


def count_changed_by(cls) -> str:
    """' (...)' naming the call, other than a match, after which P's count was lower in the class's
    tree than in the contract's, or the kind of match that counted no hit, if there is one; else ''."""
    if _played(cls, "") != Q_PAGES:
        return ""
    for call, what in CALLS.items():
        if _played(cls, call) == P_PAGES:
            return (
                f" (your {'lock() or unlock()' if call == 'lock' else call + '()'} changed a hit count: "
                + _control(
                    f"after {what}, made between P's hits and Q's, your evict(1) frees P, as if P had lost its hits. "
                )
                + RULE
                + ("; a node its last child leaves keeps the count it had, it is not reset" if call == "evict" else "")
                + ")"
            )
    for kind, (short, what, rule) in MATCHES.items():
        if _played(cls, kind) == P_PAGES:
            return (
                f" (your match_prefix counted no hit for {short}: "
                + _control(f"with P's 3 matches {what}, your evict(1) then frees P, as if P had no hits. ")
                + rule
                + ")"
            )
    return ""
