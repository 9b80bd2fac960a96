"""A diagnosis for exercise 1 that reads WHAT TEXT the answer decoded on a call where it missed a
stop string the reference finds: the answer decoded a text that holds the stop string, so the window
was right and the test it ran on that text missed the match.

Two shapes of that class are told apart by probes, each named only once confirmed:
- the stop string completed at an earlier token and more tokens followed; on the same output cut
  right after that token the answer finds it: it counts only a stop string the newest token
  completes (a match already in the window is a match all the same);
- the decoded text ENDS with the stop string, which does not start it (the case of a stop string at
  position 0 has its own hint), and the answer misses it with ignore_eos off as well:
  the test on the text is not a plain substring test (`s in text`), e.g. words of text.split().

Anything else (e.g. a stop string inside the newest token's text, missed by tail.endswith(s)) is
left to the case's own hint. A probe that raises counts as "not this mistake".
"""

from __future__ import annotations

import copy
from dataclasses import replace
from typing import Any, Optional

from minisgl_edu.core import Req
from minisgl_edu.grading.finish.tokens import _decode, noting_decode

EARLIER_MATCH = (
    "a stop string already in the decoded window finishes the request, also one an earlier token completed "
    "(not only one the newest token completes): search the decoded tail with `s in tail`, with no condition on "
    "the text before the newest token"
)
NOT_A_SUBSTRING = (
    "the decoded text holds the stop string and your test on it missed it: test each stop string as a plain "
    "substring of the decoded text, `s in tail` (not words of tail.split(), not a pattern), with no other condition"
)


def _fresh(req: Req, output: list[int], ignore_eos: bool) -> Req:
    sp = copy.deepcopy(req.sampling_params)
    sp.ignore_eos = ignore_eos
    return replace(req, output_ids=list(output), sampling_params=sp)


def missed_in_text(fn: Any, req: Req, eos_ids: set[int], calls: list[list[int]], *extra: Any) -> Optional[tuple]:
    """(sentence, hint) where a text the answer decoded holds a stop string it missed, and a probe
    confirms which shape of the mistake it is; None otherwise."""
    texts = [_decode(ids) for ids in calls]
    found = [(t, s) for t in texts for s in req.sampling_params.stop if s in t]
    if not found or any(t in eos_ids for t in req.output_ids):
        return None
    text, stop = found[-1]
    out = list(req.output_ids)
    try:
        done = next(i for i in range(1, len(out) + 1) if stop in _decode(out[:i]))
        if done < len(out):
            cut = fn(_fresh(req, out[:done], req.sampling_params.ignore_eos), set(eos_ids), _decode, *extra)
            if cut == "stop":
                return (
                    f"your check decoded {text!r}, which holds the stop string {stop!r}, completed at output token "
                    f"{done} of {len(out)}; on the output cut after token {done} it finishes, so it counts only a "
                    "match the newest token completes",
                    EARLIER_MATCH,
                )
            return None
        seen: list[list[int]] = []
        plain = fn(_fresh(req, out, False), set(eos_ids), noting_decode(seen), *extra)
    except Exception:
        return None
    if text.endswith(stop) and text.find(stop) > 0 and plain != "stop" and any(stop in _decode(ids) for ids in seen):
        return (
            f"your check decoded {text!r}, which ends with the stop string {stop!r}, and did not finish "
            "(with ignore_eos off as well)",
            NOT_A_SUBSTRING,
        )
    return None
