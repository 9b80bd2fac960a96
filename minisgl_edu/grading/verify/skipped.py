"""Exercise 8: a token that one finish check lets pass, and that skipped the checks after it.

The finish checks of a new token are three: EOS (unless `ignore_eos`), the stop strings, the length
(`max_new_tokens`). A student who leaves the loop's turn early when a check lets a token pass (a
`continue` after an end id that `ignore_eos` keeps, the length test in an `else` of the stop-string
test) misses a finish the later check would have found on that very token: the run goes on past
it, or, when it is the run's last token, the request is left unfinished. `skipped_check` reads this from the answer itself: on the same step with the one thing that
let the token pass taken away (the end id made an ordinary token, `ignore_eos` off, the stop strings
gone), the answer stops where the package's step does. The message names the token, the check that
was skipped and what let the token pass.
"""

from __future__ import annotations

import dataclasses

from minisgl_edu.grading.verify.requests import _call, _copy, _id
from minisgl_edu.scheduler.verify_step import VerifyRequest, VerifyResult
from minisgl_edu.scheduler.verify_step import verify_step as package_step


def _ordinary(req: VerifyRequest, drafts: list[int], targets: list[int], j: int):
    """The step with new token `j` made an ordinary token (not an end id), at the same place of the run."""
    near = [t for t in (drafts[j] if j < len(drafts) else None, targets[j]) if t is not None]
    plain = next(_id(w) for w in (" one", " two", " three") if _id(w) not in near and _id(w) not in req.eos_ids)
    drafts, targets = list(drafts), list(targets)
    if j < len(drafts) and drafts[j] == targets[j]:  # an accepted draft: the same token in both
        drafts[j] = plain
    targets[j] = plain
    return _copy(req), drafts, targets


def _probes(req: VerifyRequest, drafts: list[int], targets: list[int], want: VerifyResult):
    """(what let the token pass, what to do instead, the step without it) for each thing that could
    have let the finishing token pass a check, most specific first."""
    j, token = len(want.tokens) - 1, want.tokens[-1]
    if req.ignore_eos and token in req.eos_ids:
        yield (
            f"it is an end id ({token}) that ignore_eos lets pass",
            "an ignored end id goes on to the stop-string and length tests (e.g. no `continue` after the EOS test)",
            _ordinary(req, drafts, targets, j),
        )
    if req.ignore_eos:
        yield (
            "ignore_eos is set",
            "ignore_eos turns off the EOS test only",
            (dataclasses.replace(_copy(req), ignore_eos=False), list(drafts), list(targets)),
        )
    if req.stop and want.finish_reason == "length":
        yield (
            f"the request has stop strings {req.stop}, none found",
            "a token no stop string ends still goes on to the length test",
            (dataclasses.replace(_copy(req), stop=[]), list(drafts), list(targets)),
        )


def _finish_text(req: VerifyRequest, want: VerifyResult) -> str:
    if want.finish_reason == "length":
        return (
            f"with it the output reaches max_new_tokens ({len(req.output_ids) + len(want.tokens)} of "
            f"{req.max_new_tokens}): the length test"
        )
    return "it completes a stop string: the stop-string test"


def skipped_check(fn, req: VerifyRequest, drafts: list[int], targets: list[int], want: VerifyResult, got) -> str:
    """The message that names a finish check skipped after another check let the finishing token
    pass ("" when the answer shows no such thing): the answer's run went on past the token where
    the package's step finishes (not by an end id), and on the same step with what let that token
    pass taken away, the answer's tokens and finish_reason are the package's. The same when the
    finishing token is the last of the run and the answer left the request unfinished."""
    cut = len(want.tokens)
    reason, token = want.finish_reason, want.tokens[-1] if want.tokens else None
    missed = list(got.tokens[:cut]) == list(want.tokens) and (len(got.tokens) > cut or got.finish_reason is None)
    if fn is None or reason is None or not missed or (token in req.eos_ids and not req.ignore_eos):
        return ""
    for why, advice, (r, d, t) in _probes(req, drafts, targets, want):
        expected = package_step(_copy(r), list(d), list(t))
        if expected.finish_reason != reason or len(expected.tokens) != cut:
            continue  # that step does not finish on the same token: it tells nothing
        try:
            answer = _call(fn, r, d, t)
        except Exception:
            continue
        if (list(answer.tokens), answer.finish_reason) == (list(expected.tokens), expected.finish_reason):
            return (
                f"new token {cut - 1} ({token}) finishes the request, but your answer "
                + ("went on past it" if len(got.tokens) > cut else "did not finish there")
                + ": "
                f"{_finish_text(req, want)} was skipped for it because {why} (on the same step without that, "
                f"your answer stops there). A check that lets a token pass must not skip the checks after it: {advice}"
            )
    return ""
