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

The contract. `check_finish(req, eos_ids, decode)` is called once per new token, with that
token already appended, and returns:

* `"stop"` when the newest token is **any** of `eos_ids`: the end ids of the model being served,
  a set (some models have several; the scheduler passes them, so they are not always SmolLM2's),
  unless `req.sampling_params.ignore_eos` is true (benchmarks use it to get a fixed output length);
* `"stop"` when the text of the output now contains one of `req.sampling_params.stop`. The text is
  what `decode(ids)` gives for the output's token ids (the scheduler passes its tokenizer's
  decode). Since the check runs after every token, a stop string found now was completed by the
  newest token, and it can lie anywhere relative to the tokens: across several of them, ending
  in the middle of the newest one (which then carries more text after it), or made of characters
  that take several byte tokens each (CJK, emoji). With `ignore_eos`, an EOS token stays in the
  output and decodes to no text (`decode` skips special tokens), so a stop string with a few of them
  among its tokens (up to three) spans more tokens than it has bytes. Only the output counts: a stop string that
  appears in the prompt does not end the answer. The check runs for every token of every request,
  so it must not decode the whole output each time; what it does decode must still be enough to
  see any stop string of the list that the newest token completes;
* `"length"` when `len(req.output_ids)` reached `req.max_new_tokens` (the request's `max_tokens`,
  clamped by the scheduler to what fits in the context);
* otherwise `None`: keep going. It never changes `req.output_ids`.

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
    ### HINT: see the contract above
    sp = req.sampling_params
    if not sp.ignore_eos and req.output_ids[-1] in eos_ids:
        return "stop"
    if sp.stop and decode is not None:
        # a stop string of b bytes spans at most b tokens, + the token it starts in and a margin
        window = max(len(s.encode("utf-8")) for s in sp.stop) + 4
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
tokenizer (the one the scheduler passes as `decode`): EOS ids (two of them, and another model's
set), the length limit and its clamped value, which reason wins when two hold, `ignore_eos`, and
stop strings that span two tokens, end inside a token, are made of CJK characters or emoji (an
emoji takes up to four tokens), have ignored EOS tokens among their own, come second in a list of
stop strings of different lengths, or appear only in the prompt. Then it plugs your function into the real engine
(`scheduler.finish_fn = check_finish`), runs three chat requests on the default model (one ends
on EOS, one on `max_tokens`, one on a stop string) and compares token ids and finish reasons with
the package's own version. When a case fails, its message says what was expected and why, and a
hint follows.

Each case has a time limit (minutes, far more than a correct answer needs), so an answer that
loops fails that case instead of hanging the notebook. The answer must be your own code: a
function that calls or wraps the package's `check_finish` scores 0.
"""),
    code("""
result = check("finish", check_finish)
"""),
    md("""
## Stretch: `min_tokens` (not in this engine)

SGLang (`min_new_tokens`) and vLLM (`min_tokens`) let a request ask for a minimum length: until
the output has `min_tokens` tokens, neither an EOS token nor a stop string finishes it. The length
limit still does (if `min_tokens` is above `req.max_new_tokens`, the request ends with
`"length"`). This engine has no such field, so write it as a function of its own, with
`min_tokens` as an argument:

`check_finish_min_tokens(req, eos_ids, decode, min_tokens)` returns `"stop"`, `"length"` or
`None`, like `check_finish`, and

* while `len(req.output_ids) < min_tokens` (output tokens only, the prompt does not count), only
  the length limit can finish the request: an EOS or a stop string is held back (the token stays in
  the output: the check decides, it never edits `req.output_ids`);
* from the `min_tokens`-th output token on, `check_finish`'s rules apply unchanged: an EOS as that
  very token finishes with `"stop"`, and so does a stop string that the decoded tail still shows
  (SGLang's choice); `ignore_eos` still turns off the EOS test only;
* `min_tokens=0` changes nothing.

You may call your own `check_finish` from above; calling the package's is not an answer. Real
engines also keep the model from *sampling* EOS before the minimum (a logits processor that masks
the EOS ids); here only the finish check changes, so a held-back EOS shows in the output.

`check` grades it on its own score line, `finish_min_tokens`: unit cases, then the real engine with
`scheduler.finish_fn` set to your function with a `min_tokens` per request, compared with the
grader's reference.
"""),
    code('''
def check_finish_min_tokens(
    req: Req, eos_ids: set[int], decode: Optional[Callable[[list[int]], str]], min_tokens: int
) -> Optional[str]:
    """check_finish, with EOS and stop strings held back until min_tokens output tokens exist."""
    ### BEGIN SOLUTION
    ### HINT: see the contract above
    n = len(req.output_ids)
    if n < min_tokens:
        # Too early for EOS and stop strings; the length limit is a hard cap all the same.
        return "length" if n >= req.max_new_tokens else None
    return check_finish(req, eos_ids, decode)
    ### END SOLUTION
'''),
    code("""
result_stretch = check("finish_min_tokens", check_finish_min_tokens)
"""),
    md("""
## Going further

* Why does the scheduler, and not the detokenizer, have to notice stop strings? (What would the
  engine keep doing otherwise?)
* The detokenizer also knows the stop strings (`DetokenizeMsg.stop`). What does it do with them
  that the scheduler cannot? (Exercise 3.)
"""),
]
