"""How much n-gram drafting could ever save on a workload: the ceiling, from the answers alone.

Speculative decoding with prompt-lookup drafts (`scheduler/ngram.py`) turns a run of correctly
guessed tokens into one verify step. Given the answers the model actually gives (greedy, so they
do not depend on drafting), this script replays them and counts the steps a drafter would need:

- `ngram`: the drafter the server uses (`propose_ngram`: the most recent earlier occurrence of
  the last n tokens, n from n_max down to n_min), without its back-off;
- `oracle`: a drafter that knows the answer and, among every earlier place where the last n
  tokens occur (any n >= 1), copies from the one whose continuation is right the longest.

A step accepts the drafts that match the answer, plus the model's own next token. With verify
steps as cheap as decode steps (the best case), the speed-up is tokens / steps; the oracle's
figure bounds every prompt-lookup drafter with `k` drafts a step on these answers.

    python scripts/spec_ceiling.py                 # the bundled model, edits and questions
    python scripts/spec_ceiling.py --k 4 8 16
    python scripts/spec_ceiling.py --k 4 8 --verify-cost 1.1 3.25

`--verify-cost C` also replays the server's own drafting with its back-off (`ngram.backoff`: a
request whose verifies accept nothing pauses) and prints the speed-up over plain decoding if a
verify step costs C plain decode steps (`scripts/gpu_speculative.py`'s last column measures C).

Prints one line per workload and drafter. Runs the bundled model on CPU (about a minute).
"""

from __future__ import annotations

import argparse

from minisgl_edu.bench.workload import chat_prompts, edit_prompts
from minisgl_edu.core import SamplingParams
from minisgl_edu.scheduler.ngram import backoff, propose_ngram


def accepted(drafts: list[int], answer: list[int], at: int) -> int:
    """How many of `drafts` match `answer` from position `at` on, stopping at the first miss."""
    n = 0
    while n < len(drafts) and at + n < len(answer) and drafts[n] == answer[at + n]:
        n += 1
    return n


def steps_ngram(prompt: list[int], answer: list[int], k: int, n_max: int, n_min: int) -> int:
    steps, at = 0, 0
    while at < len(answer):
        drafts = propose_ngram(prompt + answer[:at], k, n_max, n_min) if at > 0 else []
        at += accepted(drafts, answer, at) + 1
        steps += 1
    return steps


def replay_server(prompt: list[int], answer: list[int], k: int, n_max: int, n_min: int) -> tuple[int, int, int]:
    """The server's drafting replayed on `answer`, back-off and all (`Scheduler._draft`,
    `_verified`): -> (plain decode steps, verify steps, drafts accepted)."""
    plain = verifies = accepted_total = misses = pause = 0
    at = 1  # the first token comes with the prompt's prefill
    while at < len(answer):
        drafts = []
        if pause > 0:
            pause -= 1
        else:
            drafts = propose_ngram(prompt + answer[:at], min(k, len(answer) - at - 1), n_max, n_min)
        if not drafts:
            plain += 1
            at += 1
            continue
        a = accepted(drafts, answer, at)
        verifies += 1
        accepted_total += a
        at += a + 1
        misses = 0 if a else misses + 1
        pause = backoff(misses)
    return plain, verifies, accepted_total


def steps_oracle(prompt: list[int], answer: list[int], k: int) -> int:
    steps, at = 0, 0
    while at < len(answer):
        text = prompt + answer[:at]
        best = 0
        if at > 0:
            last = text[-1]
            # Every earlier position whose token equals the last one is a match of n >= 1.
            for j in range(len(text) - 1):
                if text[j] == last:
                    follow = text[j + 1 : j + 1 + k]
                    best = max(best, accepted(follow, answer, at))
        at += best + 1
        steps += 1
    return steps


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--k", type=int, nargs="+", default=[4, 8], help="drafts per step")
    ap.add_argument("--n-max", type=int, default=4)
    ap.add_argument("--n-min", type=int, default=2)
    ap.add_argument("--num-prompts", type=int, default=8)
    ap.add_argument("--max-tokens", type=int, default=256)
    ap.add_argument("--seed", type=int, default=0, help="the serving benchmark's seed for the questions")
    ap.add_argument(
        "--verify-cost",
        type=float,
        nargs="*",
        default=[],
        help="also replay the server's drafting with its back-off: the speed-up if a verify step costs this many decode steps",
    )
    args = ap.parse_args()

    from minisgl_edu.llm import LLM

    llm = LLM()
    params = SamplingParams(max_tokens=args.max_tokens)
    workloads = {"edits": edit_prompts(args.num_prompts), "questions": chat_prompts(args.num_prompts, None, args.seed)}
    for name, texts in workloads.items():
        chats = [[{"role": "user", "content": t}] for t in texts]
        outs = llm.generate(chats, params)
        pairs = [(o.prompt_token_ids, o.token_ids) for o in outs]
        tokens = sum(len(a) for _, a in pairs)
        for k in args.k:
            ngram = sum(steps_ngram(p, a, k, args.n_max, args.n_min) for p, a in pairs)
            oracle = sum(steps_oracle(p, a, k) for p, a in pairs)
            print(
                f"{name:<9} k={k:<2} tokens {tokens:5d}  ngram {args.n_max}-{args.n_min}: {ngram:5d} steps"
                f" ({tokens / ngram:.2f}x)  oracle: {oracle:5d} steps ({tokens / oracle:.2f}x)"
            )
            if args.verify_cost:
                runs = [replay_server(p, a, k, args.n_max, args.n_min) for p, a in pairs]
                plain, verifies, acc = (sum(r[i] for r in runs) for i in range(3))
                decode_tokens = tokens - len(pairs)  # without the prefills' first tokens
                gains = "  ".join(
                    f"cost {c:g}: {decode_tokens / (plain + c * verifies):.2f}x" for c in args.verify_cost
                )
                print(
                    f"{'':<9} k={k:<2} server's drafting: {verifies} verifies, {acc} accepted,"
                    f" {plain} plain steps;  {gains}"
                )


if __name__ == "__main__":
    main()
