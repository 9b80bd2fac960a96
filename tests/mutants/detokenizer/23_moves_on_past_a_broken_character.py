"""Moves the decode window on after every token (window, read = read, len(ids)), also when the new
text ends in '\ufffd' and is not appended ("that token is done with"). The bytes of a character
that spans tokens are then behind the read offset when its last byte token arrives: the window's
earlier part decodes to 'x\ufffd' and the whole to 'x北', the same length, so nothing new is seen
and the character is lost for good (the joined pieces miss every CJK character or emoji that
spans tokens). Differs e.g. on the tokens of "北京" (two tokens each): the reference's pieces join
to "北京", this answer's to ""."""

from __future__ import annotations

MUST_FAIL = {"characters spanning tokens", "stop string of CJK characters"}
MUST_SAY = "never comes out"
CAUGHT_BY = {"hand", "generated"}
HINT_SAYS = "do not move the offsets on"


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
