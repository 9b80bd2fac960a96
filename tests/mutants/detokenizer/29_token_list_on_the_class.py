"""Keeps the growing token list in the class body (`ids = []`) and appends to `self.ids`, which
finds the class's list: every object shares it. The worker builds one object per request, so
each stream decodes the tokens of every stream before it (even the first request graded shows
the text of an earlier one), and two requests at once mix their tokens."""

from __future__ import annotations

MUST_FAIL = {"plain text", "two requests at once"}
MUST_SAY = "the objects share their state"
CAUGHT_BY = {"hand", "generated"}
HINT_SAYS = "keep all state on self, set in __init__: state kept on the class"


class IncrementalDetokenizer:
    ids = []

    def __init__(self, tokenizer, stop=()):
        self.tokenizer = tokenizer
        self.stop = [s for s in stop if s]
        self.decoded = ""
        self.sent = 0
        self.window = 0
        self.read = 0
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
            tails = [
                k
                for s in self.stop
                for k in range(1, len(s))
                if self.decoded.endswith(s[:k]) and k <= len(self.decoded) - self.sent
            ]
            end = len(self.decoded) - max(tails, default=0)
        out, self.sent = self.decoded[self.sent : end], end
        return out
