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
"""

from __future__ import annotations


def propose_ngram(tokens: list[int], k: int, n_max: int, n_min: int) -> list[int]:
    """Up to `k` tokens that followed the most recent earlier occurrence of the last n tokens of
    `tokens` (n from `n_max` down to `n_min`); [] when none of those suffixes occurs earlier."""
    if k <= 0:
        return []
    for n in range(min(n_max, len(tokens) - 1), n_min - 1, -1):
        suffix = tokens[-n:]
        # Most recent first: start the search where a match would end just before the suffix.
        for start in range(len(tokens) - n - 1, -1, -1):
            if tokens[start : start + n] == suffix:
                follow = tokens[start + n : start + n + k]
                return follow
    return []
