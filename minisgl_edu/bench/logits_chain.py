"""What the logits chain and logprobs cost per decode step, printed as a table.

    python -m minisgl_edu.bench.logits_chain                      # CPU, the default model
    python -m minisgl_edu.bench.logits_chain --model DIR --device cuda

One scheduler, `--batch` requests (default 32) that all ask for the same thing, prefilled, then
`--steps` decode steps timed one by one (`Scheduler.step()`: forward, the chain, sampling,
logprobs, the scheduler's bookkeeping). Each variant is run in turn, and the whole round
`--rounds` times, every other round in reverse order, so a machine whose speed drifts affects all
of them alike; the table gives the median step of each variant over all rounds, and its ratio to
"plain".

"plain, no chain" is the same greedy batch with `Sampler.process_fn` set to pass the logits
through: the step as it was before the chain existed, so "plain" against it is what the chain
costs a batch that uses none of it. The grammar variant keeps every request inside a grammar
that never ends (letters and spaces, EOS biased away), so the batch stays full.
"""

from __future__ import annotations

import argparse
import statistics
import time

import torch

from minisgl_edu.core import SamplingParams


def variants(eos_ids: list[int], steps: int) -> dict[str, dict]:
    # max_tokens just above the timed steps: the scheduler reserves pages for all of them up front
    long = dict(max_tokens=steps + 4, ignore_eos=True)
    never_eos = {t: -100.0 for t in eos_ids}
    # name -> (the table's label, the requests' SamplingParams)
    return {
        "plain": ("plain", dict(long)),
        "nochain": ("plain, no chain", dict(long)),
        "sampled": ("sampled (T 0.8, top-p 0.9)", dict(long, temperature=0.8, top_p=0.9, seed=1)),
        "logprobs": ("logprobs, top 5", dict(long, logprobs=True, top_logprobs=5)),
        "penalties": (
            "penalties (rep, freq, presence)",
            dict(long, repetition_penalty=1.1, frequency_penalty=0.5, presence_penalty=0.5),
        ),
        "bias": ("logit_bias (16 ids)", dict(long, logit_bias={100 + 37 * i: 1.0 for i in range(16)})),
        "grammar": ("grammar mask", dict(long, ebnf="root ::= [a-z ]+", logit_bias=never_eos)),
        "all": (
            "all of them",
            dict(
                long,
                ebnf="root ::= [a-z ]+",
                logit_bias=never_eos,
                logprobs=True,
                top_logprobs=5,
                repetition_penalty=1.1,
                frequency_penalty=0.5,
            ),
        ),
    }


def prompts(tokenizer, n: int) -> list[list[int]]:
    topics = ["the sea", "a page table", "KV caches", "a cat", "rivers", "batching", "the moon", "bread"]
    return [
        tokenizer.apply_chat_template(
            [{"role": "user", "content": f"Write a long essay about {topics[i % len(topics)]}, part {i}."}],
            add_generation_prompt=True,
            return_dict=False,
        )
        for i in range(n)
    ]


def time_variant(scheduler, name: str, params: dict, ids: list[list[int]], steps: int, uid0: int) -> list[float]:
    sampler = scheduler.engine.sampler
    chain = getattr(sampler, "process_fn", None)
    if name == "nochain":
        sampler.process_fn = lambda logits, reqs: logits
    try:
        uids = [uid0 + i for i in range(len(ids))]
        for uid, prompt in zip(uids, ids):
            scheduler.add_request(uid, prompt, SamplingParams(**params))
        while scheduler.waiting:  # the prefills
            scheduler.step()
        times = []
        for _ in range(steps):
            _sync(scheduler)
            t0 = time.perf_counter()
            rec = scheduler.step()
            _sync(scheduler)
            times.append(time.perf_counter() - t0)
            assert rec is not None and rec.phase == "decode" and len(rec.items) == len(ids), "the batch must stay full"
        for uid in uids:
            scheduler.abort(uid)
        scheduler.io.drain()
        return times
    finally:
        if chain is not None:
            sampler.process_fn = chain


def _sync(scheduler) -> None:
    if scheduler.engine.device.type == "cuda":
        torch.cuda.synchronize(scheduler.engine.device)


def main(argv: list[str] | None = None) -> list[str]:
    from minisgl_edu.scheduler import Scheduler, SchedulerConfig

    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--model", default="smollm2-135m")
    p.add_argument("--device", default="auto")
    p.add_argument("--batch", type=int, default=32)
    p.add_argument("--steps", type=int, default=10)
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--cpu-weights", default="float32", help="CPU only: float32 (exact), float16, int4, auto")
    p.add_argument("--variants", default="all", help="comma-separated names (plain, nochain, sampled, ...) or all")
    args = p.parse_args(argv)
    cfg = dict(model=args.model, device=args.device, max_running_requests=max(args.batch, 32), overlap=False)
    if args.device != "cuda":
        cfg["cpu_weights"] = args.cpu_weights
    scheduler = Scheduler(SchedulerConfig(**cfg))
    ids = prompts(scheduler.tokenizer, args.batch)
    table = variants(sorted(scheduler.eos_ids), args.steps)
    if args.variants != "all":
        table = {name: table[name] for name in args.variants.split(",")}
    times: dict[str, list[float]] = {name: [] for name in table}
    uid = 0
    for name, (_, params) in table.items():  # warm-up (and the grammar compiler)
        time_variant(scheduler, name, params, ids, 2, uid)
        uid += args.batch
    for r in range(args.rounds):
        # every other round in reverse, so no variant always follows the same one
        for name, (_, params) in list(table.items())[:: 1 if r % 2 == 0 else -1]:
            times[name] += time_variant(scheduler, name, params, ids, args.steps, uid)
            uid += args.batch
    scheduler.cache.check()
    plain = statistics.median(times["plain"]) if "plain" in times else None
    dev = scheduler.engine.device
    where = torch.cuda.get_device_name(dev) if dev.type == "cuda" else f"CPU, {torch.get_num_threads()} threads"
    lines = [
        f"decode step of {args.batch} requests, {args.model} ({scheduler.engine.weights}) on {where}; "
        f"median of {args.rounds} x {args.steps} steps",
        "",
        "| every request asks for | step (ms) | vs plain |",
        "|---|---|---|",
    ]
    for name, ts in times.items():
        ms = statistics.median(ts) * 1e3
        ratio = f"{ms / (plain * 1e3):.2f}x" if plain else ""
        lines.append(f"| {table[name][0]} | {ms:.2f} | {ratio} |")
    print("\n".join(lines))
    return lines


if __name__ == "__main__":
    main()
