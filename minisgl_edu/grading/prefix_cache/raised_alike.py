"""Exercise 6: the generated phase's test for a mistake that makes the answer raise.

`explore.made_by` compares what the answer gave at the first difference with what the reference with
one mistake gives there; for an exception that is a line of text naming the answer's own line, which
a reference made to raise in the grader's code never matches. `raised_alike` asks instead that the
mistaken reference plays the scene as the reference does up to that field and raises there too (of
the same kind, when `kind` is given): the first difference is then the crash that mistake makes.
"""

from __future__ import annotations

from typing import Any, Callable, Optional


def raised_alike(
    play: Callable, mistaken: Any, reference: Any, scene: Any, diff: Any, kind: Optional[str] = None
) -> bool:
    """Whether the answer raised at `diff`'s field (`kind`, an exception's name, if given) where
    `mistaken` raises too, after giving what `reference` gives at every field before it."""
    if not (isinstance(diff.got, str) and diff.got.startswith("raised ")):
        return False
    if kind is not None and not diff.got.startswith(f"raised {kind}:"):
        return False
    mine, right = play(mistaken, scene), play(reference, scene)
    for field, value in right.items():
        if field == diff.field:
            got = mine.get(field)
            return isinstance(got, str) and got.startswith(f"raised {kind or ''}")
        if mine.get(field) != value:
            return False
    return False
