"""Sizes the decode window by the first stop string of the list only. A longer stop string later
in the list spans more tokens than that window holds, so it is never seen whole: with
stop=["!", "two three four five six seven"] the request runs past "seven"."""

MUST_FAIL = {"the longest stop string sets the window"}
MUST_SAY = "every stop string"


def check_finish(req, eos_ids, decode=None):
    sp = req.sampling_params
    if not sp.ignore_eos and req.output_ids[-1] in eos_ids:
        return "stop"
    if sp.stop and decode is not None:
        tail = decode(req.output_ids[-(len(sp.stop[0]) + 4) :])
        if any(s in tail for s in sp.stop):
            return "stop"
    if len(req.output_ids) >= req.max_new_tokens:
        return "length"
    return None


CAUGHT_BY = {"hand", "generated"}
HINT_SAYS = "every stop string of the list must fit"
