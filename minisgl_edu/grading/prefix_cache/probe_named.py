"""Exercise 6: a hand case's failure named by a probe of its own (both parts' graders use it).

A failed hand check, or a crash in the answer's code, often shows a symptom that several mistakes
share: a KeyError, a page too many, a lock count off by one. Each probe module of this folder
(lock_order.py, leaf_again.py, split_pages.py, and the LFU stretch's lfu_*.py) holds one mistake: a
hint that names it, and a probe that plays it on a fresh tree of the answer's class and says what it
saw there ('' when the answer does not behave so). `named_by_probe` wraps a grader's hand-written
cases with one such pair: when a case fails and the probe confirms, the student reads the case's
own message, what the probe saw, and the probe's hint. A case that ran out of time is wrapped only
when asked for (`catches` CaseTimeout): its probe must then bound its own run, as the case's timer
has already fired. The generated phase compares every step with the reference and has hints of its
own, so its case is left as it is.
"""

from __future__ import annotations

import dataclasses
import functools
from typing import Any, Callable

from minisgl_edu.grading.core import Case, Mistake
from minisgl_edu.grading.feedback import explain


def named_by_probe(
    cases: list[Case], catches: type[BaseException], probe: Callable[[Any], Any], hint: str
) -> list[Case]:
    """The hand-written cases of `cases`, each raising Mistake(message, `hint`) when it raised
    `catches` and `probe(cls)` returned a finding; any other failure is raised as it was."""

    def wrapped(run):
        @functools.wraps(run)
        def case(cls):
            try:
                run(cls)
            except catches as e:  # a time-out (a BaseException) only when `catches` is CaseTimeout
                seen = probe(cls)
                if not seen:
                    raise
                said = explain(e).message.split("Hint: ")[0].rstrip()
                raise Mistake(said if seen in said else f"{said.rstrip('.')}. {seen}", hint) from None

        return case

    return [c if c.generated else dataclasses.replace(c, run=wrapped(c.run)) for c in cases]
