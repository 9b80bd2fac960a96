"""Where the first tokens of a run waited: the server's stage stamps as a table and a timeline.

    python -m minisgl_edu.bench.serving --num-prompts 32 --concurrency 32 ...   # a burst
    python -m minisgl_edu.bench.stages --last 32 --plot burst.png --json burst_stages.json

Where this sits on the request path: outside it, after a run. Our server stamps each request at
every point of its path to the first token (`message/stamps.py`) and serves the latest requests'
stamps on GET /debug/stages (`server/stages.py`). This tool fetches them and shows, per stage (the
HTTP side, the tokenizer, the hops between processes, the wait in the scheduler's queue, the
prefill, the detokenizer, the SSE write):

* a table: each stage's p50 / p99 / longest over the requests, and its share of all the time the
  requests spent before their first token (the stage that holds the largest share is where a
  burst's last first token waits);
* a timeline: one row per request, in order of arrival, its stages as coloured bars from the
  moment the first request of the run arrived (`plot_timeline`; chapter 10 draws it).

The server's own time to the first token ends at `sse_write`; the client adds its HTTP and parsing
on top (the serving benchmark's TTFT).
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any, Optional

from minisgl_edu.message.stamps import STAGES, durations

StageRecord = dict[str, Any]  # {"uid": int, "stamps": {point: seconds}}


def fetch_stages(base_url: str = "http://127.0.0.1:1919", last: Optional[int] = None, api_key: Optional[str] = None):
    """The stamps the server kept (the newest `last` requests), oldest first."""
    import httpx

    headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
    params = {"last": last} if last is not None else {}
    r = httpx.get(base_url.rstrip("/") + "/debug/stages", params=params, headers=headers, timeout=30)
    r.raise_for_status()
    return r.json()["requests"]


def complete(records: list[StageRecord]) -> list[StageRecord]:
    """The records whose path is stamped from `received` to its end (`sse_write` for a stream)."""
    return [r for r in records if "received" in r["stamps"] and len(durations(r["stamps"])) == len(STAGES)]


def _percentile(values: list[float], q: float) -> float:
    s = sorted(values)
    if not s:
        return float("nan")
    k = (len(s) - 1) * q
    lo, hi = int(k), min(int(k) + 1, len(s) - 1)
    return s[lo] + (s[hi] - s[lo]) * (k - lo)


def stage_table(records: list[StageRecord]) -> list[dict[str, Any]]:
    """Per stage: p50, p99 and the longest time in ms, and its share of the requests' summed time
    to the first token; the last row, "total", is the server's own time to the first token."""
    records = complete(records)
    per_stage = {name: [] for name, _, _ in STAGES}
    totals = []
    for r in records:
        st = r["stamps"]
        for name, seconds in durations(st).items():
            per_stage[name].append(seconds * 1e3)
        totals.append((st["sse_write"] - st["received"]) * 1e3)
    whole = sum(totals) or float("nan")
    rows = []
    for name, values in [*per_stage.items(), ("total", totals)]:
        rows.append(
            {
                "stage": name,
                "p50_ms": _percentile(values, 0.5),
                "p99_ms": _percentile(values, 0.99),
                "max_ms": max(values) if values else float("nan"),
                "share": sum(values) / whole,
            }
        )
    return rows


def largest_stage(records: list[StageRecord]) -> tuple[str, float]:
    """The stage with the largest share of the time to first token, and that share."""
    rows = [r for r in stage_table(records) if r["stage"] != "total"]
    top = max(rows, key=lambda r: r["share"])
    return top["stage"], top["share"]


def format_stage_table(records: list[StageRecord]) -> str:
    n = len(complete(records))
    lines = [f"Where {n} requests' first tokens waited (server side, ms)",
             f"{'stage':<15} {'p50':>8} {'p99':>8} {'max':>8} {'share':>6}"]  # fmt: skip
    for r in stage_table(records):
        lines.append(f"{r['stage']:<15} {r['p50_ms']:>8.1f} {r['p99_ms']:>8.1f} {r['max_ms']:>8.1f} {r['share']:>6.0%}")
    return "\n".join(lines)


def timeline(records: list[StageRecord]) -> list[list[tuple[str, float, float]]]:
    """Per request (in order of arrival): (stage, start ms, length ms) from the first arrival."""
    records = sorted(complete(records), key=lambda r: r["stamps"]["received"])
    if not records:
        return []
    t0 = records[0]["stamps"]["received"]
    out = []
    for r in records:
        st = r["stamps"]
        out.append([(name, (st[a] - t0) * 1e3, (st[b] - st[a]) * 1e3) for name, a, b in STAGES])
    return out


# One colour per stage; the hops between processes share a grey, as they are all "in a socket".
STAGE_COLORS = {
    "http": "tab:blue",
    "to tokenizer": "0.75",
    "tokenize": "tab:orange",
    "to scheduler": "0.6",
    "waiting": "tab:red",
    "prefill": "tab:green",
    "results": "tab:olive",
    "to detokenizer": "0.75",
    "detokenize": "tab:purple",
    "to api": "0.6",
    "sse": "tab:cyan",
}


def plot_timeline(records: list[StageRecord], ax=None, title: Optional[str] = None):
    """One horizontal bar per request, its stages in colour, time from the first arrival (ms)."""
    import matplotlib.pyplot as plt

    rows = timeline(records)
    if ax is None:
        _, ax = plt.subplots(figsize=(9, max(2.5, 0.04 * len(rows) + 1.5)))
    seen = set()
    for i, stages in enumerate(rows):
        for name, start, length in stages:
            label = name if name not in seen else None
            seen.add(name)
            ax.barh(i, length, left=start, height=0.85, color=STAGE_COLORS[name], label=label, linewidth=0)
    ax.set_xlabel("ms since the first request of the run arrived")
    ax.set_ylabel("request (in order of arrival)")
    ax.invert_yaxis()
    ax.set_title(title or f"The path to the first token, {len(rows)} requests")
    ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize=7)  # beside the bars, not over them
    return ax


def main(argv: Optional[list[str]] = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--base-url", default="http://127.0.0.1:1919")
    ap.add_argument("--api-key")
    ap.add_argument("--last", type=int, help="only the newest N requests (the run just made)")
    ap.add_argument("--json", help="write the requests' stamps and the table here")
    ap.add_argument("--plot", help="write the timeline here (png)")
    ap.add_argument("--title", help="the plot's title")
    args = ap.parse_args(argv)
    records = fetch_stages(args.base_url, args.last, args.api_key)
    if not complete(records):
        print("no request with a complete path: run some streaming requests first", file=sys.stderr)
        return 1
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"requests": records, "table": stage_table(records)}, f)
    if args.plot:
        import matplotlib

        matplotlib.use("Agg")
        ax = plot_timeline(records, title=args.title)
        ax.figure.tight_layout()
        ax.figure.savefig(args.plot, dpi=110)
    print(format_stage_table(records))
    name, share = largest_stage(records)
    print(f"largest: {name} ({share:.0%} of the time to first token)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
