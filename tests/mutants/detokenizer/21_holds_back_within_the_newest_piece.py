"""Holds back a tail that could begin a stop string only when that tail lies within the text the
newest token added ("the new piece is what might start a stop string"), instead of within all the
text not yet shown. A stop-string start that grows over several tokens is held while it fits in one
token's text, then released as soon as it spans two: with stop=["two three four"] and the tokens
' two', ' three', ...: after ' two' "two" is held, after ' three' the tail "two three" is longer than
' three' and goes out, so if ' four' follows, part of the stop string has already been shown (the
reference holds "two three" and cuts the text before "two")."""

from __future__ import annotations

MUST_FAIL = {"generated: 100 streams, one or two at once"}
MUST_SAY = "the text of each add(), then finish()"
CAUGHT_BY = {"hand", "generated"}
HINT_SAYS = "not only in the newest token's text"


class IncrementalDetokenizer:
    def __init__(self, tokenizer, stop=()):
        self.tokenizer = tokenizer
        self.stop = [s for s in stop if s]
        self.ids = []
        self.decoded = ""  # complete characters decoded so far
        self.sent = 0  # how much of `decoded` was returned
        self.window = 0  # decode from here: one step back, so leading spaces come out right
        self.read = 0  # ids before this are already in `decoded`
        self.stopped = False
        self.newest = 0  # length of the newest decoded piece

    def add(self, token_id: int) -> str:
        """One new token; return the text that is safe to show now (maybe '')."""
        if self.stopped:
            return ""
        self.ids.append(token_id)
        before = self._decode(self.ids[self.window : self.read])
        now = self._decode(self.ids[self.window :])
        if len(now) > len(before) and not now.endswith("\ufffd"):
            self.decoded += now[len(before) :]
            self.newest = len(now) - len(before)  # the text this token added
            self.window, self.read = self.read, len(self.ids)
        return self._release(final=False)

    def finish(self) -> str:
        """The request ended: return whatever is still held back (never a stop string)."""
        if not self.stopped and self.read < len(self.ids):
            # tokens that never completed a character (cut by max_tokens): their text as decoded
            before = self._decode(self.ids[self.window : self.read])
            self.decoded += self._decode(self.ids[self.window :])[len(before) :]
            self.window = self.read = len(self.ids)
        return self._release(final=True)

    def _decode(self, ids):
        return self.tokenizer.decode(ids, skip_special_tokens=True)

    def _release(self, final: bool) -> str:
        """The next piece of `decoded` that is safe to show (all of it if final), cut at a stop string."""
        if self.stopped:
            return ""
        hits = [i for i in (self.decoded.find(s, self.sent) for s in self.stop) if i >= 0]
        if hits:
            end, self.stopped = min(hits), True
        elif final:
            end = len(self.decoded)
        else:
            # hold back the longest tail that is the start of some stop string
            hold = max(
                [k for s in self.stop for k in range(1, len(s)) if self.decoded.endswith(s[:k]) and k <= self.newest]
                or [0]
            )
            end = len(self.decoded) - hold
        out, self.sent = self.decoded[self.sent : end], end
        return out
