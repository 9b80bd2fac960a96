"""Exercise 8's engine cases: the student's `verify_step` plugged into the real scheduler
(`Scheduler.verify_fn`) with speculation on, on a tiny random-weight model (milliseconds a step).

Three scenarios: the scheduler's own n-gram drafts; drafts the grader proposes (the answer without
drafts, changed at a seeded place, so that every number of accepted drafts happens); EOS, stop
strings and `max_tokens` falling inside accepted runs. Each compares the tokens with a run without
drafts, checks the cache after every step, the pages at the end and the prefix cache, runs the same
prompts again on the cached prefixes, and compares every verify result with the package's on the
same input. The grader's drafts go in through `speculator.drafts`, the scheduler's drafting hook.
"""

from __future__ import annotations

import random
import traceback
from dataclasses import dataclass, field
from typing import Callable, Optional

from minisgl_edu.core import SamplingParams
from minisgl_edu.grading.core import Mistake
from minisgl_edu.grading.harness import new_scheduler, remember, tiny_model
from minisgl_edu.grading.verify.requests import PAGE, _as_result, _call, _copy, _decode, _req, _w
from minisgl_edu.grading.verify.step import describe, diagnose
from minisgl_edu.grading.verify.true_division import naming_float_pages
from minisgl_edu.kvcache.manager import pages_for
from minisgl_edu.scheduler import verify_step as step_module
from minisgl_edu.scheduler.verify_step import VerifyRequest
from minisgl_edu.scheduler.verify_step import verify_step as package_step

K = 8  # drafts per verify in the engine cases (4 positions a page: the rejected ones span up to 3 pages)
SPEC = dict(speculative_algorithm="ngram", speculative_num_draft_tokens=K)


def _prompt(seed: int, n: int, repeat: bool) -> list[int]:
    rng = random.Random(seed)
    if not repeat:
        return [rng.randrange(100, 40000) for _ in range(n)]
    phrase = [rng.randrange(100, 40000) for _ in range(rng.randrange(3, 8))]
    return (phrase * (n // len(phrase) + 1))[:n]


NGRAM_PROMPTS = [_prompt(seed, n, True) for seed, n in enumerate([9, 23, 40, 64, 5, 31])]
PLAIN_PROMPTS = [_prompt(100 + seed, n, False) for seed, n in enumerate([12, 17, 21, 26, 9])]


@dataclass
class Scenario:
    prompts: list[list[int]]
    params: list[SamplingParams]
    eos_ids: Optional[set[int]] = None  # replaces the scheduler's EOS ids (both runs)
    drafts: Optional[str] = None  # None: the scheduler's n-gram drafts; "seeded" or "right": the grader's
    draft_from: dict[int, list[int]] = field(default_factory=dict)  # uid -> the answer the grader drafts from


@dataclass
class Call:
    req: VerifyRequest
    drafts: list[int]
    targets: list[int]
    result: object = None  # what the function returned


@dataclass
class EngineRun:
    tokens: dict[int, list[int]] = field(default_factory=dict)
    reasons: dict[int, Optional[str]] = field(default_factory=dict)
    calls: list[Call] = field(default_factory=list)
    problem: Optional[str] = None  # the first broken rule after a step, if any
    cached: set[tuple[int, ...]] = field(default_factory=set)  # the prefix cache's sequences at the end
    again: dict[int, list[int]] = field(default_factory=dict)  # the same prompts once more, on the cache
    fn: Optional[Callable] = None  # the verify step it ran, tried on small steps to name a mistake


class _StudentRaised(Exception):
    pass


def _drafter(s, answers: dict[int, list[int]], how: str, uid_of: Callable[[int], int]):
    """Drafts the grader proposes in place of the n-gram lookup: what the request says without
    drafts and without finishing early (`answers`), capped as the scheduler caps them, with one
    token changed at a seeded place ("seeded", so every number of accepted drafts happens) or
    unchanged ("right")."""

    def draft(req) -> list[int]:
        have = len(req.output_ids)
        room = min(K, req.max_new_tokens - have - 1)
        follow = list(answers[uid_of(req.uid)][have : have + max(room, 0)])
        if how == "seeded" and follow:
            at = random.Random(1000 * req.uid + have).randrange(len(follow) + 1)
            if at < len(follow):
                follow[at] = follow[at] + 1 if follow[at] + 1 < 40000 else 100
        return follow

    s.speculator.drafts = draft  # an instance attribute: `_schedule_decode` calls speculator.drafts(req)


def _run(fn, scenario: Scenario, again: bool = False) -> EngineRun:
    """The scenario with speculation on and `fn` as the verify step (None: no speculation, the
    reference). With `again`, the same prompts once more afterwards, on the prefix cache."""
    run = EngineRun(fn=fn)
    s = new_scheduler(model=tiny_model(), **(SPEC if fn is not None else {}))
    if scenario.eos_ids is not None:  # in place: the scheduler's parts share this one set
        s.eos_ids.clear()
        s.eos_ids.update(scenario.eos_ids)
    n = len(scenario.prompts)
    if fn is not None:

        def recorded(req, drafts, targets):
            call = Call(_copy(req), list(drafts), list(targets))
            run.calls.append(call)
            try:
                call.result = fn(req, drafts, targets)
            except Exception as e:
                raise _StudentRaised() from e
            return call.result

        s.verify_fn = recorded
        if scenario.drafts is not None:
            _drafter(s, scenario.draft_from, scenario.drafts, lambda uid: uid % n)
    for base in [0, n] if again else [0]:
        for i, (prompt, sp) in enumerate(zip(scenario.prompts, scenario.params)):
            s.add_request(base + i, list(prompt), sp)
        steps = 0
        while not s.is_idle:
            try:
                s.step()
            except _StudentRaised as e:
                raise e.__cause__ from None  # the student's own error, with their line
            except Exception as e:
                where = traceback.extract_tb(e.__traceback__)[-1].name
                _fail(f"after your verify step, the engine failed in {where}(): {type(e).__name__}: {e}", run)
            steps += 1
            if steps > 2000:
                _fail("the requests never finished (does every verify step give at least one token?)", run)
            run.problem = _after_step(s)
            if run.problem:
                return run
        for msg in s.io.drain():
            out = run.tokens if msg.uid < n else run.again
            out.setdefault(msg.uid % n, [])
            if msg.next_token >= 0:
                out[msg.uid % n].append(msg.next_token)
            if msg.finished and msg.uid < n:
                run.reasons[msg.uid] = msg.finish_reason
        if base == 0:
            run.problem = _at_the_end(s)
            run.cached = s.cache.prefix_cache.sequences()
            if run.problem:
                return run
    return run


def _after_step(s) -> Optional[str]:
    try:
        s.cache.check()
    except AssertionError as e:
        return f"the cache's bookkeeping is broken after a step: {e}"
    ps = s.cache.page_size
    for req in s.running:
        held, total = s.cache.held_pages(req), req.total_len
        if held > pages_for(total, ps):
            return (
                f"after a step, request {req.uid} has {total} tokens (pages for {pages_for(total, ps)}) but still "
                f"holds {held} pages: the pages of its rejected drafts were not given back"
            )
        if held < pages_for(total - 1, ps):
            return (
                f"after a step, request {req.uid} has {total} tokens but holds only {held} pages: a page that "
                f"still held K/V of its tokens was given back (positions 0..{total - 2} need "
                f"{pages_for(total - 1, ps)} pages)"
            )
        if req.cached_len != total - 1:
            return (
                f"after a step, request {req.uid} has {total} tokens and cached_len {req.cached_len} (your kv_len): "
                f"the K/V of all but its newest token is valid, {total - 1} positions"
            )
    return None


def _at_the_end(s) -> Optional[str]:
    cache = s.cache
    if cache.page_table.used_rows():
        return "a page-table row is still in use after every request finished"
    if cache.num_available != cache.num_pages:
        return f"{cache.num_pages - cache.num_available} page(s) are neither free nor in the prefix cache at the end"
    return None


def _first_wrong_call(calls: list[Call], fn=None) -> tuple[Optional[str], str]:
    """The first verify step where the student's result is not the package's on the same input, and the
    hint for the mistake it shows ("" when none is named); (None, "") when every step is right (`fn`: the
    answer, tried on small steps where one step cannot tell two mistakes apart)."""
    for i, call in enumerate(calls):
        want = package_step(_copy(call.req), list(call.drafts), list(call.targets))
        try:
            got = _as_result(call.result, call.drafts, call.targets)
        except AssertionError as e:
            return f"verify {i + 1} of the run: {e}", getattr(e, "hint", "")
        if got != want:
            why, hint = diagnose(got, want, call.req, call.drafts, call.targets, fn=fn)
            return (
                f"verify {i + 1} of the run ({describe(call.req, call.drafts, call.targets, words=False)}): {why}",
                hint,
            )
    return None, ""


def _fail(what: str, run: EngineRun) -> None:
    """Fail the case on `what` the run shows, with the first wrong verify step and the hint for its mistake
    (the case's own hint when no mistake is named)."""
    wrong, hint = _first_wrong_call(run.calls, run.fn)
    raise Mistake(
        f"{what}. The first verify where your function differs from the package's: {wrong}" if wrong else what, hint
    )


def _compare(got: EngineRun, ref: EngineRun, scenario: Scenario, again: bool) -> None:
    if got.problem:
        _fail(got.problem, got)
    for uid in range(len(scenario.prompts)):
        mine, theirs = got.tokens.get(uid, []), ref.tokens[uid]
        for i, (a, b) in enumerate(zip(mine, theirs)):
            if a != b:
                _fail(f"request {uid}: token {i} is {a}, without drafts it is {b}", got)
        if len(mine) != len(theirs) or got.reasons.get(uid) != ref.reasons[uid]:
            _fail(
                f"request {uid}: {len(mine)} tokens, finish {got.reasons.get(uid)!r}; without drafts "
                f"{len(theirs)} tokens, finish {ref.reasons[uid]!r}",
                got,
            )
    if got.cached != ref.cached:
        extra = sorted(got.cached - ref.cached, key=len)
        _fail(
            "at the end the prefix cache holds other tokens than after the run without drafts"
            + (f" (e.g. a sequence of {len(extra[0])} tokens)" if extra else "")
            + ": it takes req.cached_len tokens (your kv_len) of a finished request",
            got,
        )
    if again:
        for uid in range(len(scenario.prompts)):
            if got.again.get(uid) != ref.tokens[uid]:
                _fail(
                    f"the same prompts once more, now on the prefix cache's pages: request {uid} gives other tokens "
                    "(K/V in the cache or in the pages the request kept was wrong)",
                    got,
                )
    wrong, hint = _first_wrong_call(got.calls, got.fn)
    if wrong:
        # Say only what the run did show: a wrong free_pages or kv_len in the step that finishes a
        # request leaves no trace (all its pages go back, or to the prefix cache, when it finishes).
        raise Mistake(
            "the requests' tokens and finish reasons equal the run without drafts and the cache's checks held "
            "after every step, but a verify result was not the package's (a mistake this run's output does not "
            "show: a field of the step that finished a request, fewer tokens in a step, or a finish that the "
            f"scheduler's own check of each token it appends caught): {wrong}",
            hint,
        )


def reference_run(key: str, scenario: Callable[[], Scenario]) -> tuple[Scenario, EngineRun]:
    """The scenario and its run without speculation, computed once per process (untimed)."""
    sc = remember(f"verify/{key}/scenario", scenario)
    return sc, remember(f"verify/{key}", lambda: _run(None, sc))


def _engine_case(fn, key: str, scenario: Callable[[], Scenario], again: bool, reasons=None) -> None:
    one, two, three = _w(" one", " two", " three")
    req, drafts, targets = _req([one], 1), [two], [two, three]
    with naming_float_pages(fn, req, drafts, targets):
        _call(fn, req, drafts, targets)  # an unfinished stub fails here, before the engine runs
    sc, ref = reference_run(key, scenario)
    if reasons is not None:
        assert [ref.reasons[u] for u in range(len(reasons))] == reasons, f"setup: the reference finished {ref.reasons}"
    _compare(_run(fn, sc, again=again), ref, sc, again)


GREEDY = SamplingParams(max_tokens=32, ignore_eos=True)


def ngram_scenario() -> Scenario:
    return Scenario(NGRAM_PROMPTS, [GREEDY] * len(NGRAM_PROMPTS))


def _answers(prompts: list[list[int]], max_tokens: int = 32) -> dict[int, list[int]]:
    """Each prompt's greedy answer without drafts, EOS ignored."""
    sp = SamplingParams(max_tokens=max_tokens, ignore_eos=True)
    return _run(None, Scenario(prompts, [sp] * len(prompts))).tokens


def seeded_scenario() -> Scenario:
    return Scenario(PLAIN_PROMPTS, [GREEDY] * len(PLAIN_PROMPTS), drafts="seeded", draft_from=_answers(PLAIN_PROMPTS))


def _runs(max_new: int) -> list[list[int]]:
    """Output indices by step when every draft is right: token 0 from the prefill, then runs of up
    to K drafts and the model's token, the drafts capped by the room left."""
    runs, have = [[0]], 1
    while have < max_new:
        n = min(K, max_new - have - 1) + 1
        runs.append(list(range(have, have + n)))
        have += n
    return runs


def finish_scenario() -> Scenario:
    """EOS, stop strings and max_tokens inside accepted runs, on the grader's right drafts:
    request 0 stops on an EOS that is an accepted draft, request 1 (the same prompt, ignore_eos)
    goes past it, requests 2 and 3 stop on stop strings that span two accepted tokens (3's begins in
    the previous step's last token), request 4 ends on max_tokens with the model's token."""
    base = _answers(PLAIN_PROMPTS)
    mid = [i for run in _runs(GREEDY.max_tokens)[1:] for i in run[1:-1]]  # inside a run: a token follows
    eos_at = next(i for i in mid if base[0][i] not in base[0][:i])
    eos = base[0][eos_at]
    stops = []
    for uid, spans_runs in ((2, False), (3, True)):
        starts = [run[-1] for run in _runs(GREEDY.max_tokens)[1:-1]] if spans_runs else mid
        stops.append(_stop_at(base[uid], starts, eos))
    params = [
        SamplingParams(max_tokens=32),
        SamplingParams(max_tokens=32, ignore_eos=True),
        SamplingParams(max_tokens=32, ignore_eos=True, stop=[stops[0]]),
        SamplingParams(max_tokens=32, ignore_eos=True, stop=[stops[1]]),
        SamplingParams(max_tokens=13, ignore_eos=True),  # runs 0 | 1..9 | 10..12: the 13th is the model's
    ]
    which = [0, 0, 2, 3, 4]
    prompts = [PLAIN_PROMPTS[i] for i in which]
    answers = {uid: base[i] for uid, i in enumerate(which)}
    return Scenario(prompts, params, eos_ids={eos}, drafts="right", draft_from=answers)


def _stop_at(tokens: list[int], starts: list[int], eos: int) -> str:
    """A stop string made of tokens[i] and tokens[i + 1] for the first i in `starts` where it first
    completes at i + 1 and spans both tokens."""
    for i in starts:
        if eos in tokens[: i + 2]:
            continue
        text, a, b = _decode(tokens[i : i + 2]), _decode(tokens[i : i + 1]), _decode(tokens[i + 1 : i + 2])
        if not a.strip() or not b.strip() or text != a + b:
            continue
        req = VerifyRequest(0, [], 99, set(), True, [text], _decode, [], PAGE)
        ends = [j for j in range(i + 2) if step_module._finish_reason(req, tokens[: j + 1]) == "stop"]
        if ends and ends[0] == i + 1:
            return text
    raise AssertionError("setup: no stop string spans two tokens of the reference answer")


def case_engine_ngram(fn):
    _engine_case(fn, "ngram", ngram_scenario, again=True)


def case_engine_seeded(fn):
    _engine_case(fn, "seeded", seeded_scenario, again=True)


def case_engine_finish(fn):
    _engine_case(fn, "finish", finish_scenario, again=False, reasons=["stop", "length", "stop", "stop", "length"])
