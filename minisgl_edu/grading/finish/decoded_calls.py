"""Diagnoses for exercise 1 that read the ids of each call the answer made to `decode` (noted by
tokens.noting_decode): a tail decoded in several parts and joined (a multi-byte character cut in
two), or a tail decoded with the ids of eos_ids taken out. The hand cases (expect.py) and the
generated phase (scenes.py) both use them.
"""

from __future__ import annotations

from minisgl_edu.core import Req
from minisgl_edu.grading.finish.tokens import _decode

SPLIT = (
    "decode the window in one call, decode(req.output_ids[-window:]): decoding it in parts (the newest token "
    "on its own) cuts a multi-byte character in two"
)


def decoded_in_parts(req: Req, calls: list[list[int]]) -> bool:
    """The answer decoded a tail of the output in several consecutive calls and joined the texts,
    and a stop string shows in that tail decoded at once but not in the joined parts."""
    joined = [t for ids in calls for t in ids]
    out, stop = req.output_ids, req.sampling_params.stop
    if len(calls) < 2 or not joined or out[len(out) - len(joined) :] != joined:
        return False
    parts = "".join(_decode(ids) for ids in calls)
    return any(s in _decode(joined) for s in stop) and not any(s in parts for s in stop)


DROPS_END_IDS = (
    "an id of eos_ids is not always a special token: under ignore_eos it stays in the output, and when it is "
    "ordinary text for this tokenizer (another model's end id) its text is part of the output and can be part of "
    "a stop string: decode req.output_ids[-window:] as it is, without taking the end ids out (nor starting the "
    "text after the last of them)"
)


def dropped_end_ids(req: Req, eos_ids: set[int], calls: list[list[int]]) -> bool:
    """The answer decoded a tail of the output with the ids of eos_ids inside it taken out (`calls`:
    the ids of each decode call; joined in order, they are that tail without its end ids)."""
    joined = [t for ids in calls for t in ids]
    out = req.output_ids
    if not calls or not out:
        return False
    if not joined:  # a tail of end ids only, decoded as nothing
        return out[-1] in eos_ids
    for w in range(len(joined) + 1, len(out) + 1):
        tail = out[len(out) - w :]
        if tail[0] not in eos_ids and [t for t in tail if t not in eos_ids] == joined:
            return True
    return False
