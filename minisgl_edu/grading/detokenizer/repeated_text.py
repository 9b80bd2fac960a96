"""A piece add() returns must be text after all the text returned before it. An answer whose
returned part moves back (for example a held-back tail longer than the text not yet returned,
such as one measured in UTF-8 bytes instead of characters) returns some text a second time.
This check reads the pieces against the text they must be the start of and names the repeat:
which piece, which text came again, and how far back it began.
"""

from __future__ import annotations

from minisgl_edu.grading.core import Mistake

REPEATED = (
    "add() returned text it had returned already: each add() returns only text after what was returned "
    "before, so the held-back tail is at most the text not yet returned, counted in characters"
)


def check_no_repeat(pieces: list[str], text: str) -> None:
    """Raise if an add() piece (not finish()'s) begins with the end of the text returned before it,
    where `text` (a start of the full text) shows that piece begins that far back, not after it."""
    shown = ""
    for n, piece in enumerate(pieces[:-1]):
        if piece and text.startswith(shown) and not text.startswith(shown + piece):
            for back in range(min(len(shown), len(piece)), 0, -1):
                if shown.endswith(piece[:back]) and text[len(shown) - back :].startswith(piece):
                    raise Mistake(
                        f"after token {n + 1} your add() returned {piece!r}, but the text returned before it "
                        f"({shown!r}) already ended with {piece[:back]!r}: that text was returned a second "
                        f"time, the returned part moved back {back} character(s)",
                        REPEATED,
                    )
        shown += piece
