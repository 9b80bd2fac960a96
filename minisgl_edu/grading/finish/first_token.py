"""Exercise 1's hand case of the first output token, and the probe that names an answer which never
checks it.

The scheduler calls check_finish after it appends each new token, the first one included: that token
comes out of the prefill step, yet it is an output token like the others (Scheduler._add_token). A model
may answer with an EOS at once (an empty answer), and a request with max_tokens=1 ends on its first
token. An answer that returns None while the output holds a single token ("the first token comes from
the prefill, not a decode step") runs on past both. The case names that mistake only once the probe
confirms it: the answer misses an EOS and the length limit on a one-token output, and finds both on a
two-token output.
"""

from __future__ import annotations

from minisgl_edu.grading.core import Mistake
from minisgl_edu.grading.finish.expect import _expect
from minisgl_edu.grading.finish.tokens import EOS, PLAIN, _decode, _req

FIRST_TOKEN = (
    "the check runs on the first output token too: the scheduler calls check_finish after it appends every new "
    "token, the one the prefill gives included, so do not return None while req.output_ids holds a single token"
)
SKIPPED = (
    "your check returns None whenever the output holds a single token, and finds the same EOS and the same "
    "length limit on an output of two tokens: it never checks the first output token. That token comes out of "
    "the prefill, but it is an output token like the others: a model can answer with an EOS at once (an empty "
    "answer), and a request with max_tokens=1 ends on it"
)


def skips_first_token(fn) -> bool:
    """None for [2] (an EOS) and for [' ok'] at max_new_tokens 1, yet 'stop' for [' ok', 2] and 'length' for
    [' ok', ' ok'] at max_new_tokens 2: the answer skips the check on a one-token output only."""
    try:
        first = (fn(_req([2]), set(EOS), _decode), fn(_req([PLAIN], max_new=1), set(EOS), _decode))
        second = (fn(_req([PLAIN, 2]), set(EOS), _decode), fn(_req([PLAIN, PLAIN], max_new=2), set(EOS), _decode))
    except Exception:
        return False
    return first == (None, None) and second == ("stop", "length")


def case_first_token(fn):
    try:
        _expect(
            fn,
            _req([2]),
            "stop",
            "the first output token is 2, in eos_ids {0, 2}: the model answered with an EOS at once (an empty "
            "answer), and the scheduler checks that first token like any other",
            hint="the newest token is in eos_ids, whatever the number of output tokens",
        )
        _expect(
            fn,
            _req([PLAIN], max_new=1),
            "length",
            "1 of max 1 tokens (max_tokens=1): the first output token is the last allowed",
            hint="'length' once len(req.output_ids) >= req.max_new_tokens, 1 included",
        )
    except Mistake as e:
        if skips_first_token(fn):
            e.args = (f"{e}; {SKIPPED}",)
            e.hint = FIRST_TOKEN
        raise
