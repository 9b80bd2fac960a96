"""Diagnoses for exercise 1 that read WHICH IDS the answer decoded on a call where it missed a stop
string the reference finds: the contract decodes req.output_ids[-window:] on every call.

Three classes of mistakes decode less than that window, each named only once probes confirm it:
- a negative slice start (`negative_start`): output_ids[len(output_ids) - window:] counts from the
  end while the output is shorter than the window, so the answer decodes only the last
  window - len tokens, and FEWER tokens as the output grows, until it reaches the window;
- a slice from the front (`front_slice`): output_ids[window:], the minus sign dropped, skips the
  FIRST window tokens, so it decodes nothing while the output is no longer than the window, and
  later everything after them: its start stays at the same index as the output grows;
- a search skipped (`search_skipped`): on this call the answer decoded no text that holds the stop
  string (no window at all, or only the newest token for a pre-filter), yet on the same output cut
  right after the token that completes the stop string it decodes a wider window and finds it.

Each function re-runs the answer (with a decode that notes its calls) and returns a sentence that
says what it decoded, or None when the answer does not make that mistake. A probe that raises
counts as "not this mistake".
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any, Optional

from minisgl_edu.core import Req
from minisgl_edu.grading.finish.diagnoses import COUNT_GATE, SILENT, count_gate
from minisgl_edu.grading.finish.tokens import _decode, noting_decode
from minisgl_edu.scheduler.finish import check_finish as reference

NEGATIVE_START = (
    "a negative slice start: output_ids[len(output_ids) - window:] wraps around while the output is shorter "
    "than the window (a negative start counts from the end, so only the last window - len tokens are decoded); "
    "use output_ids[-window:] or output_ids[max(0, len(output_ids) - window):]"
)
FRONT_SLICE = (
    "slice the window from the end: output_ids[-window:] is the last window tokens, while output_ids[window:] "
    "(the minus sign dropped) skips the first window tokens instead, so it is empty while the output is no longer "
    "than the window, and a stop string among the first tokens is never seen"
)
SEARCH_SKIPPED = (
    "the search was skipped (a pre-filter on the newest token's text, or any condition of your own): search "
    "decode(req.output_ids[-window:]) on every call that has stop strings; the newest token's own text need not "
    "show the stop string's last character (a byte token of a CJK character or emoji decodes to '\\ufffd' alone, "
    "and the stop string may end in a token before the newest)"
)


def _calls(fn: Any, req: Req, eos_ids: set[int], pad: int, *extra: Any) -> tuple[Any, list[list[int]]]:
    """What the answer returns for req's output behind `pad` tokens that decode to nothing (the limits,
    and min_tokens, raised by as many), and the ids of each of its decode calls."""
    silent = next(t for t in SILENT if t not in eos_ids)
    sp = replace(req.sampling_params, max_tokens=req.sampling_params.max_tokens + pad)
    sp.stop = list(req.sampling_params.stop)
    fresh = replace(
        req,
        sampling_params=sp,
        output_ids=[silent] * pad + list(req.output_ids),
        max_new_tokens=req.max_new_tokens + pad,
    )
    calls: list[list[int]] = []
    got = fn(fresh, set(eos_ids), noting_decode(calls), *(m + pad for m in extra))
    return got, calls


def _widest_suffix(calls: list[list[int]], out_len: int, pad: int, req: Req, eos_ids: set[int]) -> int:
    """The most tokens of one decode call that are a tail of the (padded) output."""
    silent = next(t for t in SILENT if t not in eos_ids)
    out = [silent] * pad + list(req.output_ids)
    return max((len(ids) for ids in calls if ids and out[out_len - len(ids) :] == ids), default=0)


def _wrapped(req: Req, eos_ids: set[int], window: int, pad: int, *extra: Any) -> Any:
    """The reference with the mistake made: its tail sliced as output_ids[len - window:]."""
    silent = next(t for t in SILENT if t not in eos_ids)
    out = [silent] * pad + list(req.output_ids)
    n, sp = len(out), req.sampling_params
    if extra and n < extra[0] + pad:
        return "length" if n >= req.max_new_tokens + pad else None
    if not sp.ignore_eos and out[-1] in eos_ids:
        return "stop"
    if any(s in _decode(out[n - window :]) for s in sp.stop):
        return "stop"
    return "length" if n >= req.max_new_tokens + pad else None


def negative_start(fn: Any, req: Req, eos_ids: set[int], *extra: Any) -> Optional[str]:
    """Where the answer decoded only the last k of req's L output tokens (0 < k < L), and, behind one
    token that decodes to nothing, one token fewer (or all of them where k is 1), and behind k such
    tokens all L + k (a window of L + k whose start went negative), returning on req and on that last
    probe what the reference returns with its tail sliced as output_ids[len - (L + k):]: what it
    decoded, as a sentence. None otherwise."""
    out = list(req.output_ids)
    if not req.sampling_params.stop or not out or all(t in eos_ids for t in SILENT):
        return None
    try:
        got, calls = _calls(fn, req, eos_ids, 0, *extra)
        k, n = _widest_suffix(calls, len(out), 0, req, eos_ids), len(out)
        if not 0 < k < n:
            return None
        window = n + k
        _, one_more = _calls(fn, req, eos_ids, 1, *extra)
        if _widest_suffix(one_more, n + 1, 1, req, eos_ids) != (k - 1 if k > 1 else n + 1):
            return None
        full, at_window = _calls(fn, req, eos_ids, k, *extra)
        if _widest_suffix(at_window, window, k, req, eos_ids) != window:
            return None
        if got != _wrapped(req, eos_ids, window, 0, *extra) or full != _wrapped(req, eos_ids, window, k, *extra):
            return None
    except Exception:
        return None
    fewer = f"only the last {k - 1}" if k > 1 else f"all {n + 1}"
    return (
        f"with {n} output tokens your check decoded only the last {k} ({_decode(out[n - k :])!r}); with one token "
        f"more in front it decoded {fewer}, and with {k} more, all {window}: its window of {window} tokens starts "
        "at a negative index while the output is shorter"
    )


def front_slice(fn: Any, req: Req, eos_ids: set[int], *extra: Any) -> Optional[str]:
    """Where every call of the answer decodes the output from one same index k > 0 on (output_ids[k:]):
    on req's L output tokens (nothing where L <= k), and behind p and p + 1 tokens that decode to nothing,
    the last L + p - k and L + p + 1 - k, the window growing with the output while its start stays put.
    A window taken from the end keeps its size instead. What it decoded, as a sentence; None otherwise."""
    stop, out = req.sampling_params.stop, list(req.output_ids)
    if not stop or not out or all(t in eos_ids for t in SILENT):
        return None
    pad = 2 * max(len(s.encode()) for s in stop) + 8 + len(out)  # enough to pass any window of the stop strings
    starts = []
    try:
        for p in (0, pad, pad + 1):
            _, calls = _calls(fn, req, eos_ids, p, *extra)
            n = len(out) + p
            starts.append(n - _widest_suffix(calls, n, p, req, eos_ids))
    except Exception:
        return None
    k = starts[1]
    if not (0 < k < len(out) + pad and starts[2] == k and starts[0] == min(k, len(out))):
        return None
    here = "nothing" if k >= len(out) else f"the last {len(out) - k}"
    return (
        f"with {len(out)} output tokens your check decoded {here}; behind {pad} tokens that decode to nothing it "
        f"decoded the last {len(out) + pad - k}, and behind {pad + 1} the last {len(out) + pad + 1 - k}: every time "
        f"the output from token {k} on, output_ids[{k}:], a window counted from the front"
    )


def search_skipped(fn: Any, req: Req, eos_ids: set[int], *extra: Any) -> Optional[str]:
    """Where no decode call of the answer on req gives a text that holds a stop string of req's list
    (the reference finds one), it returns what the reference returns without stop strings, yet on the
    output cut after the token that completes the stop string it finds it, decoding more tokens at
    once than on req: it skipped the search on req. What it decoded, as a sentence; None otherwise."""
    stop, out = list(req.sampling_params.stop), list(req.output_ids)
    if not stop or not out:
        return None
    done = next((i for i in range(1, len(out) + 1) if any(s in _decode(out[:i]) for s in stop)), None)
    if done is None or done >= len(out) or (out[done - 1] in eos_ids and not req.sampling_params.ignore_eos):
        return None
    if extra and done < extra[0]:
        return None
    try:
        got, calls = _calls(fn, req, eos_ids, 0, *extra)
        if any(s in _decode(ids) for ids in calls for s in stop):
            return None
        bare = replace(req.sampling_params)
        bare.stop = []
        if got != reference(replace(req, sampling_params=bare, output_ids=list(out)), set(eos_ids), _decode):
            return None
        cut = replace(req, sampling_params=replace(req.sampling_params), output_ids=out[:done])
        cut.sampling_params.stop = list(stop)
        found, cut_calls = _calls(fn, cut, eos_ids, 0, *extra)
        widest, here = max(map(len, cut_calls), default=0), max(map(len, calls), default=0)
        if found != "stop" or widest <= here:
            return None
    except Exception:
        return None
    held = next(s for s in stop if s in _decode(out[:done]))
    seen = " + ".join(repr(_decode(ids)) for ids in calls) or "nothing"
    return (
        f"the stop string {held!r} completes at token {done} of {len(out)}; with the output cut there your check "
        f"decodes {widest} tokens at once and finds it, but with all {len(out)} it decoded only {seen}: it skipped "
        "the search on this call"
    )


def decoded_too_little(fn: Any, req: Req, eos_ids: set[int], *extra: Any) -> Optional[str]:
    """The hint for a stop string the answer missed on req by decoding less than the window, asked in
    this order: a negative slice start, a slice from the front, a test that waits for the output to have
    enough tokens (diagnoses.count_gate, which both slices fool: behind enough tokens they find the stop
    string too), a search skipped. None for none of them."""
    wrapped = negative_start(fn, req, eos_ids, *extra)
    if wrapped:
        return f"{wrapped}: {NEGATIVE_START}"
    front = front_slice(fn, req, eos_ids, *extra)
    if front:
        return f"{front}: {FRONT_SLICE}"
    if count_gate(fn, req, eos_ids, *extra):
        return COUNT_GATE
    skipped = search_skipped(fn, req, eos_ids, *extra)
    return f"{skipped}: {SEARCH_SKIPPED}" if skipped else None
