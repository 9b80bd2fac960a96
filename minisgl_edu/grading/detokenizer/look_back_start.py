"""Exercise 3's stretch: a look-back that is skipped near the start of the answer. With the flag set,
an answer that guards `sent - len(s) + 1` against going negative by searching from `sent` instead
(no look-back while fewer than len(s) characters were returned) misses a stop string that began in
the first characters it returned. `_not_how_it_begins` in include_stop.py and case_first_to_complete
ask the probe here before they name another mistake.
"""

from __future__ import annotations

from minisgl_edu.grading.core import Mistake
from minisgl_edu.grading.detokenizer.missed_stop import _stream
from minisgl_edu.grading.harness import tokenizer

SKIPPED_NEAR_THE_START = (
    "clamp the look-back's start at 0, max(0, sent - len(s) + 1), rather than skip the look-back while fewer "
    "than len(s) characters were returned: a stop string may begin in the very first characters you returned"
)


def _skips_the_look_back_near_the_start(cls) -> bool:
    """On 'one two three' (tokens 'one', ' two', ' three'), one stop string at a time, the answer
    finds 'one' (at the very start, in text not yet returned) and 'o th' (begun in ' two', returned
    when 7 >= 4 characters were out), but misses 'one t', which began in 'one' while only 3 < 5
    characters were out: it looks back, except while the look-back's start would be negative. On
    'one two three four five' it finds 'three four', longer than the token ' four' that completes it
    (13 >= 10 characters were out): an answer that skips stop strings longer than the text not yet
    returned misses that one too, a mistake of its own (unsent_length.py)."""
    if cls is None:
        return False
    ids = tokenizer().encode("one two three")
    assert [tokenizer().decode([t]) for t in ids] == ["one", " two", " three"], "setup: three tokens"
    longer = tokenizer().encode("one two three four five")
    try:
        kept = ["".join(_stream(cls, ids, [s], True)) for s in ("one", "o th", "one t")]
        kept.append("".join(_stream(cls, longer, ["three four"], True)))
    except Exception:
        return False
    return kept == ["one", "one two th", "one two three", "one two three four"]


def skipped_near_the_start(cls, said: str) -> Mistake | None:
    """The Mistake that names this look-back, after `said` (what the answer showed), if the probe
    confirms the answer makes it; else None."""
    if not _skips_the_look_back_near_the_start(cls):
        return None
    return Mistake(
        f"{said}. Your search missed a stop string that began in the first characters you returned: on "
        "'one two three' with stop=['one t'] your pieces join to 'one two three', expected 'one t', yet "
        "'o th', begun later in returned text, is found. While sent < len(s) your search starts at sent, "
        "with no look-back at all; sent - len(s) + 1 is negative then, and must be clamped to 0, not dropped",
        SKIPPED_NEAR_THE_START,
    )
