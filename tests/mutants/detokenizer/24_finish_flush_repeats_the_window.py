"""At finish(), flushes the tokens that never completed a character (or decoded to nothing, like a
special token) by appending the decode of ids[window:] whole, forgetting to cut off the text of the
look-back token already in `decoded`: that token's text was returned by an add() already, and the
client is shown it twice. Differs e.g. for "Hello there" followed by <|im_end|>: the reference
joins to 'Hello there', this answer to 'Hello there there'."""

from __future__ import annotations

MUST_FAIL = {"special tokens skipped"}
MUST_SAY = "which repeats"
CAUGHT_BY = {"hand", "generated"}
HINT_SAYS = "finish() returns only text not yet returned"


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
        if not self.stopped and self.read < len(self.ids):
            # tokens that never completed a character (cut by max_tokens): their text as decoded
            self.decoded += self._decode(self.ids[self.window :])
            self.window = self.read = len(self.ids)
        return self._release(final=True)

    def _decode(self, ids):
        return self.tokenizer.decode(ids, skip_special_tokens=True)

    def _release(self, final: bool) -> str:
        if self.stopped:
            return ""
        hits = [i for i in (self.decoded.find(s, self.sent) for s in self.stop) if i >= 0]
        if hits:
            end, self.stopped = min(hits), True
        elif final:
            end = len(self.decoded)
        else:
            # hold back the longest tail that is the start of some stop string
            pending = len(self.decoded) - self.sent
            starts = [k for s in self.stop for k in range(1, len(s)) if k <= pending and self.decoded.endswith(s[:k])]
            end = len(self.decoded) - max(starts or [0])
        out, self.sent = self.decoded[self.sent : end], end
        return out
