"""Exercise 8: the accept loop's index read after a for loop that ran to its end.

`for n, (d, t) in enumerate(zip(drafts, targets)): if d != t: break`, then `n` used after the loop,
is right whenever a draft is rejected: the loop breaks with n at the mismatch. When the model agrees
with every draft the loop ends without a break, and n holds the LAST index, k - 1, not k: the last
draft is taken as the mismatch, accepted is one short, and the model's token after the drafts (the
bonus) is lost, its place taken by the last draft. A missing bonus alone keeps accepted at k, so
step.py names the loop index only when the answer, on small steps of its own with three drafts,
answers accepted 2 and the drafts alone when all three are accepted, and is right when the third is
rejected.
"""

from __future__ import annotations

from minisgl_edu.grading.verify.requests import _call, _req, _w

LAST_INDEX = (
    "accepted is one short when every draft is accepted: after a for loop over the drafts that ends without a "
    "break, its index n is the last one, k - 1, not k, so the last draft was taken as the mismatch and the model's "
    "token after the drafts (targets[k]) was lost. Count n up in a while loop (while n < k and drafts[n] == "
    "targets[n]: n += 1), or set n = k when the loop ends without a break (for ... else)"
)
LAST_INDEX_HINT = (
    "after a for loop that ends without a break, its index is k - 1, not k: when every draft is accepted n must "
    "be k (count n up in a while loop), then append targets[n]"
)


def stops_on_the_last_index(fn) -> bool:
    """With three drafts all accepted the answer says accepted 2 and returns the three drafts (no token of
    the model's); with the third draft rejected it is right: accepted 2, the model's token in its place."""
    one, two, three, four, five, six = _w(" one", " two", " three", " four", " five", " six")
    drafts = [two, three, four]
    try:
        every = _call(fn, _req([one], 3), drafts, drafts + [five])
        last_rejected = _call(fn, _req([one], 3), drafts, [two, three, six, five])
    except Exception:
        return False
    all_in = (every.accepted, every.tokens) == (2, drafts)
    return all_in and (last_rejected.accepted, last_rejected.tokens) == (2, [two, three, six])
