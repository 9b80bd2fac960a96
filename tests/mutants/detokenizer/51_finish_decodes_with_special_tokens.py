"""In finish(), flushes the tokens that never completed a character with a plain `tokenizer.decode(...)`,
without `skip_special_tokens=True` (add() goes through `_decode`). A special token adds no text in add(),
so a stream that ends with `<|im_end|>` still has it unread at finish(), and this flush shows
"<|im_end|>" to the client, where the contract's text is the decode that skips special tokens."""

from __future__ import annotations

MUST_FAIL = {"special tokens skipped"}
MUST_SAY = "<|im_end|>"
CAUGHT_BY = {"hand", "generated"}
HINT_SAYS = "skip_special_tokens=True"


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
            before = self.tokenizer.decode(self.ids[self.window : self.read])
            self.decoded += self.tokenizer.decode(self.ids[self.window :])[len(before) :]
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
