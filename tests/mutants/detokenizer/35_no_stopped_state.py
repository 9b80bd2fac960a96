"""Cuts at the stop string but keeps no "stopped" state: on a hit it truncates its decoded text
(`self.decoded = self.decoded[:end]`) and carries on. The next tokens decode after the cut and
their text goes to the client, so "one two three four five" with stop=["three four"] comes out as
"one two  five". The request ends on the token that completes a stop string: once one is found the
answer is complete, and every later add() and finish() returns ''."""

from __future__ import annotations

MUST_FAIL = {"stop string across tokens", "generated: 100 streams, one or two at once"}
MUST_SAY = "the whole answer, cut before it; then ' five' was returned"
CAUGHT_BY = {"hand", "generated"}
HINT_SAYS = "once a stop string is found the answer is complete: remember that it stopped"


class IncrementalDetokenizer:
    def __init__(self, tokenizer, stop=()):
        self.tokenizer = tokenizer
        self.stop = [s for s in stop if s]
        self.ids = []
        self.decoded = ""  # complete characters decoded so far
        self.sent = 0  # how much of `decoded` was returned
        self.window = 0  # decode from here: one step back, so leading spaces come out right
        self.read = 0  # ids before this are already in `decoded`

    def add(self, token_id: int) -> str:
        self.ids.append(token_id)
        before = self._decode(self.ids[self.window : self.read])
        now = self._decode(self.ids[self.window :])
        if len(now) > len(before) and not now.endswith("\ufffd"):
            self.decoded += now[len(before) :]
            self.window, self.read = self.read, len(self.ids)
        return self._release(final=False)

    def finish(self) -> str:
        if self.read < len(self.ids):
            before = self._decode(self.ids[self.window : self.read])
            self.decoded += self._decode(self.ids[self.window :])[len(before) :]
            self.window = self.read = len(self.ids)
        return self._release(final=True)

    def _decode(self, ids):
        return self.tokenizer.decode(ids, skip_special_tokens=True)

    def _release(self, final: bool) -> str:
        hits = [i for i in (self.decoded.find(s, self.sent) for s in self.stop) if i >= 0]
        if hits:
            end = min(hits)
            self.decoded = self.decoded[:end]  # the stop string and what follows it are gone
        elif final:
            end = len(self.decoded)
        else:
            tails = [
                k
                for s in self.stop
                for k in range(1, len(s))
                if self.decoded.endswith(s[:k]) and k <= len(self.decoded) - self.sent
            ]
            end = len(self.decoded) - max(tails or [0])
        out, self.sent = self.decoded[self.sent : end], end
        return out
