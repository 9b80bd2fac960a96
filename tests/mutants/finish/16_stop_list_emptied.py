"""Empties the request's stop list once a stop string is found ("it has done its job"). The
finish reason is right, but the detokenizer reads `sampling_params.stop` after the scheduler to cut
the text, and now finds nothing to cut: the client sees the stop string."""

MUST_FAIL = {"stop string across tokens", "generated: 200 requests grown token by token"}
MUST_SAY = "req.sampling_params.stop"
CAUGHT_BY = {"hand", "generated"}
HINT_SAYS = "only read the stop list"


def check_finish(req, eos_ids, decode=None):
    sp = req.sampling_params
    if not sp.ignore_eos and req.output_ids[-1] in eos_ids:
        return "stop"
    if sp.stop and decode is not None:
        window = max(len(s.encode("utf-8")) for s in sp.stop) + 4
        tail = decode(req.output_ids[-window:])
        if any(s in tail for s in sp.stop):
            sp.stop.clear()
            return "stop"
    if len(req.output_ids) >= req.max_new_tokens:
        return "length"
    return None
