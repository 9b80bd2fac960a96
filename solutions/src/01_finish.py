from cells import code, md

CELLS = [
    md("""
# Exercise 1 — When is a request finished?

**Goal:** write the check the scheduler runs after every new token: does this request stop now,
and why? **Time:** about 20 minutes.

After the engine samples a token, `Scheduler._process_results` (in
`minisgl_edu/scheduler/scheduler.py`) appends it to `req.output_ids` and calls
`self.finish_fn(req, self.eos_ids, self._decode_tail)`. If that returns a reason, the request
leaves the running set, its KV pages go back (to the prefix cache or the free list), and its last
`DetokenizeMsg` carries `finished=True` and the reason, which becomes the `finish_reason` of the
OpenAI response. The package's own version is `check_finish` in
`minisgl_edu/scheduler/finish.py`; don't peek before you try.

A request finishes with:

* `"stop"` when the newest token is **any** of the model's end-of-sequence ids (`eos_ids`, a
  set: some models have several), unless `req.sampling_params.ignore_eos` is true (benchmarks use
  it to get a fixed output length);
* `"stop"` when the text generated so far now contains one of `req.sampling_params.stop`. Only the
  end of the output can contain a stop string that was not there one token ago, so decode only
  the last few tokens with `decode(ids)`. A stop string of *n* characters spans at most *n* tokens
  when every character is a token of its own, but a CJK character or an emoji takes two or three
  byte tokens, so give the window a margin. Look for the stop string anywhere in that tail: the
  newest token can complete it and carry more text after it. And only the output counts: a stop
  string that appears in the prompt does not end the answer;
* `"length"` when `len(req.output_ids)` reached `req.max_new_tokens` (the request's `max_tokens`,
  clamped by the scheduler to what fits in the context);
* otherwise `None`: keep going.

When two hold at once (the last allowed token is an EOS, or completes a stop string), the answer
is `"stop"`: the model finished its answer; it was not cut off.
"""),
    code("""
from __future__ import annotations

from typing import Callable, Optional

from minisgl_edu.core import Req
from minisgl_edu.grading import check
"""),
    code('''
def check_finish(req: Req, eos_ids: set[int], decode: Optional[Callable[[list[int]], str]] = None) -> Optional[str]:
    """Return "stop", "length" or None for `req`, whose newest token is req.output_ids[-1]."""
    ### BEGIN SOLUTION
    ### HINT: EOS first (unless ignore_eos), then stop strings in the decoded tail, then max_new_tokens
    sp = req.sampling_params
    if not sp.ignore_eos and req.output_ids[-1] in eos_ids:
        return "stop"
    if sp.stop and decode is not None:
        window = max(len(s) for s in sp.stop) + 4
        tail = decode(req.output_ids[-window:])
        if any(s in tail for s in sp.stop):
            return "stop"
    if len(req.output_ids) >= req.max_new_tokens:
        return "length"
    return None
    ### END SOLUTION
'''),
    md("""
## Check your answer

`check` first runs unit cases on hand-made requests, decoded with the default model's real
tokenizer (the one the scheduler passes as `decode`): EOS ids, the length limit and its clamped
value, which reason wins when two hold, `ignore_eos`, and stop strings that span two tokens, end
inside a token, are made of CJK characters (several tokens each) or appear only in the prompt.
Then it plugs your function into the real engine (`scheduler.finish_fn = check_finish`), runs
three chat requests on the default model (one ends on EOS, one on `max_tokens`, one on a stop
string) and compares token ids and finish reasons with the package's own version.

Each case has a time limit (minutes, far more than a correct answer needs), so an answer that
loops fails that case instead of hanging the notebook. The answer must be your own code: a
function that calls or wraps the package's `check_finish` scores 0.
"""),
    code("""
result = check("finish", check_finish)
"""),
    md("""
## Going further

* Why does the scheduler, and not the detokenizer, have to notice stop strings? (What would the
  engine keep doing otherwise?)
* The detokenizer also knows the stop strings (`DetokenizeMsg.stop`). What does it do with them
  that the scheduler cannot? (Exercise 3.)
"""),
]
