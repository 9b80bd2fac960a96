"""What the generated scenes of the scheduling and abort exercises share: a scheduler built from
plain data, and the requests that arrive at it.

Where this sits in the course: the generated phase (grading/explore.py) of exercises 2 (`abort`,
`abort_to_cache`) and 5 (`schedule`, `schedule_lpm`). Their scenes are plain data (sizes, token
families, arrival steps, operations) from which `build` makes a fresh scheduler on the shared
engine without running the model (fixtures.modelless): a token budget, a limit on admitted
requests, the radix or the naive cache, a small pool (the rest of the pages locked away as
ballast), prefixes that earlier requests left in the prefix cache, and requests whose prompts
share those prefixes (or each other's), arriving before given steps.

`SceneHints` maps a field's kind to its hint, where a field is named "<when>: <kind>" (the
generated cases observe the same kinds after each step or abort).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Optional

from hypothesis import strategies as st

from minisgl_edu.core import SamplingParams
from minisgl_edu.grading.fixtures import ballast, cached, modelless, token_ids
from minisgl_edu.scheduler import Scheduler

PAGE_SIZE = 4  # the grading engine's (harness.GRADING_CONFIG)
POOL = 256
FAMILY_TOKENS = 40  # tokens of a shared prefix family: a system prompt, a conversation so far


def family(f: int) -> list[int]:
    """The tokens of prefix family `f`: prompts that start alike share them."""
    return token_ids(FAMILY_TOKENS, 300 + f)


@dataclass(frozen=True)
class ReqSpec:
    uid: int
    arrive: int  # added before this step (0: before the first)
    family: int  # -1: none
    shared: int  # leading tokens of its family
    own: int  # tokens of its own after them
    max_tokens: int

    def prompt(self) -> list[int]:
        head = family(self.family)[: self.shared] if self.family >= 0 else []
        return head + token_ids(self.own, 500 + self.uid)

    @property
    def stop(self) -> list[str]:
        """Stop strings (that never match): every other request has one, so that messages carry them."""
        return [f"<stop {self.uid}>"] if self.uid % 2 else []

    def describe(self) -> str:
        head = f"{self.shared} tokens of family {self.family} + " if self.family >= 0 and self.shared else ""
        when = "at the start" if self.arrive == 0 else f"before step {self.arrive + 1}"
        stop = f", stop={self.stop}" if self.stop else ""
        return (
            f"uid {self.uid}: prompt {head}{self.own} own token(s), max_tokens={self.max_tokens}{stop}, arrives {when}"
        )


@dataclass(frozen=True)
class Setup:
    cache: str  # "radix" | "naive"
    budget: int  # max_prefill_tokens
    max_running: int
    spare: Optional[int]  # pages available to the requests (the rest is ballast); None: the whole pool
    cached: tuple[tuple[int, int], ...]  # (family, pages) in the prefix cache before any request

    def describe(self) -> str:
        pool = f"{self.spare} of the {POOL} pages" if self.spare is not None else f"all {POOL} pages"
        pool += " (free or evictable)"
        lines = [
            f"  cache={self.cache!r}, token budget (max_prefill_tokens)={self.budget}, "
            f"max_running={self.max_running}, pages of {PAGE_SIZE} tokens, {pool} for these requests"
        ]
        for f, n in self.cached:
            lines.append(f"  in the prefix cache at the start: the first {n} page(s) of family {f} (unlocked)")
        return "\n".join(lines)


@st.composite
def setups(draw: Any, budgets=(1, 24), pressure: bool = True) -> Setup:
    cache = draw(st.sampled_from(["radix", "radix", "radix", "naive"]))
    radix = cache == "radix"
    # at least 16 pages (64 tokens): every prompt fits alone, as add_request promises the scheduler
    spare = draw(st.one_of(st.none(), st.integers(16, 48))) if radix and pressure else None
    cached_ = ()
    if radix:
        n = draw(st.sampled_from([0, 1, 1, 2, 2]))
        cached_ = tuple((f, draw(st.integers(1, FAMILY_TOKENS // PAGE_SIZE))) for f in range(n))
    return Setup(
        cache=cache,
        budget=draw(st.integers(*budgets)),
        max_running=draw(st.integers(1, 4)),
        spare=spare,
        cached=cached_,
    )


@st.composite
def request_specs(
    draw: Any, n: int, spare: Optional[int] = None, arrive_by: int = 4, long_runs: bool = False
) -> list[ReqSpec]:
    """`n` requests: prompts of their own or starting with a family's tokens (whole pages of it,
    or ending inside a page), arriving at the start or before a later step; each fits alone in
    `spare` pages (None: the whole pool, where 2000 tokens are clamped to the context)."""
    specs = []
    for uid in range(n):
        fam = draw(st.sampled_from([-1, 0, 0, 0, 1]))
        shared = draw(st.integers(0, FAMILY_TOKENS)) if fam >= 0 else 0
        own = draw(st.integers(0 if shared else 1, 14))
        top = 60 if long_runs else 12
        specs.append(
            ReqSpec(
                uid=uid,
                arrive=draw(st.integers(0, arrive_by)),
                family=fam if shared else -1,
                shared=shared,
                own=own,
                max_tokens=draw(st.one_of(st.integers(1, top), st.just(2000)))
                if long_runs
                else draw(st.integers(1, top)),
            )
        )
    return specs


def build(setup: Setup) -> Scheduler:
    """A fresh scheduler in the setup's state, no request yet."""
    s = modelless(cache=setup.cache, max_prefill_tokens=setup.budget, max_running_requests=setup.max_running)
    for f, n in setup.cached:
        cached(s, family(f)[: n * PAGE_SIZE])
    if setup.spare is not None:
        # free plus evictable (the cached families) make `spare` available
        ballast(s, min(s.cache.num_available - setup.spare, s.cache.num_free))
    return s


def arrive(s: Scheduler, specs: list[ReqSpec], step: int) -> None:
    """Add the requests that arrive before step `step + 1` (0: at the start)."""
    for spec in specs:
        if spec.arrive == step:
            params = SamplingParams(max_tokens=spec.max_tokens, ignore_eos=True, stop=spec.stop)
            req = s.add_request(spec.uid, spec.prompt(), params)
            assert req is not None, f"setup: request {spec.uid} was rejected"


def items_of(batch: Any) -> Any:
    """A batch as plain data: (phase, [(uid, start, num_tokens), ...]), None for None."""
    if batch is None:
        return None
    return batch.phase, [(it.req.uid, it.start, it.num_tokens) for it in batch.items]


def show_items(items: Any) -> str:
    if items is None:
        return "no batch (None)"
    phase, its = items
    return f"a {phase} batch [" + ", ".join(f"uid {u}: {n} tok from {st}" for u, st, n in its) + "]"


def consistent(s: Scheduler) -> str:
    """cache.check() as an observable: "holds", or what it found."""
    try:
        s.cache.check()
    except AssertionError as e:
        return f"fails: {e}"
    return "holds"


class SceneHints(dict):
    """Hints by a field's kind: the field "after abort 1 (uid 3): free pages" gets the hint of
    "free pages". explore.search looks hints up with `get`."""

    def get(self, field: str, default: Any = "") -> Any:
        kind = field.split(": ", 1)[-1]
        return super().get(kind, super().get(field, default))
