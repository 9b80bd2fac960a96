"""Exercise 8: a new token's place in the run looked up by its value.

`run.index(token)` (or `tokens.index`, `drafts.index`) gives the place of the FIRST copy of a token.
When the run repeats a token, which n-gram drafts do all the time, a later copy is checked as if it
stood at the earlier one's place: the output the length, EOS and stop-string tests see is the wrong
one, and the run is cut at the wrong token. The wrong cut alone looks like many other mistakes (a
length one past, a stop-string tail too short), so `finds_places_by_value` runs the answer on two
small steps of its own that differ only in whether the drafts repeat a token: an answer that counts
places is right on both, one that looks them up by value is right only on the first.
"""

from __future__ import annotations

from minisgl_edu.grading.verify.requests import _call, _copy, _req, _w
from minisgl_edu.scheduler.verify_step import VerifyRequest
from minisgl_edu.scheduler.verify_step import verify_step as package_step

PLACE_BY_VALUE = (
    "a new token's place in the run was looked up by its value (run.index(token) or the like): index() gives "
    "the first copy, so when the run repeats a token (n-gram drafts often do) a later copy is checked at the "
    "earlier one's place, and the length, EOS and stop-string tests judge the wrong output. On a step of its own "
    "(max_new_tokens 3, one token of output) your answer cuts the drafts ' two three four' right and the drafts "
    "' two two two' wrong. Count the places as you go (for j, token in enumerate(run)), never look them up"
)
PLACE_BY_VALUE_HINT = (
    "count each new token's place as you go (enumerate(run)): run.index(token) finds the first copy of a token "
    "that repeats in the run"
)


def finds_places_by_value(fn) -> bool:
    """The answer cuts a run of three distinct drafts at max_new_tokens as the package does, and cuts
    the same run with one draft repeated three times otherwise."""
    one, two, three, four, five = _w(" one", " two", " three", " four", " five")
    req = _req([one], 3, max_new=3)
    distinct = ([two, three, four], [two, three, four, five])
    repeated = ([two, two, two], [two, two, two, three])
    try:
        right = _call(fn, req, *distinct) == package_step(_copy(req), *map(list, distinct))
        wrong = _call(fn, req, *repeated) != package_step(_copy(req), *map(list, repeated))
    except Exception:
        return False
    return right and wrong


def run_repeats(req: VerifyRequest, drafts: list[int], targets: list[int], accepted: int) -> bool:
    """Whether this step's run (the accepted drafts and the model's token) holds a token twice: only
    then can a place looked up by value be wrong here."""
    run = list(drafts[:accepted]) + [targets[accepted]]
    return len(set(run)) < len(run)
