"""Returns early when ignore_eos is set, skipping the stop strings too. ignore_eos only turns off
the EOS test (benchmarks use it for a fixed length); a stop string the client sent still stops."""

MUST_FAIL = {"ignore_eos"}
MUST_SAY = "stop strings still stop"


def check_finish(req, eos_ids, decode=None):
    sp = req.sampling_params
    if not sp.ignore_eos:
        if req.output_ids[-1] in eos_ids:
            return "stop"
        if sp.stop and decode is not None:
            tail = decode(req.output_ids[-(max(len(s) for s in sp.stop) + 4) :])
            if any(s in tail for s in sp.stop):
                return "stop"
    if len(req.output_ids) >= req.max_new_tokens:
        return "length"
    return None


CAUGHT_BY = {"hand", "generated"}
HINT_SAYS = "turns off the EOS test only"
