"""The stretch's probe for an abort that cuts req.cached_len to pages itself, rounding to the nearest page.

Called by `cache_checks._too_many` (the hand cases) and by the generated scenes' hints
(`scenes.hints`, the stretch only). `release(req, cache_it=True)` caches the whole pages of
req.all_ids[:req.cached_len] and cuts the count down to whole pages itself. An abort that does that
cut first with round() (`round(req.cached_len / page_size) * page_size`) or a ceiling goes UP
whenever the last page is half computed or more: release() then reads a count one page longer
than what was computed, and files a page with slots whose K/V was never written. The symptom, one
page too many cached, is also what counting the newest sampled token gives, so the probe checks the
cause: on a scheduler of its own it aborts a request with 6 computed tokens (1 full page of 4 and 2
slots of the second: round(1.5) is 2) and reads the req.cached_len that release() was given. Not 7
or 11: there the count plus the newest token is a whole page too, and an abort that counts
len(req.all_ids) is another mistake, named by its own hint.
"""

from __future__ import annotations

from typing import Any, Callable, Optional

from minisgl_edu.grading.abort.probes import abort_spied
from minisgl_edu.grading.core import Mistake
from minisgl_edu.grading.harness import GRADING_CONFIG

PS = GRADING_CONFIG["page_size"]  # 4: the probe's scheduler is the grader's
COMPUTED = 6  # 1 full page of 4, and half of the second: round() and a ceiling go up, // goes down

ROUNDED_UP = (
    "leave req.cached_len as it is: your abort cut it to whole pages by rounding to the nearest page (or up), "
    f"so a last page computed half or more counts as full (round({COMPUTED} / {PS}) is 2 pages, but only 1 is "
    "whole) and goes into the prefix cache with slots whose K/V was never written. Whole pages means rounding "
    "DOWN (cached_len // page_size), and release(req, cache_it=True) already cuts to whole pages itself"
)


def _read_by_release(fn) -> int:
    """The req.cached_len that release() read when `fn` aborted a request with COMPUTED computed tokens
    (-1 when the probe does not get that far, or the answer asked for no release)."""
    got = abort_spied(fn, COMPUTED, lambda r: r.cached_len)
    return got[2][0] if got and got[2] else -1


def rounds_up(fn) -> bool:
    """`fn` hands release() a req.cached_len raised to the next whole page."""
    read = _read_by_release(fn)
    return read > COMPUTED and read % PS == 0


def rounded_up(fn, c: int, got: int, expect: int, ps: int) -> Optional[Mistake]:
    """The mistake of `got` pages cached where `expect` were right (the request had `c` computed tokens),
    when `fn` raises req.cached_len to a whole page before release(); None when it does not."""
    read = _read_by_release(fn)
    if not (read > COMPUTED and read % PS == 0):
        return None
    return Mistake(
        f"{got - expect} page(s) too many went into the prefix cache: the request had computed K/V for {c} "
        f"token(s) (req.cached_len), that is {c // ps} full page(s) of {ps}. Your abort, given a request with "
        f"{COMPUTED} computed tokens on a scheduler of its own, changed req.cached_len from {COMPUTED} to {read} "
        "before release() read it: it rounded to a whole page up, not down",
        ROUNDED_UP,
    )


def or_rounded_up(hint: Any, answer: list) -> Callable[[Any, Any], str]:
    """`hint`, unless the answer (answer[0]) raises req.cached_len to a whole page before release()."""

    def named(scene: Any, diff: Any) -> str:
        if answer and rounds_up(answer[0]):
            return ROUNDED_UP
        return hint(scene, diff) if callable(hint) else hint

    return named
