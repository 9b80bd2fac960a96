"""Tests "whole characters only" with `now[-1] == '\ufffd'` ("the decoded window ends in half a
character") before it compares lengths. When the window decodes to no text at all, as it does when
the first generated token is a special token (an EOS the model emits at once, or with ignore_eos),
`now[-1]` raises IndexError and the stream dies instead of returning ''."""

from __future__ import annotations

MUST_FAIL = {"generated: 100 streams, one or two at once"}
MUST_SAY = "whose window decodes to ''"
CAUGHT_BY = {"generated"}
HINT_SAYS = "the window can decode to no text at all"


class IncrementalDetokenizer:
    def __init__(self, tokenizer, stop=()):
        self.tokenizer = tokenizer
        self.stop = [s for s in stop if s]
        ### BEGIN SOLUTION
        ### HINT: see the contract above
        self.ids = []
        self.decoded = ""  # complete characters decoded so far
        self.sent = 0  # how much of `decoded` was returned
        self.window = 0  # decode from here: one step back, so leading spaces come out right
        self.read = 0  # ids before this are already in `decoded`
        self.stopped = False
        ### END SOLUTION

    def add(self, token_id: int) -> str:
        """One new token; return the text that is safe to show now (maybe '')."""
        ### BEGIN SOLUTION
        ### HINT: see the contract above
        if self.stopped:
            return ""
        self.ids.append(token_id)
        before = self._decode(self.ids[self.window : self.read])
        now = self._decode(self.ids[self.window :])
        if now[-1] != "\ufffd" and len(now) > len(before):
            self.decoded += now[len(before) :]
            self.window, self.read = self.read, len(self.ids)
        return self._release(final=False)
        ### END SOLUTION

    def finish(self) -> str:
        """The request ended: return whatever is still held back (never a stop string)."""
        ### BEGIN SOLUTION
        ### HINT: see the contract above
        if not self.stopped and self.read < len(self.ids):
            # tokens that never completed a character (cut by max_tokens): their text as decoded
            before = self._decode(self.ids[self.window : self.read])
            self.decoded += self._decode(self.ids[self.window :])[len(before) :]
            self.window = self.read = len(self.ids)
        return self._release(final=True)
        ### END SOLUTION

    def _decode(self, ids):
        return self.tokenizer.decode(ids, skip_special_tokens=True)

    def _release(self, final: bool) -> str:
        """The next piece of `decoded` that is safe to show (all of it if final), cut at a stop string."""
        ### BEGIN SOLUTION
        ### HINT: see the contract above
        if self.stopped:
            return ""
        hits = [i for i in (self.decoded.find(s, self.sent) for s in self.stop) if i >= 0]
        if hits:
            end, self.stopped = min(hits), True
        elif final:
            end = len(self.decoded)
        else:
            # hold back the longest tail that is the start of some stop string
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
        ### END SOLUTION
