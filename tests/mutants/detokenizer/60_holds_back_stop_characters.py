"""Holds back the unsent text with `rstrip("".join(self.stop))`, reading rstrip as "take off whatever
could be the start of a stop string". rstrip takes a set of characters, not a string: it holds back
every trailing character that occurs anywhere in a stop string (with stop "three four", the text
" the" waits although it is no start of it), so text that can no longer begin a stop string stalls."""

from __future__ import annotations

MUST_FAIL = {"false starts of a stop string", "generated: 100 streams, one or two at once"}
MUST_SAY = "can no longer be the start of a stop string"
CAUGHT_BY = {"hand", "generated"}
HINT_SAYS = "release held-back text as soon as the next token shows it cannot begin a stop string"


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
            # hold back the longest tail that is the start of some stop string
            unsent = self.decoded[self.sent :]
            end = self.sent + len(unsent.rstrip("".join(self.stop)))
        out, self.sent = self.decoded[self.sent : end], end
        return out
