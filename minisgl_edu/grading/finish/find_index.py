"""A diagnosis for exercise 1: str.find's index read as a yes/no (`if tail.find(s):`), as if find told
whether the stop string is there. find returns where the string starts: -1 when it is absent, which
is a true value, and 0 when it starts the text, a false one. Such a check stops on every call where a
stop string is missing, and misses one that begins the decoded tail. The hand cases (expect.py) and
the generated phase (scenes.py: reason_hint) name it.

The probe runs the answer on an output of its own, 'one two', with one stop string at a time: it must
say 'stop' for 'xyz' (absent: -1), not for 'one' (at the start: 0), and 'stop' for 'two' (inside: 4),
which sets it apart from a test that is simply reversed (`s not in tail`). A probe that raises counts
as "not this mistake".
"""

from __future__ import annotations

from typing import Any

from minisgl_edu.grading.finish.tokens import EOS, _decode, _ids, _req

FIND_AS_TRUTH = (
    "str.find returns an index, not a yes/no: -1 when the stop string is absent, which is a true value, and 0 "
    "when it starts the text, a false one; so `if tail.find(s)` stops where no stop string is and misses one at "
    "the start of the tail. Test `s in tail` (or tail.find(s) != -1)"
)

FOUND_BY_INDEX = (
    "on the output 'one two' your check returns 'stop' for stop=['xyz'], which it does not hold, and for ['two'], "
    "but not for ['one'], which starts it: it reads the index tail.find(s) as a yes/no"
)


def reads_find_as_truth(fn: Any, *extra: Any) -> bool:
    """The answer stops on 'one two' for an absent stop string and for one inside the text, but not for
    one at its start: exactly what `any(tail.find(s) for s in stop)` gives (extra: min_tokens, stretch)."""
    ids = _ids("one two")

    def probe(stop: str) -> Any:
        return fn(_req(ids, stop=[stop]), set(EOS), _decode, *extra)

    try:
        return probe("xyz") == "stop" and probe("one") is None and probe("two") == "stop"
    except Exception:
        return False
