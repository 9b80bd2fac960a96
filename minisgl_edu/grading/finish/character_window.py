"""Exercise 1: a decode window counted per CHARACTER of the stop string, k * len(s) tokens ("a
character is at most 4 bytes in UTF-8 and a token at least one byte, so 4 tokens a character").
True of text tokens, but under ignore_eos an EOS stays in the output as a token of no byte: '我' is
one character of 3 byte tokens, and two ignored EOS ids among them make it span 5 tokens, more than
the 4 the window gives it. The contract's window is len(s.encode()) plus a margin for such ids.

Here: the output that shows it (a hand case, windows.case_ignored_eos_in_stop, and a scene the
generated phase plays first, scenes.FIXED), and the probe that tells this window from others, which
both name with PER_CHARACTER.
"""

from __future__ import annotations

from typing import Any, Optional

from minisgl_edu.grading.finish.tokens import EOS, PLAIN, _req, noting_decode

# 'x 我' as [x, ' ' + the first byte of 我, EOS 2, its second byte, EOS 0, its third byte]: '我' spans
# the last 5 tokens (the hand case checks the decode)
ONE_CHARACTER_OUT = [104, 17097, 2, 226, 0, 235]

PER_CHARACTER = (
    "size the window by the stop string's bytes, len(s.encode()), plus a margin for ignored EOS ids, not by its "
    "characters: a one-character stop string of 3 bytes ('我', 3 byte tokens) with ignored EOS ids among its "
    "tokens spans more tokens than 4 per character (an EOS kept by ignore_eos is a token of no byte, and up to "
    "three may sit inside a stop string)"
)


def _widest(fn: Any, stop: str, *extra: Any) -> int:
    """The most ids the answer passes to one call of decode on 100 ' ok' tokens with stop=[stop]."""
    calls: list[list[int]] = []
    fn(_req([PLAIN] * 100, max_new=500, stop=[stop]), set(EOS), noting_decode(calls), *extra)
    return max((len(ids) for ids in calls), default=0)


def tokens_per_character(fn: Any, *extra: Any) -> int:
    """k when the answer's window follows the characters of the stop string, k tokens a character: the
    same width for '!' (1 byte), '我' (3 bytes) and '🚀' (4 bytes), k more for '我我' and 7k more for
    '我' * 8. 0 otherwise (or when a probe raises). A window of bytes is wider for '我' than for '!'; a
    fixed one does not grow with '我我'; one of bytes // 4 looks like 1 a character from '!' to '我我'
    (4, 4, 5 tokens) but is wider for '🚀' than for '!' and grows by 6, not 7, from '我' to '我' * 8."""
    try:
        bang, rocket, one, two, eight = (_widest(fn, stop, *extra) for stop in ("!", "🚀", "我", "我我", "我" * 8))
    except Exception:
        return 0
    k = two - one
    # it grows with each character, by the same k, and not with the bytes of one character
    grows = eight - one == 7 * k
    return k if k >= 1 and bang == one == rocket and one >= k and grows else 0


def per_character_why(fn: Any, *extra: Any) -> Optional[str]:
    """What the answer decoded, as a sentence, when its window counts characters; None otherwise."""
    k = tokens_per_character(fn, *extra)
    if not k:
        return None
    return (
        f"your check decodes as many tokens for stop=['!'] (1 byte) as for ['我'] (3 bytes), and {k} more for "
        f"['我我']: its window counts {k} tokens per character of the stop string, not its bytes"
    )
