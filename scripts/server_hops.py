"""Where one request's first token goes inside the server, hop by hop, from the logs of
`scripts/hop_probe` (see `server_hops.sh`, which runs requests one at a time and calls this).

    python scripts/server_hops.py LOG_DIR

For each request the API server sent to a tokenizer: the wait for the tokenizer to receive it,
the tokenizer's own work (chat template, encoding, checks), the wait for the scheduler, the
scheduler's work until the prompt's batch is launched, the launch itself (on a GPU: queued only),
the rest of the scheduler's work until the token goes out (on a GPU: the next batch's launch and
the wait for this one), then the detokenizer and the way back. Prints the median, min and max of
each hop in milliseconds. Meaningful for one request at a time only: with several in flight the
hops of different requests interleave.
"""

from __future__ import annotations

import glob
import statistics
import sys

HOPS = [
    "API server -> tokenizer",
    "tokenizer: template, encode, checks",
    "tokenizer -> scheduler",
    "scheduler: receive -> launch",
    "scheduler: the prompt's launch",
    "scheduler: launched -> token sent",
    "scheduler -> detokenizer",
    "detokenizer",
    "detokenizer -> API server",
    "all (API server sent .. got the token)",
]
REPLIES = {"UserReply", "BatchFrontendMsg"}  # how a reply can reach the API server


def read(log_dir: str) -> tuple[dict[str, list], list]:
    """Each process's events by its role, and the scheduler's launches."""
    roles, launches = {}, []
    for path in glob.glob(f"{log_dir}/*.log"):
        if path.endswith(".sched.log"):
            launches += [
                (float(a), float(b)) for a, b, name in (line.split() for line in open(path)) if name == "launch_batch"
            ]
            continue
        events = [(float(t), kind, name) for t, kind, name in (line.split() for line in open(path))]
        received = {name for _, kind, name in events if kind == "recv"}
        if "TokenizeMsg" in received:
            roles["tokenizer"] = events
        elif "UserMsg" in received:
            roles["scheduler"] = events
        elif "DetokenizeMsg" in received:
            roles["detokenizer"] = events
        elif any(kind == "asend" for _, kind, _ in events):
            roles["api"] = events
    return roles, sorted(launches)


def first(events: list, kind: str, names: set, after: float):
    return next((t for t, k, n in events if t >= after and k == kind and n in names), None)


def hops(roles: dict, launches: list) -> dict[str, list[float]]:
    out: dict[str, list[float]] = {h: [] for h in HOPS}
    for t0, kind, name in roles["api"]:
        if kind != "asend" or name != "TokenizeMsg":
            continue
        t1 = first(roles["tokenizer"], "recv", {"TokenizeMsg"}, t0)
        t2 = t1 and first(roles["tokenizer"], "send", {"UserMsg"}, t1)
        t3 = t2 and first(roles["scheduler"], "recv", {"UserMsg"}, t2)
        t6 = t3 and first(roles["scheduler"], "send", {"DetokenizeMsg"}, t3)
        t7 = t6 and first(roles["detokenizer"], "recv", {"DetokenizeMsg"}, t6)
        t8 = t7 and first(roles["detokenizer"], "send", REPLIES, t7)
        t9 = t8 and first(roles["api"], "recv", REPLIES, t8)
        launch = t6 and next(((a, b) for a, b in launches if t3 <= a <= t6), None)
        if not (t9 and launch):
            continue
        t4, t5 = launch
        for h, (a, b) in zip(
            HOPS, [(t0, t1), (t1, t2), (t2, t3), (t3, t4), (t4, t5), (t5, t6), (t6, t7), (t7, t8), (t8, t9), (t0, t9)]
        ):
            out[h].append((b - a) * 1e3)
    return out


def main() -> None:
    roles, launches = read(sys.argv[1])
    table = hops(roles, launches)
    print("| hop | median ms | min | max | requests |")
    print("|---|---|---|---|---|")
    for h, values in table.items():
        if values:
            print(f"| {h} | {statistics.median(values):.2f} | {min(values):.2f} | {max(values):.2f} | {len(values)} |")


if __name__ == "__main__":
    main()
