"""Exercise 1 — finishing: `check_finish(req, eos_ids, decode) -> "stop" | "length" | None`.

The scheduler calls it after appending each new token (`Scheduler.finish_fn`). The cases check
it on hand-made requests, then plug it into the real engine and compare with the reference.
"""

from __future__ import annotations

from minisgl_edu.core import Req, SamplingParams
from minisgl_edu.grading.core import Case
from minisgl_edu.grading.harness import PROMPTS, run_requests
from minisgl_edu.scheduler.finish import check_finish as reference

EOS = {0, 2}


def _req(output, max_new=10, **kw) -> Req:
    req = Req(0, [5, 6, 7], SamplingParams(max_tokens=max_new, **kw), output_ids=list(output))
    req.max_new_tokens = max_new
    return req


def _decode(ids):  # a toy tokenizer: token t is the character chr(ord('a') + t % 26)
    return "".join(chr(ord("a") + t % 26) for t in ids)


def case_eos(fn):
    assert fn(_req([11, 12, 2]), EOS, _decode) == "stop", "token 2 is an EOS id: expected 'stop'"
    assert fn(_req([11, 12, 0]), EOS, _decode) == "stop", "every EOS id counts, not only the first"
    assert fn(_req([11, 12, 13]), EOS, _decode) is None, "no EOS, no stop string, room left: expected None"


def case_length(fn):
    assert fn(_req([11, 12, 13], max_new=3), EOS, _decode) == "length", "3 of max 3 tokens: expected 'length'"
    assert fn(_req([11, 12], max_new=3), EOS, _decode) is None, "2 of max 3 tokens: expected None"


def case_ignore_eos(fn):
    assert fn(_req([11, 2], ignore_eos=True), EOS, _decode) is None, "ignore_eos: EOS must not stop"
    assert fn(_req([11, 2], max_new=2, ignore_eos=True), EOS, _decode) == "length", "ignore_eos still ends at max_tokens"


def case_stop_string(fn):
    # tokens 7, 4, 11 decode to "hel": the stop string "el" ends with the newest token
    assert fn(_req([7, 4, 11], stop=["el"]), EOS, _decode) == "stop", "'hel' contains the stop string 'el'"
    assert fn(_req([7, 4, 11], stop=["xy"]), EOS, _decode) is None, "'hel' has no 'xy'"


def case_real_engine(fn):
    params = [SamplingParams(max_tokens=60), SamplingParams(max_tokens=6), SamplingParams(max_tokens=8, ignore_eos=True)]
    got = run_requests(params, setup=lambda s: setattr(s, "finish_fn", fn))  # yours first: fails fast
    ref = run_requests(params)
    for uid in range(len(PROMPTS)):
        assert got.reasons.get(uid) == ref.reasons[uid], (
            f"request {uid}: finish_reason {got.reasons.get(uid)!r}, expected {ref.reasons[uid]!r}")
        assert got.tokens[uid] == ref.tokens[uid], f"request {uid}: different tokens from the reference"


CASES = [
    Case("EOS ids finish with 'stop'", case_eos, "compare req.output_ids[-1] with every id in eos_ids"),
    Case("max_tokens finishes with 'length'", case_length, "len(req.output_ids) against req.max_new_tokens"),
    Case("ignore_eos", case_ignore_eos, "req.sampling_params.ignore_eos turns the EOS test off, not the length test"),
    Case("stop strings", case_stop_string, "decode the last few output tokens and look for each of sampling_params.stop"),
    Case("in the real engine", case_real_engine, "the unit cases must pass first; then the scheduler uses your function"),
]
SYMBOL = "check_finish"
SOLUTION = reference
