"""Stage stamps (`message/stamps.py`, `server/stages.py`): every process on the way to the first
token adds its points, in order, and the API server's log keeps them and serves them.

The chain here is the server's own objects without the processes: a tokenizer worker's `handle`,
a `Scheduler` on a tiny model, the detokenizer's `handle`, then `StageLog`. The messages go through
the codec between them, as they do between processes. Behaviour only: which points, in which
order; never how long a stage takes.
"""

from __future__ import annotations

import time

from minisgl_edu.core import SamplingParams
from minisgl_edu.message import DetokenizeMsg, TokenizeMsg, UserMsg, UserReply, unwrap
from minisgl_edu.message.codec import decode, encode
from minisgl_edu.message.stamps import POINTS, STAGES, durations
from minisgl_edu.scheduler import QueueIO, Scheduler, SchedulerConfig
from minisgl_edu.server.stages import StageLog


class ListQueue:
    """A worker's socket stand-in: what it puts, through the codec."""

    def __init__(self) -> None:
        self.sent: list = []

    def put(self, msg) -> None:
        self.sent.extend(unwrap(decode(encode(msg))))


def workers(model_dir):
    from minisgl_edu.models import ModelConfig, load_tokenizer
    from minisgl_edu.tokenizer.server import DetokenizeManager, TokenizeManager, TokenizeWorker

    tok = load_tokenizer(model_dir)
    cfg = ModelConfig.from_dir(model_dir)
    to_api, to_sched, to_api2 = ListQueue(), ListQueue(), ListQueue()
    tokenizer = TokenizeWorker(None, to_api, to_sched, TokenizeManager(tok, 4096, cfg.vocab_size), None)
    detokenizer = TokenizeWorker(None, to_api2, None, None, DetokenizeManager(tok))
    return tok, tokenizer, to_sched, detokenizer, to_api2


def test_a_first_token_carries_every_point_of_its_path_in_order(tiny_model_dir):
    tok, tokenizer, to_sched, detokenizer, to_api = workers(tiny_model_dir)
    sched = Scheduler(SchedulerConfig(model=tiny_model_dir, device="cpu", num_pages=64), QueueIO(), tokenizer=tok)
    params = SamplingParams(max_tokens=3, ignore_eos=True)
    # What generate() does before sending: the first two points.
    sent = []
    for uid in range(3):
        stamps = {"received": time.monotonic()}
        stamps["api_sent"] = time.monotonic()
        sent.append(TokenizeMsg(uid=uid, text=f"question {uid}", sampling_params=params, stamps=stamps))
    tokenizer.handle([decode(encode(m)) for m in sent])
    user_msgs = [m for m in to_sched.sent if isinstance(m, UserMsg)]
    assert [m.uid for m in user_msgs] == [0, 1, 2]
    for m in user_msgs:
        sched.io.put(m)
    sched.run_until_idle()
    to_detok = [decode(encode(m)) for m in sched.io.drain()]
    firsts = [m for m in to_detok if isinstance(m, DetokenizeMsg) and m.stamps]
    assert sorted(m.uid for m in firsts) == [0, 1, 2]  # one message per request carries them: its first token
    assert sum(1 for m in to_detok if m.stamps is None) == 3 * 2  # the later tokens carry none
    detokenizer.handle(to_detok)
    replies = [m for m in to_api.sent if isinstance(m, UserReply) and m.stamps]
    assert sorted(r.uid for r in replies) == [0, 1, 2]
    log = StageLog()
    for r in replies:
        r.stamps["api_recv"] = time.monotonic()  # what listen() adds, then stream_chunks
        r.stamps["sse_write"] = time.monotonic()
        log.record(r.uid, r.stamps)
        assert list(r.stamps) == list(POINTS)  # every point, and in the order of the path
        times = [r.stamps[p] for p in POINTS]
        assert times == sorted(times)
        assert set(durations(r.stamps)) == {name for name, _, _ in STAGES}
    served = log.as_json(last=2)
    assert [r["uid"] for r in served["requests"]] == [r.uid for r in replies][-2:]
    assert served["points"] == list(POINTS)


def test_requests_without_stamps_pass_through_untouched(tiny_model_dir):
    """The in-process runtime and the graders send UserMsgs without stamps: nothing is added."""
    tok, *_ = workers(tiny_model_dir)
    sched = Scheduler(SchedulerConfig(model=tiny_model_dir, device="cpu", num_pages=64), QueueIO(), tokenizer=tok)
    sched.io.put(UserMsg(uid=7, input_ids=[5, 6, 7], sampling_params=SamplingParams(max_tokens=2, ignore_eos=True)))
    sched.run_until_idle()
    assert all(m.stamps is None for m in sched.io.drain())
