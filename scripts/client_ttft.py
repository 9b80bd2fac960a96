"""How much of one stream's TTFT is the serving benchmark's own client?

    python scripts/client_ttft.py URL [--rounds 3] [--num-prompts 16] [--input-len 512]

Sends the serving benchmark's chat requests (its prompts and request body: greedy, `ignore_eos`,
16 output tokens) one at a time, in alternating rounds from two clients: the benchmark's own
(`bench.serving`: httpx on asyncio) and a plain one (Python's `http.client`: one kept-alive
connection, blocking reads, the clock read as soon as a line arrives). Both send the same
prompts, so the server's work is the same; each round also reads the server's own TTFT from
/metrics before and after (as `server_ttft.py` does). A client's TTFT minus the server's is that
client's share, with HTTP. Start the server first and warm it up (`server_hops.sh` shows how).
"""

from __future__ import annotations

import argparse
import http.client
import json
import statistics
import time
import urllib.parse
import urllib.request

from server_ttft import mean_ms, read

from minisgl_edu.bench.serving import BenchConfig, chunk_text, request_body, run_benchmark
from minisgl_edu.bench.workload import make_workload


def plain_ttfts(config: BenchConfig, model: str) -> list[float]:
    """TTFT in seconds of each planned request, sent one at a time over one connection."""
    url = urllib.parse.urlsplit(config.base_url)
    conn = http.client.HTTPConnection(url.hostname, url.port)
    plan = make_workload(
        config.endpoint, config.num_prompts, config.input_len, 1, config.request_rate, config.seed, config.prompt_set
    )
    out = []
    for planned in plan:
        body = json.dumps(request_body(config, model, planned))
        sent = time.perf_counter()
        conn.request("POST", config.path, body, {"Content-Type": "application/json"})
        resp = conn.getresponse()
        first = None
        while line := resp.readline():
            now = time.perf_counter()
            data = line.decode().removeprefix("data:").strip()
            if data == "[DONE]":
                break
            if first is None and line.startswith(b"data:") and chunk_text(json.loads(data), chat=True):
                first = now - sent
        resp.read()  # the end of the chunked body, so that the connection can be used again
        out.append(first)
    return out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("url")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--num-prompts", type=int, default=16)
    ap.add_argument("--input-len", type=int, default=512)
    args = ap.parse_args()
    config = BenchConfig(
        base_url=args.url,
        endpoint="chat",
        num_prompts=args.num_prompts,
        input_len=args.input_len,
        output_len=16,
        concurrency=1,
        ignore_eos=True,
        progress=False,
    )
    with urllib.request.urlopen(args.url.rstrip("/") + "/v1/models", timeout=10) as models:
        model = json.load(models)["data"][0]["id"]
    rows = []
    for r in range(args.rounds):
        for name in ("benchmark's client", "plain client"):
            before = read(args.url)
            if name == "plain client":
                ttfts = plain_ttfts(config, model)
            else:
                ttfts = [q.ttft for q in run_benchmark(config).requests]
            after = read(args.url)
            client = statistics.mean(ttfts) * 1e3
            server = mean_ms(before, after)["ttft"]
            rows.append((r + 1, name, statistics.median(ttfts) * 1e3, client, server, client - server))
    print(
        "| round | client | client TTFT p50 ms | client TTFT mean ms | server's own TTFT mean ms | client - server ms |"
    )
    print("|---|---|---|---|---|---|")
    for row in rows:
        print("| {} | {} | {:.2f} | {:.2f} | {:.2f} | {:.2f} |".format(*row))


if __name__ == "__main__":
    main()
