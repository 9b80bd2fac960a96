"""The state of one request and of one batch.

Where this sits on the request path: the tokenizer turns a prompt into a `UserMsg`; the scheduler
turns each `UserMsg` into a `Req` and groups `Req`s into a `Batch`, which the engine runs. Every
other module passes these objects around, so they are kept small and plain.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Optional, Protocol

if TYPE_CHECKING:  # only for the annotations: core.py imports nothing heavy, and nothing of ours
    import torch


MAX_TOP_LOGPROBS = 20  # OpenAI's limit
# repetition_penalty: SGLang's upper bound (2). SGLang's lower bound, 0, divides the logits by zero;
# a tiny value such as 1e-300 is 0 in float32 and does the same (inf logits, garbage tokens). 0.01
# already multiplies every repeated token's positive logit by 100, so no useful value lies below it.
MIN_REPETITION_PENALTY = 0.01
MAX_REPETITION_PENALTY = 2.0


@dataclass
class SamplingParams:
    """How to pick each next token and when to stop (the fields an OpenAI request carries)."""

    max_tokens: int = 128
    temperature: float = 0.0  # 0 means greedy (argmax)
    top_k: int = -1  # -1 (or 0) means no top-k filter
    top_p: float = 1.0
    ignore_eos: bool = False
    stop: list[str] = field(default_factory=list)
    seed: Optional[int] = None
    # The logits chain (engine/logits_chain.py) applies these, in this order, before sampling.
    repetition_penalty: float = 1.0  # SGLang/vLLM: over prompt and output tokens; 1 means off
    frequency_penalty: float = 0.0  # OpenAI: minus this times the token's count in the output
    presence_penalty: float = 0.0  # OpenAI: minus this once for every token already in the output
    logit_bias: dict[int, float] = field(default_factory=dict)  # token id -> added to its logit
    # Structured output: at most one; XGrammar compiles it (engine/grammar.py) and masks every step.
    json_schema: Optional[str] = None  # a JSON schema, as text
    regex: Optional[str] = None
    ebnf: Optional[str] = None
    # Log-probabilities of the model's raw distribution (before the chain), for the sampled token
    # and the `top_logprobs` most likely ones.
    logprobs: bool = False
    top_logprobs: int = 0
    n: int = 1  # answers to the same prompt: the front end sends n requests that share its pages

    def __post_init__(self) -> None:
        if isinstance(self.stop, str):
            self.stop = [self.stop]
        self.stop = [s for s in (self.stop or []) if s]
        if self.top_k == 0:
            self.top_k = -1
        # Keys arrive as strings from JSON; the codec carries them as ints.
        self.logit_bias = {int(k): float(v) for k, v in (self.logit_bias or {}).items()}

    @property
    def is_greedy(self) -> bool:
        return self.temperature <= 0.0 or self.top_k == 1

    def validate(self) -> None:
        """Raise ValueError with a message that can go back to the client unchanged."""
        if self.max_tokens < 1:
            raise ValueError("max_tokens must be at least 1")
        if self.temperature < 0:
            raise ValueError("temperature must be non-negative")
        if not (0.0 < self.top_p <= 1.0):
            raise ValueError("top_p must be in (0, 1]")
        if self.top_k < -1:
            raise ValueError("top_k must be -1 (off) or a positive integer")
        if not (MIN_REPETITION_PENALTY <= self.repetition_penalty <= MAX_REPETITION_PENALTY):
            raise ValueError(f"repetition_penalty must be in [{MIN_REPETITION_PENALTY}, {MAX_REPETITION_PENALTY}]")
        for name in ("frequency_penalty", "presence_penalty"):
            if not (-2.0 <= getattr(self, name) <= 2.0):
                raise ValueError(f"{name} must be between -2 and 2")
        if any(not (-100.0 <= b <= 100.0) for b in self.logit_bias.values()):
            raise ValueError("logit_bias values must be between -100 and 100")
        if any(t < 0 for t in self.logit_bias):
            raise ValueError("logit_bias keys must be token ids (non-negative integers)")
        if sum(x is not None for x in (self.json_schema, self.regex, self.ebnf)) > 1:
            raise ValueError("give at most one of json_schema, regex and ebnf")
        if not (0 <= self.top_logprobs <= MAX_TOP_LOGPROBS):
            raise ValueError(f"top_logprobs must be between 0 and {MAX_TOP_LOGPROBS}")
        if self.n < 1:
            raise ValueError("n must be at least 1")

    @property
    def has_penalties(self) -> bool:
        return self.repetition_penalty != 1.0 or self.frequency_penalty != 0.0 or self.presence_penalty != 0.0

    @property
    def grammar_spec(self) -> Optional[tuple[str, str]]:
        """("json_schema" | "regex" | "ebnf", its text), or None without structured output."""
        for kind in ("json_schema", "regex", "ebnf"):
            if getattr(self, kind) is not None:
                return kind, getattr(self, kind)
        return None


# --- what features hang on a request ----------------------------------------------------------
# The data model sits below every other module, so it names the state that features keep on a
# request by small types of its own; the features (a grammar, the prefix cache, the speculator)
# fill them in. Nothing here imports the modules that do.


class TokenMask(Protocol):
    """A request's grammar, as the engine and the scheduler use it (`engine/grammar.py` `Grammar`)."""

    def fill_mask(self, bitmask: torch.Tensor, row: int) -> None:
        """Write the tokens allowed next into row `row` of `bitmask` (one bit per token)."""

    def accept(self, token: int) -> bool:
        """Advance by the sampled token; False if it was not allowed."""

    @property
    def is_terminated(self) -> bool:
        """The grammar is complete (it has accepted its end)."""


class CacheHandle(Protocol):
    """What a request holds in the prefix cache: the node it has locked (`kvcache/radix_cache.py`
    `RadixNode`). Only `kvcache/` makes, locks and unlocks one; to everyone else it is opaque."""


@dataclass
class DraftState:
    """(speculative decoding) The speculator's state for one request (`scheduler/speculator.py`):
    its back-off (drafts that keep failing cost verify positions for nothing, so the request
    pauses them) and its newest n-gram lookup (the overlap loop asks for it twice in a step)."""

    misses: int = 0  # verifies in a row that accepted no draft
    pause: int = 0  # decode steps left in which the request proposes none
    looked_up_at: int = -1  # the request's token count at its newest lookup
    found: list[int] = field(default_factory=list)  # the drafts that lookup found


class ReqStatus(enum.Enum):
    WAITING = "waiting"  # in the prefill queue, no KV computed yet
    PREFILLING = "prefilling"  # part of its prompt is in the cache (chunked prefill)
    DECODING = "decoding"  # prompt done, one new token per step
    FINISHED = "finished"


@dataclass
class Req:
    """One request inside the scheduler.

    `cached_len` counts the tokens whose K/V already sit in the paged cache; the tokens after it
    are what the next forward pass must compute. `table_idx` is the request's row in the page
    table, held from admission until the request finishes or is aborted.
    """

    uid: int
    input_ids: list[int]
    sampling_params: SamplingParams
    output_ids: list[int] = field(default_factory=list)
    status: ReqStatus = ReqStatus.WAITING
    table_idx: int = -1
    cached_len: int = 0  # tokens with K/V in the cache (prefix hits included)
    prefix_len: int = 0  # of which reused from the prefix cache
    max_new_tokens: int = 0  # max_tokens after clamping to the context
    finish_reason: Optional[str] = None  # "stop" | "length" | "abort"
    stop_str: Optional[str] = None  # the stop string that ended it, if any
    cache_handle: Optional[CacheHandle] = None  # the prefix-cache node this request has locked
    generator: Optional[torch.Generator] = None  # for seeded sampling
    arrived_at: float = 0.0  # time.monotonic() when the scheduler queued it
    queue_seconds: Optional[float] = None  # arrival -> first scheduled in a batch (None until then)
    stamps: Optional[dict[str, float]] = None  # (server) its path to the first token, sent with it (message/stamps.py)
    grammar: Optional[TokenMask] = None  # structured output: the matcher that masks each next token
    # (n > 1, scheduler/prompt_sharing.py) The request whose prompt pages this one waits for: it is
    # admitted after that one's prefill, so it finds the prompt in the prefix cache.
    prompt_leader: Optional[Req] = None
    shares_prompt: bool = False  # (n > 1, the leader) its prompt goes to the prefix cache after prefill
    shared_len: int = 0  # tokens at the start of its row whose pages it handed to the prefix cache
    # (speculative decoding) The speculator's back-off after drafts that failed; None until its
    # first verify.
    draft_state: Optional[DraftState] = None

    @property
    def all_ids(self) -> list[int]:
        return self.input_ids + self.output_ids

    @property
    def total_len(self) -> int:
        return len(self.input_ids) + len(self.output_ids)

    @property
    def remaining_prompt(self) -> int:
        """Prompt tokens not yet in the cache (0 once the prefill is done)."""
        return max(len(self.input_ids) - self.cached_len, 0)

    @property
    def is_finished(self) -> bool:
        return self.status == ReqStatus.FINISHED


@dataclass
class ScheduledReq:
    """One request's share of a batch: which tokens it contributes this step."""

    req: Req
    start: int  # position of the first token computed this step
    num_tokens: int  # tokens computed this step (1 for decode, a chunk for prefill, 1 + drafts to verify)
    # (speculative decoding) Guessed next tokens, computed after the newest one in the same pass.
    draft: list[int] = field(default_factory=list)

    @property
    def end(self) -> int:
        return self.start + self.num_tokens

    @property
    def input_ids(self) -> list[int]:
        """The tokens this step feeds the model: known tokens, then the drafts (if any)."""
        known = self.req.all_ids[self.start : self.end - len(self.draft)]
        return known + self.draft if self.draft else known

    @property
    def completes_prompt(self) -> bool:
        """True when this step reaches the end of the known tokens, so a new token is sampled."""
        return self.end >= self.req.total_len

    @property
    def is_decode(self) -> bool:
        """A decode token (the K/V of the newest generated token), not a prompt chunk.

        Told by position: a prompt chunk always starts inside the prompt (at least one prompt
        token is left to compute, even after a prefix-cache hit), a decode token after it.
        """
        return self.start >= len(self.req.input_ids)


@dataclass
class Batch:
    """What one forward pass computes: prompt chunks ("prefill"), one decode token per running
    request ("decode"), or, with `SchedulerConfig.mixed_chunk`, both at once ("mixed"). With
    speculative decoding, a decode batch in which some requests also carry drafts is "verify".

    In a mixed batch the prompt chunks come first, then the decode tokens; `ScheduledReq.is_decode`
    tells them apart.
    """

    phase: str  # "prefill" | "decode" | "mixed" | "verify"
    items: list[ScheduledReq]
    batch_id: int = 0

    @property
    def has_drafts(self) -> bool:
        return any(it.draft for it in self.items)

    @property
    def reqs(self) -> list[Req]:
        return [it.req for it in self.items]

    @property
    def is_prefill(self) -> bool:
        """Only prompt chunks (a mixed batch is not a prefill batch: ask each item)."""
        return self.phase == "prefill"

    @property
    def is_decode(self) -> bool:
        """Only decode tokens, one per request: what a CUDA graph of decode can replay."""
        return self.phase == "decode"

    @property
    def num_tokens(self) -> int:
        return sum(it.num_tokens for it in self.items)

    def without_finished(self) -> Optional[Batch]:
        """This batch less the items whose request finished or was aborted since it was scheduled
        (None when nothing is left to run)."""
        live = [it for it in self.items if not it.req.is_finished]
        return Batch(self.phase, live, self.batch_id) if live else None

    @property
    def size(self) -> int:
        return len(self.items)
