"""Calls the `decode` argument as if it were the tokenizer's own method, `decode(ids, skip_special_tokens=True)`
("EOS must not show in the text"). `decode` is the function the scheduler passes (`Scheduler._decode_tail`,
`decode(ids) -> str`), which already skips special tokens and takes no keyword: every request with stop
strings raises TypeError instead of being checked."""

from __future__ import annotations

from typing import Callable, Optional

from minisgl_edu.core import Req

MUST_FAIL = {"stop string across tokens"}
MUST_SAY = "unexpected keyword argument 'skip_special_tokens'"
CAUGHT_BY = {"hand", "generated"}
HINT_SAYS = "keyword argument 'skip_special_tokens'"


def check_finish(req: Req, eos_ids: set[int], decode: Optional[Callable[[list[int]], str]] = None) -> Optional[str]:
    sp = req.sampling_params
    if not sp.ignore_eos and req.output_ids[-1] in eos_ids:
        return "stop"
    if sp.stop and decode is not None:
        window = max(len(s.encode("utf-8")) for s in sp.stop) + 4
        tail = decode(req.output_ids[-window:], skip_special_tokens=True)
        if any(s in tail for s in sp.stop):
            return "stop"
    if len(req.output_ids) >= req.max_new_tokens:
        return "length"
    return None
