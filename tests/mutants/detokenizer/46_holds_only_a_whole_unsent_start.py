"""Holds back the text not yet returned only when ALL of it could be the start of a stop string
(s.startswith(unsent)); when ordinary text comes before a partial stop string ('one two three'
with stop=['three four']: the unsent ' three' is no start of it, its end 'three' is), the start of
the stop string goes out with the ordinary text and reaches the client before the next token
completes the stop string. Every end of the unsent text, from 1 to len(s) - 1 characters, must be
tried, not only the whole of it."""

from __future__ import annotations

MUST_FAIL = {"stop string across tokens", "stop string inside a token", "false starts of a stop string"}
MUST_SAY = "a shorter end of it may still be"
CAUGHT_BY = {"hand", "generated"}
HINT_SAYS = "try every length of the tail, from 1 to len(s) - 1 characters"


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

    def add(self, token_id: int) -> str:
        """One new token; return the text that is safe to show now (maybe '')."""
        if self.stopped:
            return ""
        self.ids.append(token_id)
        before = self._decode(self.ids[self.window : self.read])
        now = self._decode(self.ids[self.window :])
        if len(now) > len(before) and not now.endswith("\ufffd"):
            self.decoded += now[len(before) :]
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
            # hold back the text not yet returned if it could begin a stop string
            unsent = self.decoded[self.sent :]
            hold = len(unsent) if unsent and any(s.startswith(unsent) for s in self.stop) else 0
            end = len(self.decoded) - hold
        out, self.sent = self.decoded[self.sent : end], end
        return out
