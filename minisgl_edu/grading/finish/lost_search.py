"""Diagnoses for exercise 1 where the answer sizes a window from the stop strings and searches it, yet a
stop string the reference finds on this call is lost before the search can see it:
- the newest token is left out of what it decodes (`output_ids[-window-1:-1]`), so a stop string the
  newest token completes is seen one call late (`newest_left_out`);
- the stop strings are in a one-shot iterable (a generator, filter(), map()) that the window's max()
  reads to the end, so the search that follows loops over nothing (`stops_used_up`).

Each probe runs the answer on requests of its own, so it names the mistake only where the answer
behaves as that mistake does. The hand cases (expect.py) and the generated phase (scenes.py) use
them; `*extra` is min_tokens for the stretch (callers pass 0). A probe that raises counts as "not
this mistake".
"""

from __future__ import annotations

from typing import Any, Optional

from minisgl_edu.grading.finish.tokens import EOS, PLAIN, _decode, _ids, _req, noting_decode

NEWEST_LEFT_OUT = (
    "the window must end with the newest token: decode(req.output_ids[-window:]), not output_ids[-window-1:-1]; "
    "the scheduler calls you right after appending that token, so a stop string it completes must finish the "
    "request on this call, not one token later"
)
USED_UP = (
    "the stop strings your search loops over were already used up: a generator ((s for s in stop if s)), filter() "
    "or map() can be iterated only once, and the max() that sizes your window read it to the end, so the search "
    "after it sees no stop string; make it a list ([s for s in stop if s]) or loop over sampling_params.stop"
)


def newest_left_out(fn: Any, *extra: Any) -> bool:
    """On 'one two three' with stop ['three'] (the newest token ' three' completes it) the answer goes on,
    and none of its decode calls holds that newest token, yet one ' ok' token later it finds 'three':
    it decodes a window that ends one token before the newest."""
    ids = _ids("one two three")
    calls: list[list[int]] = []
    try:
        missed = fn(_req(ids, stop=["three"]), set(EOS), noting_decode(calls), *extra) in (None, "length")
        before = ids[:-1]
        left_out = bool(calls) and all(c and before[len(before) - len(c) :] == c for c in calls)
        return missed and left_out and fn(_req(ids + [PLAIN], stop=["three"]), set(EOS), _decode, *extra) == "stop"
    except Exception:
        return False


def _widest(fn: Any, stop: list[str], *extra: Any) -> int:
    """The most tokens the answer decodes at once on 40 ' ok' tokens with these stop strings."""
    calls: list[list[int]] = []
    fn(_req([PLAIN] * 40, max_new=100, stop=stop), set(EOS), noting_decode(calls), *extra)
    return max((len(c) for c in calls), default=0)


def stops_used_up(fn: Any, *extra: Any) -> bool:
    """The answer's window grows with the longest stop string (it reads the stop list to size it), yet
    on the output 'one two' it finds no stop string at all: not 'one two', the whole text, nor 'two' at
    its end, nor 'one' at its start, nor 'o': its search sees an empty list."""
    ids = _ids("one two")
    try:
        if not 0 < _widest(fn, ["!"], *extra) < _widest(fn, ["~" * 30], *extra):
            return False
        return all(
            fn(_req(ids, stop=stop), set(EOS), _decode, *extra) in (None, "length")
            for stop in (["one two"], ["two"], ["one"], ["o"])
        )
    except Exception:
        return False


def lost_search(fn: Any, *extra: Any) -> Optional[tuple[str, str]]:
    """(sentence, hint) of whichever of the two mistakes a probe confirms, None for neither."""
    if stops_used_up(fn, *extra):
        return (
            "your window grows with the longest stop string, so your check reads the stop list, yet on the output "
            "'one two' it finds none of 'one two' (the whole text), 'two', 'one' or 'o': its search sees no stop string",
            USED_UP,
        )
    if newest_left_out(fn, *extra):
        return (
            "on the output 'one two three' with stop ['three'] your check decoded only tokens before the newest "
            "(' three') and went on, and one token later it finds 'three': its window leaves out the newest token",
            NEWEST_LEFT_OUT,
        )
    return None
