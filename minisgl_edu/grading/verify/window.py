"""Exercise 8: a stop-string tail that does not follow this request's own stop strings.

Two classes of mistakes in the tail of the output decoded for the stop strings, read from the answer
itself on steps whose stop string is made of whole words, one token each (so every window sized from
the stop string, in bytes or in characters, with or without a margin, holds it):

- the tail is the same for every request: its size worked out once and kept from an earlier call or
  request, or fixed. A stop string of this request that spans more tokens than that is missed. Shown
  by stop strings of 2, 3, ... words that end the output: the answer finds the short ones and misses
  every one from some length on, though each request's own window holds it.
- the slice start goes negative: `ids[len(ids) - window:]` while the output is shorter than the
  window starts that many tokens from the end, so only the newest few tokens are decoded. Shown by
  one stop string at the end of outputs of growing length: the answer finds it in a short output and
  in a long one and misses it in between, where the reference's finding never depends on what comes
  before the stop string.

Each is named only when the answer's result on the failing step is also the one that mistake gives
(the step played again with that tail), so a hint never names a mistake the answer did not make.
"""

from __future__ import annotations

from typing import Optional

from minisgl_edu.grading.verify.one_change import changed_step
from minisgl_edu.grading.verify.requests import _call, _decode, _w
from minisgl_edu.kvcache.manager import pages_for
from minisgl_edu.scheduler.verify_step import VerifyRequest, VerifyResult

WORDS = (" one", " two", " three", " four", " five")
STOP = " two three"  # the wrap probe's stop string: two tokens, 10 characters and bytes
LONGEST = 40  # the longest stop string tried, in tokens
FIXED = (
    "the tail you decoded held at most {w} tokens whatever this request's stop strings: stop strings of whole "
    "words (one token each) that end the output were found up to {w} tokens long and missed from {w1} on, "
    "though a window sized from each request's own stop strings holds them. Size the window from this "
    "request's own stop strings on every call (max(len(s.encode()) for s in req.stop) + a margin); keep "
    "nothing from an earlier request, and fix no number"
)
WRAPS = (
    "a negative slice start wraps around: the stop string {stop!r} at the end of the output was found in "
    "outputs of {short} and of {long} tokens but missed in one of {mid}: ids[len(ids) - window:] with an "
    "output shorter than the window starts from the end and decodes only the newest tokens. Use ids[-window:] "
    "or ids[max(0, len(ids) - window):]"
)


def _finds(fn, words: list[str], k: int) -> Optional[bool]:
    """Whether the answer ends the run with 'stop' on the accepted draft when the stop string is the
    text of the last `k` of `words` (the output before this step, then one accepted draft that
    completes it); None when it raises."""
    ids = _w(*words)
    req = _probe_request(ids[:-1], (_decode(ids[-k:]),))
    try:
        got = _call(fn, req, ids[-1:], ids[-1:] + _w(" six"))
    except Exception:
        return None
    return got.finish_reason == "stop" and got.tokens == ids[-1:]


def _probe_request(output: list[int], stop: tuple[str, ...]) -> VerifyRequest:
    return VerifyRequest(
        prompt_len=4,
        output_ids=list(output),
        max_new_tokens=4 * LONGEST,
        eos_ids={0, 2},
        ignore_eos=False,
        stop=list(stop),
        decode=_decode,
        pages=list(range(pages_for(4 + len(output) + 2, 4))),
        page_size=4,
    )


def _words(n: int) -> list[str]:
    return [WORDS[i % len(WORDS)] for i in range(n)]


def fixed_window(fn) -> Optional[int]:
    """The answer's tail size when it is the same for every stop string tried: found for stop strings
    of 2 .. w words, missed for every longer one up to LONGEST (the output always longer than any
    window, so a slice start never goes negative); None when it does not behave so."""
    found = [_finds(fn, _words(2 * LONGEST + 8), k) for k in range(2, LONGEST + 1)]
    if None in found or found[0] is not True or all(found):
        return None
    w = found.index(False) + 1  # found[i] is k = i + 2
    return w if not any(found[w - 1 :]) else None


def wrapping_window(fn) -> Optional[tuple[int, int, int]]:
    """(short, mid, long) output lengths where the answer finds ' two three' at the end of the output, in
    the short and the long one but not in the middle one; None when its finding does not change so.
    With a tail of `window` tokens sliced from len(ids) - window, `long` is that window."""
    found = {n: _finds(fn, _words(n)[:-2] + [" two", " three"], 2) for n in range(2, 2 * LONGEST)}
    if None in found.values():
        return None
    mid = next((n for n, f in found.items() if not f), None)
    if mid is None:
        return None
    short = max((n for n in found if n < mid and found[n]), default=None)
    long = next((n for n in found if n > mid and found[n]), None)
    return (short, mid, long) if short and long else None


def window_class(fn, req: VerifyRequest, drafts: list[int], targets: list[int], got: VerifyResult) -> Optional[str]:
    """The message of the tail class the answer shows, when its result `got` on this step is also the
    one that tail gives; None otherwise (or when the request has no stop strings)."""
    if fn is None or not req.stop:
        return None
    w = fixed_window(fn)
    if w is not None and changed_step(req, drafts, targets, tail=lambda ids: ids[-w:]) == got:
        return FIXED.format(w=w, w1=w + 1)
    wraps = wrapping_window(fn)
    if wraps is None:
        return None
    # the answer's margin, from the probe: it finds ' two three' again from `long` tokens on
    margin = wraps[2] - len(STOP)
    for size in (len, lambda s: len(s.encode("utf-8"))):
        window = max(size(s) for s in req.stop) + margin
        if changed_step(req, drafts, targets, tail=lambda ids: ids[len(ids) - window :]) == got:
            short, mid, long = wraps
            return WRAPS.format(stop=STOP, short=short, mid=mid, long=long)
    return None
