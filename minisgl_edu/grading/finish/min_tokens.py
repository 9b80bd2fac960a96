"""Exercise 1, stretch — `min_tokens`, which this engine does not have:
`check_finish_min_tokens(req, eos_ids, decode, min_tokens) -> "stop" | "length" | None`.

SGLang (`min_new_tokens`) and vLLM (`min_tokens`) let a request ask for at least that many output
tokens: before `len(req.output_ids)` reaches `min_tokens`, neither an EOS token nor a stop string
finishes it; the length limit (`req.max_new_tokens`) still does. From the `min_tokens`-th output
token on, the rules of `check_finish` apply unchanged. The grader's reference is
`reference_min_tokens` below (the package has none to copy); the scheduler knows nothing of
min_tokens, so the engine case wraps the student's function per request into `finish_fn`.

Graded on its own score line ("finish_min_tokens"), so the base exercise's score is unchanged.
"""

from __future__ import annotations

import copy
from typing import Callable, Optional

from minisgl_edu.core import Req, SamplingParams
from minisgl_edu.grading.core import Case, Mistake
from minisgl_edu.grading.finish.decoded_window import decoded_too_little
from minisgl_edu.grading.finish.diagnoses import (
    LENGTH_BEFORE_STOP,
    LENGTH_ONE_LATE,
    MIN_IN_TOKENS,
    length_before_stop,
    length_one_late,
    min_in_text,
)
from minisgl_edu.grading.finish.min_probes import (
    EOS_COUNTS,
    EOS_IDS_CHANGED,
    HIDDEN_EOS_LENGTH,
    ONE_TOO_FEW,
    STATE_KEPT,
    STOP_NOT_SPENT,
    UNREACHABLE_MIN,
    eos_ids_changed,
    hides_held_back_eos,
    holds_back_one_too_few,
    kept_between_calls,
    one_set_two_requests,
)
from minisgl_edu.grading.finish.scenes import RETURNS_A_REASON, finish_case, params_changed
from minisgl_edu.grading.finish.tokens import EOS, PLAIN, _decode, _ids, _req
from minisgl_edu.grading.harness import fail_fast_if_stub, remember, run_requests
from minisgl_edu.scheduler.finish import check_finish as package_check_finish


def reference_min_tokens(
    req: Req,
    eos_ids: set[int],
    decode: Optional[Callable[[list[int]], str]],
    min_tokens: int,
) -> Optional[str]:
    """The stretch's reference: the package's check, with EOS and stop strings held back until
    `min_tokens` output tokens exist (SGLang tests the length first, then this gate)."""
    n = len(req.output_ids)
    if n < min_tokens:
        return "length" if n >= req.max_new_tokens else None
    return package_check_finish(req, eos_ids, decode)


def _expect(fn, req: Req, min_tokens: int, want: Optional[str], why: str, hint: str = "", decode=_decode) -> None:
    before, params, limit = list(req.output_ids), copy.deepcopy(req.sampling_params), req.max_new_tokens
    got = fn(req, set(EOS), decode, min_tokens)
    if req.max_new_tokens != limit:  # compared before and after the call: the answer wrote it
        raise Mistake(
            f"your check_finish_min_tokens changed req.max_new_tokens from {limit} to {req.max_new_tokens} "
            f"(min_tokens={min_tokens}): it only decides. The limit is the request's own, set from max_tokens when "
            "it was added, and min_tokens never moves it: a min_tokens above it still ends the request at "
            f"{limit} tokens with 'length'",
            "only read req: leave req.max_new_tokens as it is; min_tokens holds back EOS and stop strings, never "
            "the length limit, so do not raise the limit to make room for the minimum",
        )
    if req.output_ids != before:
        raise Mistake(
            "your check_finish_min_tokens changed req.output_ids: it only decides whether the request "
            "is finished; a token held back by min_tokens stays in the output (the client sees it)",
            "only read req: leave req.output_ids as it is",
        )
    changed = params_changed(params, req)
    if changed:
        raise Mistake(
            f"your check_finish_min_tokens changed req.sampling_params ({changed}) with {len(before)} output "
            f"tokens and min_tokens={min_tokens}: it only decides. The parameters are the client's and the rest of "
            "the engine reads them while the request runs: the scheduler sends list(sampling_params.stop) to the "
            "detokenizer with every token, so a stop list switched off lets the client see a stop string",
            "only read req: leave req.sampling_params as it is, and hold EOS and stop strings back by what you "
            "return (None below min_tokens), not by switching them off on the request",
        )
    if got == want and type(got) is type(want):
        return
    kept = kept_between_calls(fn, req, min_tokens, want, got)
    if kept:
        raise Mistake(f"{why}: {kept} (output {_decode(before)!r}, min_tokens={min_tokens})", STATE_KEPT)
    unit = min_in_text(fn)  # the minimum measured in the decoded text: named whatever the case tests
    raise Mistake(
        f"{why}: your check_finish_min_tokens returned {got!r}, expected {want!r} (output {_decode(before)!r}, "
        f"{len(before)} output tokens, min_tokens={min_tokens}, max {req.max_new_tokens})"
        + (f". {unit}" if unit else ""),
        RETURNS_A_REASON if isinstance(got, bool) else MIN_IN_TOKENS if unit else hint,
    )


def case_eos_waits(fn):
    _expect(
        fn,
        _req([PLAIN, PLAIN, 2]),
        5,
        None,
        "3 output tokens of min_tokens=5: an EOS before min_tokens must not finish the request",
    )
    _expect(  # the same request, only without a decoder: what differs from the play above is decode alone
        fn,
        _req([PLAIN, PLAIN, 2]),
        5,
        None,
        "the same 3 output tokens of min_tokens=5, called with decode=None (the signature allows it: a request "
        "with no stop strings needs no decoder); with your decode it was held back, with decode=None it was not",
        hint=GATE_WITHOUT_DECODE,
        decode=None,
    )
    past = "from min_tokens on, an EOS finishes the request again, as in check_finish"
    _expect(fn, _req([PLAIN] * 5 + [0]), 5, "stop", "6 output tokens, min_tokens=5: the newest token 0 is an EOS", past)
    _expect(fn, _req([PLAIN, 2]), 0, "stop", "min_tokens=0 holds nothing back: EOS finishes as in check_finish", past)
    _expect(
        fn,
        _req([2, PLAIN, PLAIN]),
        3,
        None,
        "min_tokens=3 is reached, the newest token is ' ok': the EOS that min_tokens held back at token 1 does "
        "not finish the request later",
        hint="once min_tokens is reached, test the newest token only, req.output_ids[-1], as check_finish does: "
        "an EOS held back earlier never finishes the request",
    )


GATE_WITHOUT_DECODE = (
    "the min_tokens hold-back does not depend on decode: with decode=None an EOS below min_tokens is held back "
    "too; test len(req.output_ids) < min_tokens first, whether or not a decode function is given"
)
BELOW_MIN = "below min_tokens an EOS does not finish the request: hold it back while len(req.output_ids) < min_tokens"


def case_boundary(fn):
    _expect(
        fn,
        _req([PLAIN, 2, PLAIN, PLAIN, PLAIN, 2]),
        5,
        "stop",
        "6 output tokens and min_tokens=5, the newest an EOS: the EOS that min_tokens held back at token 2 "
        "stays in req.output_ids and counts toward the minimum like any token, so this EOS finishes",
        hint=EOS_COUNTS,
    )
    _expect(
        fn,
        _req([PLAIN] * 4 + [2]),
        5,
        "stop",
        "the EOS is the 5th output token and min_tokens=5: the minimum is reached with this very token, "
        "so it finishes (hold back while len(req.output_ids) < min_tokens, not <=)",
    )
    try:
        _expect(
            fn,
            _req([PLAIN] * 3 + [2]),
            5,
            None,
            "the EOS is the 4th output token and min_tokens=5: one short of the minimum, so keep going",
            hint=BELOW_MIN,
        )
    except Mistake as e:
        if e.hint == BELOW_MIN and holds_back_one_too_few(fn):
            e.hint = ONE_TOO_FEW
        raise


def case_stop_waits(fn):
    ids = _ids("one two three")
    n = len(ids)
    _expect(
        fn,
        _req(ids, stop=["two three"]),
        n + 1,
        None,
        f"the stop string 'two three' completes at output token {n}, but min_tokens={n + 1}: stop strings wait "
        "for min_tokens just as EOS does",
    )
    _expect(
        fn,
        _req(ids, stop=["one two three"]),
        n - 1,
        "stop",
        f"min_tokens={n - 1} is reached and the stop string 'one two three' completes at output token {n}: it "
        "began before the minimum, and it finishes the request all the same",
        hint="decode the same window as check_finish: a stop string may begin before the min_tokens-th token "
        "(only the decision waits for min_tokens, not the text searched)",
    )
    _expect(
        fn,
        _req(ids, stop=["two three"]),
        n,
        "stop",
        f"the stop string completes at output token {n} and min_tokens={n}: it finishes",
        hint="< min_tokens holds back, == min_tokens does not: the stop strings are tested again from then on",
    )
    later = _ids("one two three four")
    assert later[:n] == ids and len(later) == n + 1, "setup: ' four' must be one more token"
    try:
        _expect(
            fn,
            _req(later, stop=["two three"]),
            n + 1,
            "stop",
            f"the stop string 'two three' completed at output token {n} while min_tokens={n + 1} held it back; "
            f"token {n + 1} reaches the minimum and the decoded window still shows it: it finishes now",
            hint=STOP_NOT_SPENT,
        )
    except Mistake as e:
        if e.hint == STOP_NOT_SPENT and _misses_without_minimum(fn, _req(later, stop=["two three"])):
            e.hint = decoded_too_little(fn, _req(later, stop=["two three"]), set(EOS), 0) or MISSED_WITHOUT_MINIMUM
        raise


MISSED_WITHOUT_MINIMUM = (
    "your check misses this stop string with min_tokens=0 too, so the search itself misses it, not the hold-back: "
    "a stop string that the decoded window shows finishes the request even where the newest token did not "
    "complete it; search decode(req.output_ids[-window:]) on every call"
)


def _misses_without_minimum(fn, req: Req) -> bool:
    """The answer misses req's stop string with min_tokens=0 too (no hold-back at all)."""
    try:
        return fn(req, set(EOS), _decode, 0) in (None, "length")
    except Exception:
        return False


STOP_AT_THE_LIMIT = (
    "from min_tokens on, check_finish's rules decide unchanged: an EOS or a stop string on the last allowed token "
    "ends the request with 'stop'"
)


def case_length_still_ends(fn):
    try:
        _expect(
            fn,
            _req([PLAIN] * 3, max_new=3),
            10,
            "length",
            "min_tokens=10 but req.max_new_tokens=3: the length limit still ends the request "
            "(min_tokens holds back EOS and stop strings only, never max_tokens)",
        )
    except Mistake as e:
        if length_one_late(fn, _req([PLAIN] * 3, max_new=3), EOS, 10):
            late = "; with max 2 it returns 'length' for these 3 tokens: it ends the request one token late"
            raise Mistake(f"{e}{late}", LENGTH_ONE_LATE) from None
        raise
    _expect(
        fn,
        _req([PLAIN, 2], max_new=3),
        10,
        None,
        "the EOS is output token 2 of max 3, and min_tokens=10: a minimum above req.max_new_tokens, which the "
        "request can never reach, still holds the EOS back (the request goes on, and ends with 'length')",
        hint=UNREACHABLE_MIN,
    )
    _expect(
        fn,
        _req([PLAIN, PLAIN, 2], max_new=3),
        10,
        "length",
        "the last allowed token is an EOS, but min_tokens=10 holds the EOS back: the request ends by its "
        "length limit, so the reason is 'length', not 'stop'",
        hint="below min_tokens the EOS is held back: test the length, and answer 'length' when it is reached",
    )
    _expect(
        fn,
        _req(_ids("one two three"), max_new=3, stop=["three"]),
        10,
        "length",
        "the last allowed token completes the stop string 'three', but min_tokens=10 holds it back: the request "
        "ends by its length limit, so the reason is 'length'",
        hint="below min_tokens a stop string is held back too: test the length, and answer 'length' when it is reached",
    )
    _expect(fn, _req([PLAIN] * 2, max_new=3), 10, None, "2 of max 3 tokens and min_tokens=10: keep going")
    _expect(
        fn,
        _req([PLAIN] * 3, max_new=3, max_tokens=50),
        10,
        "length",
        "the client asked for max_tokens=50, clamped to req.max_new_tokens=3 by what fits in the model's context; "
        "below min_tokens the length test uses that clamped limit too (req.max_new_tokens, not "
        "sampling_params.max_tokens)",
        hint="req.max_new_tokens, not sampling_params.max_tokens",
    )
    ids = _ids("one two three")
    for out, limit, stop, at_min, what, test in (
        ([PLAIN, PLAIN, 2], 3, [], 2, "an EOS", "the EOS test"),
        (
            ids,
            len(ids),
            ["three"],
            len(ids) - 1,
            "the token that completes the stop string 'three'",
            "the stop strings",
        ),
    ):
        try:
            _expect(
                fn,
                _req(out, max_new=limit, stop=stop),
                at_min,
                "stop",
                f"min_tokens={at_min} is reached and the last allowed token is {what}: from the minimum on "
                "check_finish decides unchanged, and there 'stop' wins over 'length'",
                hint=STOP_AT_THE_LIMIT,
            )
        except Mistake as e:
            if length_before_stop(fn, _req(out, max_new=limit, stop=stop), EOS, at_min):
                first = f"; with the limit far away it returns 'stop': it tests the length before {test}"
                raise Mistake(f"{e}{first}", f"from min_tokens on, {LENGTH_BEFORE_STOP}") from None
            raise
    _held_back_eos_counts(fn)


def _held_back_eos_counts(fn) -> None:
    """[EOS, ' ok', ' ok'] of max 3 with min_tokens=2: the EOS held back at token 1 stays in the output,
    so the 3rd token is the last allowed. An answer that checks a copy of the output without it counts 2."""
    try:
        _expect(
            fn,
            _req([2, PLAIN, PLAIN], max_new=3),
            2,
            "length",
            "output [EOS, ' ok', ' ok'] of max 3, min_tokens=2: the EOS at token 1 was held back, yet it stays in "
            "req.output_ids and counts toward the length limit like any token: the 3rd token is the last allowed",
            hint="'length' once len(req.output_ids) >= req.max_new_tokens, every output token counted",
        )
    except Mistake as e:
        if hides_held_back_eos(fn):
            e.args = (f"{e}; for 3 ' ok' tokens it returns 'length': its length test leaves out the held-back EOS",)
            e.hint = HIDDEN_EOS_LENGTH
        raise


def case_output_only(fn):
    long_prompt = "Please count slowly from one to twenty, one number per line, and say nothing else."
    assert len(_ids(long_prompt)) > 8, "setup: the prompt must be longer than min_tokens"
    _expect(
        fn,
        _req([PLAIN, 2], prompt=long_prompt),
        8,
        None,
        "min_tokens counts output tokens only (len(req.output_ids)), never the prompt: 2 of min 8",
    )


def case_ignore_eos(fn):
    _expect(
        fn,
        _req([PLAIN] * 3 + [2], ignore_eos=True),
        2,
        None,
        "min_tokens=2 is reached, but ignore_eos is set: an EOS still does not finish the request",
        hint="reaching min_tokens does not undo ignore_eos: with ignore_eos set, an EOS never finishes the request",
    )
    ids = _ids("one two three")
    _expect(
        fn,
        _req(ids, ignore_eos=True, stop=["two three"]),
        len(ids) + 1,
        None,
        f"ignore_eos is set and the stop string completes at output token {len(ids)}, one short of "
        f"min_tokens={len(ids) + 1}: stop strings wait for min_tokens with ignore_eos too (ignore_eos turns "
        "off the EOS test only, it does not turn off the min_tokens gate)",
        hint="keep the min_tokens gate when ignore_eos is set: below min_tokens it holds back the stop strings too",
    )
    _expect(
        fn,
        _req(ids, ignore_eos=True, stop=["two three"]),
        len(ids),
        "stop",
        "ignore_eos turns off the EOS test only: once min_tokens is reached, a stop string still finishes",
        hint="from min_tokens on, test the stop strings whatever ignore_eos says",
    )
    _expect(
        fn,
        _req([PLAIN] * 3 + [2]),
        2,
        "stop",
        "min_tokens=2 is reached and ignore_eos is not set: min_tokens is not an ignore_eos for the whole "
        "request, the EOS finishes now",
    )


def case_eos_ids_shared(fn):
    """The scheduler passes its one eos_ids set to every call, for every request: a call that holds an EOS
    back must leave that set as it was, so that the next request's EOS still finishes it."""
    held, after, later = one_set_two_requests(fn)
    if (held, later) == (None, "stop"):
        return
    what = (
        f"one eos_ids set {sorted(EOS)} passed to two calls, as the scheduler passes its own: request A (output "
        f"' ok' + the EOS 2, min_tokens=5) returned {held!r}, expected None; then request B (4 output tokens, the "
        f"newest the EOS 2, min_tokens=2) returned {later!r}, expected 'stop'"
    )
    changed = eos_ids_changed(fn) if after != sorted(EOS) else None
    if changed is not None:  # the same on a call of its own: the set itself was changed by the held-back call
        raise Mistake(
            f"{what}. Your check_finish_min_tokens changed the set it was given: {sorted(EOS)} before the call for "
            f"request A, {changed} after it, and request B was checked against what was left of it",
            EOS_IDS_CHANGED,
        )
    raise Mistake(what, "the answer depends on req and the arguments alone: the same eos_ids set comes every call")


# Per request: its min_tokens. Request 0 samples an EOS early (after 1-3 tokens with no min_tokens)
# and must go on to 8; request 1 would stop on "2 =" at once and must go on; request 2 asks for a
# minimum above max_tokens and ends by length.
ENGINE_PROMPTS = [
    [{"role": "user", "content": "Answer yes or no: is the sky blue?"}],
    [{"role": "user", "content": "What is 2+2? Reply with just the number."}],
    [{"role": "user", "content": "What is the capital of France?"}],
]
ENGINE_PARAMS = [
    SamplingParams(max_tokens=12),
    SamplingParams(max_tokens=12, stop=["2 ="]),
    SamplingParams(max_tokens=4),
]
ENGINE_MIN = [8, 6, 20]


def _run(fn):
    def finish_fn(req, eos_ids, decode=None):
        return fn(req, eos_ids, decode, ENGINE_MIN[req.uid])

    return run_requests(ENGINE_PARAMS, ENGINE_PROMPTS, setup=lambda s: setattr(s, "finish_fn", finish_fn))


def case_real_engine(fn):
    fail_fast_if_stub(fn, set(EOS), _decode, 1)
    ref = remember("finish_min_tokens", lambda: _run(reference_min_tokens))
    plain = remember("finish_min_tokens:without", lambda: run_requests(ENGINE_PARAMS, ENGINE_PROMPTS))
    assert [len(plain.tokens[u]) < ENGINE_MIN[u] for u in range(2)] == [True, True], (
        "setup: without min_tokens, requests 0 and 1 should finish before their minimum"
    )
    got = _run(fn)
    for uid in range(len(ENGINE_PROMPTS)):
        where = (
            f"request {uid} (min_tokens={ENGINE_MIN[uid]}, max_tokens={ENGINE_PARAMS[uid].max_tokens}, "
            f"stop={ENGINE_PARAMS[uid].stop or []})"
        )
        assert got.reasons.get(uid) == ref.reasons[uid] and len(got.tokens.get(uid, [])) == len(ref.tokens[uid]), (
            f"{where}: finished with {got.reasons.get(uid)!r} after {len(got.tokens.get(uid, []))} tokens; "
            f"expected {ref.reasons[uid]!r} after {len(ref.tokens[uid])} (without min_tokens it stopped after "
            f"{len(plain.tokens[uid])})"
        )
        assert got.tokens[uid] == ref.tokens[uid], f"{where}: different tokens from the reference"


CASES = [
    Case("stretch: EOS waits for min_tokens", case_eos_waits, "while len(req.output_ids) < min_tokens, ignore EOS"),
    Case("stretch: the min_tokens-th token counts", case_boundary, "< min_tokens holds back, == min_tokens does not"),
    Case("stretch: stop strings wait too", case_stop_waits, "hold back the stop-string test as well as EOS"),
    Case(
        "stretch: max_tokens still ends it",
        case_length_still_ends,
        "below min_tokens only the length limit can finish the request; test it whether or not min_tokens is reached",
    ),
    Case("stretch: output tokens only", case_output_only, "len(req.output_ids), not the prompt's length"),
    Case(
        "stretch: with ignore_eos",
        case_ignore_eos,
        "min_tokens and ignore_eos are two separate rules: from min_tokens on, check_finish's rules decide unchanged",
    ),
    Case(
        "stretch: one eos_ids set for every request",
        case_eos_ids_shared,
        "eos_ids is the scheduler's set, the same for every request: only read it",
    ),
    Case(
        "stretch: in the real engine",
        case_real_engine,
        "the scheduler calls your function after every token, with each request's min_tokens",
        engine=True,
    ),
    finish_case(reference_min_tokens, stretch=True),
]
SYMBOL = "check_finish_min_tokens"
SOLUTION = reference_min_tokens
REFERENCES = [package_check_finish]  # the base part's package answer is not an answer here either
