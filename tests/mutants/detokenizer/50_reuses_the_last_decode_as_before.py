"""Saves a decode per token by reusing the last successful decode of the window as `before`, the text of
the tokens already read. But that decode started at the old window; once the window moves up to the old
read position, `before` should be the decode of ids[window:read] only, so the new text is sliced at the
wrong offset and characters are dropped from the stream."""

from __future__ import annotations

MUST_FAIL = {"plain text"}
MUST_SAY = "a token further back"
CAUGHT_BY = {"hand", "generated"}
HINT_SAYS = "the last add()'s decode began at the old window"


class IncrementalDetokenizer:
    def __init__(self, tokenizer, stop=()):
        self.tokenizer = tokenizer
        self.stop = [s for s in stop if s]
        self.ids = []
        self.decoded = ""
        self.sent = 0
        self.window = 0
        self.read = 0
        self.stopped = False
        self.last = ""  # the previous decode of the window, reused as `before`

    def add(self, token_id: int) -> str:
        if self.stopped:
            return ""
        self.ids.append(token_id)
        before = self.last  # saves one decode per token
        now = self._decode(self.ids[self.window :])
        if len(now) > len(before) and not now.endswith("\ufffd"):
            self.decoded += now[len(before) :]
            self.window, self.read = self.read, len(self.ids)
            self.last = now
        return self._release(final=False)

    def finish(self) -> str:
        if not self.stopped and self.read < len(self.ids):
            before = self._decode(self.ids[self.window : self.read])
            self.decoded += self._decode(self.ids[self.window :])[len(before) :]
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
            hold = max(
                [
                    k
                    for s in self.stop
                    for k in range(1, len(s))
                    if self.decoded.endswith(s[:k]) and k <= len(self.decoded) - self.sent
                ]
                or [0]
            )
            end = len(self.decoded) - hold
        out, self.sent = self.decoded[self.sent : end], end
        return out
