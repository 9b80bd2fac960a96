"""The `next_token` field of the abort message, shared by exercise 2 and its stretch.

Where this sits: checks.py's `check_message` (the hand-written cases) calls `check_next_token`
after finished and finish_reason; scenes.py asks `next_token_hint` when a generated scene's abort
message differs from the reference's in that field. The contract's message carries -1 there: "no
token". Two wrong values are told apart, because their fixes differ: a real id (>= 0) is shown to
the client again, and a value that is no int at all (None, "no token" written another way) is not
"no token" to the readers of the message but a TypeError: the detokenizer (tokenizer/server.py)
and the local runtime test `next_token >= 0` to tell a real token.
"""

from __future__ import annotations

from typing import Any

from minisgl_edu.grading.core import Mistake

NEXT_TOKEN_HINT = (
    "an abort message's next_token is -1, never a real id: every token of the request was already sent with "
    "the step that made it, and the detokenizer would show that one (the newest output token) again"
)
NOT_AN_INT_HINT = (
    "the abort message's next_token field is the int -1 ('no token'), not None or any other stand-in: the "
    "detokenizer tests next_token >= 0 to tell a real token, and None cannot be compared (TypeError). "
    "Send DetokenizeMsg(uid, -1, True, 'abort', list(req.sampling_params.stop))"
)


def _is_int(token: Any) -> bool:
    # bool is an int to Python but no token id; a tensor or a float holds no id the detokenizer reads
    return isinstance(token, int) and not isinstance(token, bool)


def next_token_hint(got: Any) -> str:
    """The hint for an abort message whose next_token is `got` instead of -1."""
    return NEXT_TOKEN_HINT if _is_int(got) else NOT_AN_INT_HINT


def check_next_token(last) -> None:
    """`last`: the request's finished message. Its next_token must be exactly -1."""
    got = last.next_token
    if not _is_int(got):
        raise Mistake(
            f"the abort message carries next_token={got!r} ({type(got).__name__}), expected -1: the field is an "
            "int, and its readers compare it with 0 (next_token >= 0 means a real token), so "
            f"{got!r} there raises TypeError instead of meaning 'no token'",
            NOT_AN_INT_HINT,
        )
    if got >= 0:
        raise Mistake(
            f"the abort message carries next_token={got}: use -1, a real id would be detokenized and shown to "
            "the client",
            NEXT_TOKEN_HINT,
        )
