"""Compares the newest token with SmolLM2's own end ids, 0 and 2, instead of the `eos_ids`
argument. Right for the course's default model only: the scheduler passes the ids of the model
it serves (Llama 3 ends with 128001 or 128009), and with another model the request never stops
on EOS, or stops on an ordinary token."""

MUST_FAIL = {"eos_ids is the model's set"}
MUST_SAY = "the eos_ids argument"


def check_finish(req, eos_ids, decode=None):
    sp = req.sampling_params
    if not sp.ignore_eos and req.output_ids[-1] in (0, 2):
        return "stop"
    if sp.stop and decode is not None:
        tail = decode(req.output_ids[-(max(len(s) for s in sp.stop) + 4) :])
        if any(s in tail for s in sp.stop):
            return "stop"
    if len(req.output_ids) >= req.max_new_tokens:
        return "length"
    return None


CAUGHT_BY = {"hand", "generated"}
HINT_SAYS = "the served model's end ids"
