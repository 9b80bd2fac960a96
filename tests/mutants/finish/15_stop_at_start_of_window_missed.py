"""Tests `tail.find(s) > 0` for each stop string: a stop string found at position 0 of the decoded
window counts as absent. When the window starts exactly where the stop string does (a stop string
as long as the window, or an output no longer than it), the request runs past its stop string."""

MUST_FAIL = {"generated: 200 requests grown token by token"}
MUST_SAY = "first difference"
CAUGHT_BY = {"hand", "generated"}
HINT_SAYS = "a stop string at the very start of the decoded text counts too"


def check_finish(req, eos_ids, decode=None):
    sp = req.sampling_params
    if not sp.ignore_eos and req.output_ids[-1] in eos_ids:
        return "stop"
    if sp.stop and decode is not None:
        window = max(len(s.encode("utf-8")) for s in sp.stop) + 4
        tail = decode(req.output_ids[-window:])
        if any(tail.find(s) > 0 for s in sp.stop):
            return "stop"
    if len(req.output_ids) >= req.max_new_tokens:
        return "length"
    return None
