"""Exercise 8's unit inputs and the call of the answer on them: requests made by hand as the
scheduler would pass them (the default model's real tokenizer as `decode`, so a stop string spans
tokens; pages of 4 positions, with ids out of order as in a real row), and `_call`, which runs the
student's `verify_step` on copies of them and checks that it returned a `VerifyResult`.
"""

from __future__ import annotations

import dataclasses
from typing import Optional

from minisgl_edu.grading.core import Mistake
from minisgl_edu.grading.harness import tokenizer
from minisgl_edu.kvcache.manager import pages_for
from minisgl_edu.scheduler.verify_step import VerifyRequest, VerifyResult

EOS = {0, 2}  # SmolLM2's <|endoftext|> and <|im_end|>
PAGE = 4  # the page size of the unit cases and of the grading engine
FIELDS = ("accepted", "tokens", "finish_reason", "kv_len", "free_pages")


def _decode(ids: list[int]) -> str:
    """What the scheduler passes as `decode` (Scheduler._decode_tail)."""
    return tokenizer().decode(ids, skip_special_tokens=True)


def _id(word: str) -> int:
    ids = tokenizer().encode(word)
    assert len(ids) == 1, f"setup: {word!r} should be one token"
    return ids[0]


def _req(
    output: list[int],
    drafts: int,
    *,
    prompt_len: int = 10,
    max_new: int = 50,
    ignore_eos: bool = False,
    stop: tuple[str, ...] = (),
    prefix_len: int = 0,
    page_size: int = PAGE,
) -> VerifyRequest:
    """A request as the scheduler sees it before the step: pages reserved for its prompt, its
    output and `drafts` drafts (what `_schedule_decode` reserves), with page ids that are not in
    order, as in a real row."""
    held = pages_for(prompt_len + len(output) + drafts, page_size)
    pages = [(37 * i + 11) % 101 for i in range(held)]
    return VerifyRequest(
        prompt_len=prompt_len,
        output_ids=list(output),
        max_new_tokens=max_new,
        eos_ids=set(EOS),
        ignore_eos=ignore_eos,
        stop=list(stop),
        decode=_decode,
        pages=pages,
        page_size=page_size,
        prefix_len=prefix_len,
    )


def _copy(req: VerifyRequest) -> VerifyRequest:
    return dataclasses.replace(
        req, output_ids=list(req.output_ids), eos_ids=set(req.eos_ids), stop=list(req.stop), pages=list(req.pages)
    )


def _w(*words: str) -> list[int]:
    return [_id(w) for w in words]


ACCEPTED_AS_DRAFTS = (
    "accepted is the NUMBER of drafts the model agreed with (an int, n), not the list of those drafts "
    "(drafts[:n]): the speculator adds it to its acceptance counters"
)


def count_agreed(drafts: list[int], targets: list[int]) -> int:
    """How many drafts, from the first, equal their targets: the number the step accepts."""
    n = 0
    while n < len(drafts) and n < len(targets) and drafts[n] == targets[n]:
        n += 1
    return n


def _accepted_as_drafts(out, drafts: Optional[list[int]], targets: Optional[list[int]]) -> None:
    """Raise the mistake's own message where `accepted` is a list equal to drafts[:n], n the number of
    drafts the model agreed with on this step (at least one, so an empty list names nothing)."""
    value = getattr(out, "accepted", None)
    if drafts is None or targets is None or not isinstance(value, (list, tuple)):
        return
    n = count_agreed(drafts, targets)
    if n and list(value) == list(drafts[:n]):
        raise Mistake(
            f"VerifyResult.accepted must be an int, got {value!r}: the drafts the model accepted (drafts[:{n}]), "
            f"where accepted is their number, {n}",
            ACCEPTED_AS_DRAFTS,
        )


def _as_result(out, drafts: Optional[list[int]] = None, targets: Optional[list[int]] = None) -> VerifyResult:
    """The answer's result as a VerifyResult of plain ints, or an AssertionError that says which field has
    the wrong type (`drafts`, `targets`: the step's inputs, to name accepted given as the drafts' list)."""
    if out is None:
        raise AssertionError("verify_step returned None: return a VerifyResult(accepted, tokens, finish_reason, ...)")
    missing = [f for f in FIELDS if not hasattr(out, f)]
    if missing:
        raise AssertionError(
            f"verify_step must return a VerifyResult (fields {', '.join(FIELDS)}); got a {type(out).__name__} "
            f"without {', '.join(missing)}"
        )

    def ints(name):
        value = getattr(out, name)
        try:
            items = list(value)
            if all(int(x) == x for x in items):
                return [int(x) for x in items]
        except (TypeError, ValueError):
            pass
        raise AssertionError(f"VerifyResult.{name} must be a list of ints, got {value!r}")

    def one_int(name):
        value = getattr(out, name)
        if isinstance(value, bool) or not isinstance(value, int):
            raise AssertionError(f"VerifyResult.{name} must be an int, got {value!r}")
        return value

    _accepted_as_drafts(out, drafts, targets)
    reason = out.finish_reason
    if reason not in (None, "stop", "length"):
        raise AssertionError(f"VerifyResult.finish_reason must be None, 'stop' or 'length', got {reason!r}")
    return VerifyResult(one_int("accepted"), ints("tokens"), reason, one_int("kv_len"), ints("free_pages"))


def _as_from_a_tensor(ids: list[int]) -> list[int]:
    """The ids as the engine hands them over (`tensor.tolist()`): equal ints, each a new object (CPython
    shares one object per int only up to 256), so an answer that compares ids with `is` fails here too."""
    return [int(str(t)) for t in ids]


def _call(fn, req: VerifyRequest, drafts: list[int], targets: list[int]) -> VerifyResult:
    """The student's result on copies of the inputs (only the case that looks for it sees a change),
    with the targets as the engine gives them."""
    return _as_result(fn(_copy(req), list(drafts), _as_from_a_tensor(targets)), drafts, targets)
