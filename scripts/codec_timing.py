"""Microseconds to encode and decode the messages of one hop (message/codec.py), on this machine.

    python scripts/codec_timing.py                          # this tree
    PYTHONSAFEPATH=1 PYTHONPATH=.gpu/base python scripts/codec_timing.py   # another copy, for an A/B

Three messages the server sends all the time: a decode step's 64 `DetokenizeMsg`s (scheduler ->
detokenizer, one list per step), the 64 `UserReply`s they become (detokenizer -> API server) and
a 600-token prompt's `UserMsg` (tokenizer -> scheduler). Best of 5 rounds of 2,000 each.
"""

import time

from minisgl_edu.core import SamplingParams
from minisgl_edu.message import BatchFrontendMsg, DetokenizeMsg, UserMsg, UserReply, codec

MESSAGES = {
    "64 DetokenizeMsg": [
        DetokenizeMsg(uid=i, next_token=1000 + i, finished=False, cached_tokens=500) for i in range(64)
    ],
    "64 UserReply": BatchFrontendMsg(
        data=[UserReply(uid=i, incremental_output=" word", finished=False, num_output_tokens=17) for i in range(64)]
    ),
    "UserMsg, 600 ids": UserMsg(uid=1, input_ids=list(range(600)), sampling_params=SamplingParams(max_tokens=256)),
}


def best_us(fn, n: int = 2000) -> float:
    rounds = []
    for _ in range(5):
        t0 = time.perf_counter()
        for _ in range(n):
            fn()
        rounds.append((time.perf_counter() - t0) / n * 1e6)
    return min(rounds)


print(f"{codec.__file__}\n{'message':<18} {'encode us':>10} {'decode us':>10} {'bytes':>7}")
for name, msg in MESSAGES.items():
    data = codec.encode(msg)
    enc, dec = best_us(lambda: codec.encode(msg)), best_us(lambda: codec.decode(data))
    print(f"{name:<18} {enc:>10.1f} {dec:>10.1f} {len(data):>7}")
