"""On the last allowed token, decides between "stop" and "length" by the EOS test alone
(`return "stop" if last in eos_ids else "length"`), before the other tests: a stop string that the
last allowed token completes gets "length", and an EOS there gets "stop" even with ignore_eos."""

MUST_FAIL = {"generated: 200 requests grown token by token"}
MUST_SAY = "first difference"
CAUGHT_BY = {"hand", "generated"}
HINT_SAYS = "test the stop strings before the length too"


def check_finish(req, eos_ids, decode=None):
    sp = req.sampling_params
    last = req.output_ids[-1]
    if len(req.output_ids) >= req.max_new_tokens:
        return "stop" if last in eos_ids else "length"
    if not sp.ignore_eos and last in eos_ids:
        return "stop"
    if sp.stop and decode is not None:
        window = max(len(s.encode("utf-8")) for s in sp.stop) + 4
        if any(s in decode(req.output_ids[-window:]) for s in sp.stop):
            return "stop"
    return None
