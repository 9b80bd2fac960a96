"""The server's own time to first token, from its /metrics, between two readings.

    python scripts/server_ttft.py URL > before.json; ...; python scripts/server_ttft.py URL > after.json
    python scripts/server_ttft.py --diff before.json after.json

What `gpu_serving.sh` prints beside each run: the mean TTFT the API server measured (from receiving
a request to its first reply with text) and the part the request waited in the scheduler's queue.
The client's TTFT minus the server's is HTTP and the client itself; at load, a client that reads
its streams late.
"""

from __future__ import annotations

import json
import sys
import urllib.request

METRICS = {"ttft": "minisgl_time_to_first_token_seconds", "queued": "minisgl_request_queue_time_seconds"}


def read(url: str) -> dict[str, float]:
    """{name_sum, name_count} of each histogram in METRICS, from the Prometheus text at URL/metrics."""
    text = urllib.request.urlopen(url.rstrip("/") + "/metrics", timeout=10).read().decode()
    wanted = {f"{m}_{part}" for m in METRICS.values() for part in ("sum", "count")}
    values = {}
    for line in text.splitlines():
        fields = line.split()
        if len(fields) == 2 and fields[0] in wanted:
            values[fields[0]] = float(fields[1])
    return values


def mean_ms(before: dict[str, float], after: dict[str, float]) -> dict[str, float]:
    """Each histogram's mean in milliseconds over the requests between two readings."""
    return {
        key: (after[f"{m}_sum"] - before[f"{m}_sum"]) / (after[f"{m}_count"] - before[f"{m}_count"] or 1) * 1e3
        for key, m in METRICS.items()
    }


def diff(before: dict[str, float], after: dict[str, float]) -> str:
    count = after[f"{METRICS['ttft']}_count"] - before[f"{METRICS['ttft']}_count"]
    if not count:
        return "server TTFT: no request"
    means = mean_ms(before, after)
    return f"server TTFT mean {means['ttft']:.2f} ms (queued {means['queued']:.2f} ms) over {count:.0f}"


if __name__ == "__main__":
    if sys.argv[1] == "--diff":
        print(diff(*(json.load(open(path)) for path in sys.argv[2:4])))
    else:
        print(json.dumps(read(sys.argv[1])))
