"""N-gram drafts (prompt lookup): guess a request's next tokens from its own earlier text.

Where this sits on the request path: with `SchedulerConfig.speculative_algorithm = "ngram"`, the
scheduler calls `propose_ngram` for each decoding request while it builds a decode batch. The
guesses ("drafts") go into the batch after the request's newest token, and the engine checks them
all in one forward pass (`engine/verify.py`): a verify batch.

The idea: text that repeats itself (code with a small edit, a paragraph quoted back, a list that
follows a pattern) continues the way it went the last time its last few tokens appeared. So look
for the most recent earlier place where the request's last `n` tokens occur, and propose the
tokens that followed there. A longer match is a better guess, so `n` goes from `n_max` down to
`n_min` and the first n that matches wins. No second model is needed: the draft costs a search.

When drafts do not pay: a request whose text does not repeat finds few matches, so it mostly
decodes as usual. When it does find matches that the model keeps rejecting, each verify computes
k positions for nothing; `backoff` then makes it pause drafting for 1, 2, 4, ... steps (at most
`MAX_PAUSE`) after each verify in a row that accepted nothing, and one accepted draft resets it.
"""

from __future__ import annotations


def propose_ngram(tokens: list[int], k: int, n_max: int, n_min: int) -> list[int]:
    """`k` tokens that followed the most recent earlier occurrence of the last n tokens of
    `tokens` (n from `n_max` down to `n_min`); [] when none of those suffixes occurs earlier."""
    if k <= 0:
        return []
    # One character per token, so that the search runs in C (`str.rfind`) rather than a Python
    # loop over the whole text at every step: chr() covers every id below 1,114,112.
    text = "".join(map(chr, tokens))
    for n in range(min(n_max, len(tokens) - 1), n_min - 1, -1):
        # The most recent occurrence that ends before the last token, so not the suffix itself.
        start = text.rfind(text[-n:], 0, len(text) - 1)
        if start >= 0:
            return _copy_from(tokens, start + n, k)
    return []


def _copy_from(tokens: list[int], at: int, k: int) -> list[int]:
    """`k` tokens copied from `tokens[at:]`, going on into the copy itself when the end is
    reached: a match just before the suffix means the text repeats with period len(tokens) - at,
    so "a b a b a b" after the match "a b" at 2 goes on "a b a b ...", not just "a b"."""
    follow: list[int] = []
    for i in range(k):
        j = at + i
        follow.append(tokens[j] if j < len(tokens) else follow[j - len(tokens)])
    return follow


MAX_PAUSE = 16  # decode steps at most between two tries of a request whose drafts keep failing


def backoff(misses: int) -> int:
    """Decode steps without drafts after `misses` verifies in a row that accepted nothing."""
    return 0 if misses == 0 else min(2 ** (misses - 1), MAX_PAUSE)
