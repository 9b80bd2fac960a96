"""A diagnosis for exercise 1: the decode window written as an index, `req.output_ids[-window]`, the
colon of the slice `[-window:]` lost. That is one token id, the one `window` places from the end: while
the output is shorter than the window it raises IndexError, and once it is longer, decode is handed a
bare int (the scheduler's decode wants a list, so it raises TypeError; a decode that accepts it gives
the text of that one old token, where a stop string almost never shows).

A crash has many causes, so `_expect` (expect.py) names this one only when the answer crashed with
IndexError or TypeError AND a probe confirms it: on an output of its own, 40 distinct ordinary tokens
with a stop string it does not hold, the answer hands decode a single int, and that int is the id of
an older token than the newest (`output_ids[-1]` handed alone is another mistake). A probe that
raises counts as "not this mistake".
"""

from __future__ import annotations

from typing import Any

from minisgl_edu.grading.finish.tokens import EOS, _decode, _req

WINDOW_INDEXED = (
    "slice the window, do not index it: req.output_ids[-window:] (with the colon) is the list of the last window "
    "tokens, while req.output_ids[-window] is ONE token id, the one window places from the end. It raises "
    "IndexError while the output is shorter than the window, and decode is given a single id, not a list: "
    "write decode(req.output_ids[-window:])"
)

OUTPUT = list(range(1000, 1040))  # 40 distinct ordinary ids of SmolLM2's vocabulary: no EOS, no special token


def indexes_the_window(fn: Any, *extra: Any) -> bool:
    """True when the answer, on OUTPUT with an absent stop string, hands decode a bare int that is the
    id of a token older than the newest one (extra: min_tokens, for the stretch)."""
    seen: list[Any] = []

    def decode(ids: Any) -> str:
        seen.append(ids)
        return _decode([ids] if isinstance(ids, int) else list(ids))

    try:
        fn(_req(list(OUTPUT), max_new=500, stop=["~" * 6]), set(EOS), decode, *extra)
    except Exception:
        return False
    older = set(OUTPUT[:-1])
    return any(isinstance(ids, int) and ids in older for ids in seen)
