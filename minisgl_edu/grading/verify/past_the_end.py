"""Exercise 8: an accept loop that reads one draft past the end.

`while n <= len(drafts) and drafts[n] == targets[n]` (or a loop over range(k + 1)) goes on after the
last draft when the model agreed with every one, and reads drafts[k]: IndexError, on exactly the step
speculative decoding is for. The crash alone says only "an index past the end", which other mistakes
share (a target read past the end, say). `reads_past_the_drafts` runs the answer again on a small step
of its own, every draft accepted, with a drafts list that records each index read past its end; the
unit cases (step.py's `_check`) name the loop only when the answer read drafts[k] there and crashed.
"""

from __future__ import annotations

from minisgl_edu.grading.verify.requests import _req, _w

ACCEPT_PAST_THE_END = (
    "the accept loop reads drafts[j] for j < k only (k = len(drafts)): when every draft is accepted, n reaches k "
    "and drafts[k] is past the end, so test n < len(drafts) before drafts[n]; then append targets[n], the "
    "model's own token"
)


class _Drafts(list):
    """The drafts, recording every index read past the last one (the read still raises IndexError)."""

    def __init__(self, items: list[int]) -> None:
        super().__init__(items)
        self.past: list[int] = []

    def __getitem__(self, i):
        if isinstance(i, int) and i >= len(self):
            self.past.append(i)
        return super().__getitem__(i)


def reads_past_the_drafts(fn) -> bool:
    """On two drafts the model agrees with, the answer read drafts[2] and crashed with IndexError."""
    one, two, three, four = _w(" one", " two", " three", " four")
    drafts = _Drafts([two, three])
    try:
        fn(_req([one], 2), drafts, [two, three, four])
    except IndexError:
        return 2 in drafts.past
    except Exception:  # another crash is another mistake
        return False
    return False
