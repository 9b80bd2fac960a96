"""Exercise 8: the pages to keep counted with true division, `total / page_size`.

In Python 3 `/` always gives a float (12 / 4 is 3.0), and a float is no index: `req.pages[keep:]` or
`range(keep, ...)` raises TypeError ("slice indices must be integers", "'float' object cannot be
interpreted as an integer"). The crash alone quotes only the TypeError, which many mistakes share.
`float_pages_hint` runs the answer again on the same step with a page size that answers `x / page_size`
with the whole number of pages, rounded up (`pages_for(x, page_size)`): when the answer divided by the
page size with `/` and the TypeError is gone, the float page count was the crash, and the hint says so.
The unit cases (step.py's `_check`, through `naming_float_pages`), the engine cases' first call
(engine.py) and the generated scenes (scenes.py's `play`, which raises the hint as a Mistake: the
generated phase reads no hint off a crash) ask it when the answer raised TypeError.
"""

from __future__ import annotations

import dataclasses
from contextlib import contextmanager
from typing import Iterator, Optional

from minisgl_edu.kvcache.manager import pages_for

PAGES_BY_TRUE_DIVISION = (
    "the pages to keep were counted with true division, total / page_size: in Python 3 '/' always gives a "
    "float (12 / 4 is 3.0, 13 / 4 is 3.25), and a float is no index of req.pages. Pages are a whole number, "
    "rounded up to the page that holds the last position: keep pages_for(total, page_size) pages "
    "(-(-total // page_size), integer division)"
)


class _PageSize(int):
    """A page size that records `x / page_size` and answers it with pages_for(x, page_size), an int.
    Python asks the right operand first when its type is a subclass of the left's that overrides the
    reflected method, so `total / req.page_size` lands here; every other operation is int's own."""

    def __new__(cls, value: int) -> _PageSize:
        page_size = super().__new__(cls, value)
        page_size.divided = False
        return page_size

    def __rtruediv__(self, other):
        if isinstance(other, int) and not isinstance(other, bool):
            self.divided = True
            return pages_for(other, int(self))
        return int(self).__rtruediv__(other)


def divides_pages_with_slash(fn, req, drafts: list[int], targets: list[int]) -> bool:
    """On this step the answer divided by the page size with `/`, and with that division giving whole
    pages it raises no TypeError: its crash was the float page count."""
    page_size = _PageSize(req.page_size)
    again = dataclasses.replace(
        req,
        output_ids=list(req.output_ids),
        eos_ids=set(req.eos_ids),
        stop=list(req.stop),
        pages=list(req.pages),
        page_size=page_size,
    )
    try:
        fn(again, list(drafts), list(targets))
    except TypeError:
        return False
    except Exception:  # another mistake shows after the page count: the float still crashed first
        pass
    return page_size.divided


def float_pages_hint(e: BaseException, fn, req, drafts: list[int], targets: list[int]) -> Optional[str]:
    """PAGES_BY_TRUE_DIVISION when `e`, the answer's crash on this step, is the float page count; else None."""
    if not isinstance(e, TypeError) or fn is None:
        return None
    return PAGES_BY_TRUE_DIVISION if divides_pages_with_slash(fn, req, drafts, targets) else None


@contextmanager
def naming_float_pages(fn, req, drafts: list[int], targets: list[int]) -> Iterator[None]:
    """The answer's call on this step inside: a TypeError that is the float page count leaves with
    PAGES_BY_TRUE_DIVISION as its hint; its message (the student's line) stays as it is."""
    try:
        yield
    except TypeError as e:
        if hint := float_pages_hint(e, fn, req, drafts, targets):
            e.hint = hint
        raise
