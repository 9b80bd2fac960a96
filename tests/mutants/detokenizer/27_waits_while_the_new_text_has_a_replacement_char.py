"""Tests "whole characters only" with `'\\ufffd' in new` (the newly decoded text) instead of
`new.endswith('\\ufffd')`: while the new text holds a replacement character anywhere, nothing is
taken in. A '\\ufffd' followed by more text is not a character whose bytes are still arriving but
a byte the model sampled that is no character at all (token 244 then 'one' decodes to '\\ufffdone'),
and no later token changes it: every later decode still holds it, so the stream stalls until
finish(), although that text is whole characters that cannot start a stop string. Differs e.g. for
tokens [244, 537], stop=[]: the reference shows '\\ufffdone' at the second add(), this answer only at
finish()."""

from __future__ import annotations

MUST_FAIL = {"a byte that is no character", "generated: 100 streams, one or two at once"}
MUST_SAY = "inside the text (a byte the model sampled"
CAUGHT_BY = {"hand", "generated"}
HINT_SAYS = "test the end, not the whole window"


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
        new = now[len(before) :]
        if new and "\ufffd" not in new:  # a character still being cut: wait for the rest of its bytes
            self.decoded += new
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
