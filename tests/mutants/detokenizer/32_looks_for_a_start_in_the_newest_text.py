"""Looks for the start of a stop string only at the end of the text the newest token added, so the
tail it holds back is never longer than that text. Text held back earlier is let go as soon as the
next token extends the start of the stop string without finishing it: with the tokens of 'Colors:
red blue red green' and stop=['red blue red blue'], 'red' is held after ' red', but after ' blue'
the start 'red blue' is longer than ' blue' and goes out; had the stop string followed, part of it
would have reached the client. The start of a stop string may begin anywhere in the text not yet
returned."""

from __future__ import annotations

MUST_FAIL = {"a stop string's start over several tokens", "generated: 100 streams, one or two at once"}
MUST_SAY = "which began before the newest token's text"
CAUGHT_BY = {"hand", "generated"}
HINT_SAYS = "not only in the newest token's text"


class IncrementalDetokenizer:
    def __init__(self, tokenizer, stop=()):
        self.tokenizer = tokenizer
        self.stop = [s for s in stop if s]
        self.ids = []
        self.decoded = ""
        self.new_text = ""
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
            self.new_text = now[len(before) :]
            self.decoded += self.new_text
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
            hold = 0
            for s in self.stop:  # does the new text end in the start of a stop string?
                for k in range(min(len(s) - 1, len(self.new_text)), 0, -1):
                    if self.new_text.endswith(s[:k]) and k <= len(self.decoded) - self.sent:
                        hold = max(hold, k)
                        break
            end = len(self.decoded) - hold
        out, self.sent = self.decoded[self.sent : end], end
        return out
