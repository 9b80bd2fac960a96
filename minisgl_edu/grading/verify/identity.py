"""Exercise 8: drafts compared with the model's tokens by `is` instead of `==`.

`drafts[n] is targets[n]` asks whether the two are the same object, not the same id. CPython keeps
one object per int only from -5 to 256; the engine's targets come out of a tensor (`tolist()`), a
new int object each, so every draft above id 256 is rejected even when the model agrees with it.
The unit cases hand over their targets the same way (`_call` in requests.py); a failure names this
mistake only when the answer, on a small step of its own, accepts both drafts when the targets are
the very objects of the drafts and rejects them when they are equal ids in objects of their own.
"""

from __future__ import annotations

from minisgl_edu.grading.verify.requests import _as_result, _call, _copy, _req, _w
from minisgl_edu.scheduler.verify_step import verify_step as package_step

COMPARED_BY_IDENTITY = (
    "the drafts were compared with the model's tokens by `is`, not `==`: `is` asks whether two ints are the "
    "same object, and CPython shares int objects only up to 256. The engine's token ids come from a tensor "
    "(tolist()), each a new object, so a draft above id 256 is rejected even when the model agrees with it. "
    "Compare ids with ==, not is"
)
COMPARED_BY_IDENTITY_HINT = "compare ids with ==, not is: token ids above 256 are separate int objects"


def compares_by_identity(fn) -> bool:
    """Two drafts the model agrees with (ids above 256): the answer is right when the targets hold the
    drafts' own int objects, and accepts fewer when they hold equal ids as objects of their own."""
    one, two, three, four = _w(" one", " two", " three", " four")
    req, drafts = _req([one], 2), [two, three]
    try:
        shared = _as_result(fn(_copy(req), list(drafts), drafts + [four]))  # the very same objects
        separate = _call(fn, req, drafts, drafts + [four])  # equal ids, new objects (as from a tensor)
    except Exception:
        return False
    return shared == package_step(_copy(req), list(drafts), drafts + [four]) and separate.accepted < 2
