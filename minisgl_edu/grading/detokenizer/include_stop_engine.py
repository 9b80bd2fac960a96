"""Exercise 3, stretch: the engine case. Real requests run through the scheduler, and its
`DetokenizeMsg`s are replayed through the detokenizer worker's own `DetokenizeManager`, with one
object of the student's class per request; what the client receives is compared with what the
stretch's reference (`reference_stop_keeping`) gives it.
"""

from __future__ import annotations

from minisgl_edu.core import SamplingParams
from minisgl_edu.grading.detokenizer.common import REPLACEMENT, _full, _piece
from minisgl_edu.grading.detokenizer.missed_stop import _stream
from minisgl_edu.grading.detokenizer.stop_keeping import reference_stop_keeping
from minisgl_edu.grading.harness import encode, new_scheduler, remember, tokenizer
from minisgl_edu.tokenizer.server import DetokenizeManager, _DetokState

# Per request: its prompt, its stop strings and include_stop_str_in_output. Request 0 stops inside
# the token ' welcome'; in request 1 the token ' Paris' completes both stop strings, the second
# listed ending first; request 2's stop string spans a newline and four tokens; request 3 has none;
# request 4 is the base part (flag False).
ENGINE_PROMPTS = [
    [{"role": "user", "content": "Say hello."}],
    [{"role": "user", "content": "What is the capital of France?"}],
    [{"role": "user", "content": "Write a haiku about the sea."}],
    [{"role": "user", "content": "Count from one to ten in words."}],
    [{"role": "user", "content": "Say hello."}],
]
ENGINE_PARAMS = [
    SamplingParams(max_tokens=24, stop=["welc"]),
    SamplingParams(max_tokens=24, stop=["is Par", "s P"]),
    SamplingParams(max_tokens=32, stop=["shore,\nA"]),
    SamplingParams(max_tokens=12),
    SamplingParams(max_tokens=24, stop=["there, w"]),
]
ENGINE_INCLUDE = [True, True, True, True, False]


def _engine_messages():
    """The scheduler's DetokenizeMsgs of the engine requests, step by step (greedy: deterministic)."""
    s = new_scheduler()
    for uid, (prompt, sp) in enumerate(zip(ENGINE_PROMPTS, ENGINE_PARAMS)):
        s.add_request(uid, encode(s, prompt), sp)
    steps = []
    while not s.is_idle:
        s.step()
        steps.append(s.io.drain())
        assert len(steps) < 500, "setup: the engine requests never finished"
    return steps


def _replay(cls) -> tuple[dict[int, list[str]], dict[int, list[int]]]:
    """The detokenizer worker's DetokenizeManager, with one `cls` object per request: each
    request's UserReply texts (what the client receives) and its tokens."""
    manager = DetokenizeManager(tokenizer())
    for uid, sp in enumerate(ENGINE_PARAMS):
        manager.decode_map[uid] = _DetokState(cls(tokenizer(), list(sp.stop), ENGINE_INCLUDE[uid]))
    chunks: dict[int, list[str]] = {uid: [] for uid in range(len(ENGINE_PARAMS))}
    tokens: dict[int, list[int]] = {uid: [] for uid in range(len(ENGINE_PARAMS))}
    for msgs in remember("detokenizer_include_stop", _engine_messages):
        for msg in msgs:
            if msg.next_token >= 0:
                tokens[msg.uid].append(msg.next_token)
            reply = manager.detokenize(msg)
            if reply is not None:
                chunks[msg.uid].append(_piece(reply.incremental_output, "your class (in the detokenizer worker)"))
    return chunks, tokens


def case_real_engine(cls):
    _stream(cls, [], [], True)  # an unfinished class fails here, before the engine runs
    ref, tokens = _replay(reference_stop_keeping)
    for uid, sp in enumerate(ENGINE_PARAMS):
        text = "".join(ref[uid])
        if sp.stop:
            hit = [s for s in sp.stop if s in _full(tokens[uid])]
            assert hit, f"setup: engine request {uid} should have met one of its stop strings {sp.stop}"
            assert ENGINE_INCLUDE[uid] == any(text.endswith(s) for s in sp.stop), f"setup: request {uid} ends {text!r}"
    got, _ = _replay(cls)
    for uid, sp in enumerate(ENGINE_PARAMS):
        expected = "".join(ref[uid])
        where = f"engine request {uid} (stop={sp.stop}, include_stop_str_in_output={ENGINE_INCLUDE[uid]})"
        shown = ""
        for piece in got[uid]:
            assert REPLACEMENT not in piece, f"{where}: a broken character was sent to the client: {piece!r}"
            shown += piece
            assert expected.startswith(shown), (
                f"{where}: the client was sent {shown!r}, but the answer is {expected!r}"
                + (" (text after the stop string leaked)" if shown.startswith(expected) else "")
            )
        assert shown == expected, f"{where}: the client received {shown!r}, expected {expected!r}"
