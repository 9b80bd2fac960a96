"""Exercise 8: the kept tokens collected in a list that outlives the call.

`def verify_step(req, drafts, targets, tokens=[])` (or a module-level list), "an accumulator that
starts empty": Python evaluates a default once, so every call appends to the same list, and from the
second step on the result starts with the tokens of earlier steps (of other requests too); the length
test, kv_len and the pages count them as well, so every field can come out wrong, each looking like
another mistake. step.py asks this first: the answer, called twice on fresh copies of one small step,
gives a longer result the second time, one that starts with the tokens of the first call.
"""

from __future__ import annotations

from minisgl_edu.grading.verify.requests import _call, _req, _w

KEPT_LIST = (
    "your tokens start with tokens of EARLIER calls: called twice on fresh copies of the same step, your "
    "verify_step gave a longer list the second time, starting with the tokens of the first call. A list that "
    "outlives the call (a default argument tokens=[], a module-level list) keeps what earlier steps appended "
    "to it; make a new list inside the function on every call"
)
KEPT_LIST_HINT = (
    "a list that outlives the call (a default argument tokens=[], a module-level list) keeps what earlier "
    "steps appended: make a new list inside the function on every call"
)


def keeps_a_list(fn) -> bool:
    """The answer, called twice on copies of one step (output ' one', one draft ' two' accepted, the
    model's ' three'), returns more tokens the second time, beginning with all of the first call's."""
    if fn is None:
        return False
    one, two, three = _w(" one", " two", " three")
    try:
        # copied at once: the second call may append to the very list the first result holds
        first = list(_call(fn, _req([one], 1), [two], [two, three]).tokens)
        second = list(_call(fn, _req([one], 1), [two], [two, three]).tokens)
    except Exception:
        return False
    return len(second) > len(first) and second[: len(first)] == first
