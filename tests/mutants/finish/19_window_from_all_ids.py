"""Takes the decode window from `req.all_ids[-window:]` (the prompt followed by the output), "the
sequence so far", instead of `req.output_ids[-window:]`. While the output is shorter than the window,
the window reaches back into the end of the prompt, so a stop string that the prompt ends with (or one
that begins in the prompt and is finished by the first output tokens) stops the request at once.
Differs e.g. for a prompt ending in "two three", stop=["two three"], and any first output token:
the contract says only the output counts (None), this answer returns "stop"."""

MUST_FAIL = {"stop string in the prompt only", "generated: 200 requests grown token by token"}
MUST_SAY = "decode req.output_ids only"
CAUGHT_BY = {"hand", "generated"}
HINT_SAYS = "decode the output tokens, not the prompt"


def check_finish(req, eos_ids, decode=None):
    sp = req.sampling_params
    if not sp.ignore_eos and req.output_ids[-1] in eos_ids:
        return "stop"
    if sp.stop and decode is not None:
        window = max(len(s.encode("utf-8")) for s in sp.stop) + 4
        tail = decode(req.all_ids[-window:])
        if any(s in tail for s in sp.stop):
            return "stop"
    if len(req.output_ids) >= req.max_new_tokens:
        return "length"
    return None
