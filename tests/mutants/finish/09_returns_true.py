"""Returns True/False ("is it finished?") instead of the reason. The scheduler puts the value in
`finish_reason`, which the client reads: it must be 'stop', 'length' or None."""

MUST_FAIL = {"EOS ids finish with 'stop'", "max_tokens finishes with 'length'"}
MUST_SAY = "returned True"


def check_finish(req, eos_ids, decode=None):
    sp = req.sampling_params
    if not sp.ignore_eos and req.output_ids[-1] in eos_ids:
        return True
    if sp.stop and decode is not None:
        tail = decode(req.output_ids[-(max(len(s) for s in sp.stop) + 4) :])
        if any(s in tail for s in sp.stop):
            return True
    return len(req.output_ids) >= req.max_new_tokens


CAUGHT_BY = {"hand", "generated"}
HINT_SAYS = "never True/False"
