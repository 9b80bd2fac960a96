"""Works out the text already taken from the last token it read alone,
`before = decode(ids[read - 1:read])`, instead of from the window's tokens before `read`
(`decode(ids[window:read])`). After a step that completed a character spread over several tokens
the window holds more than one read token, the two decodes differ in length, and slicing `now` by
the wrong length drops or repeats characters of the next piece."""

from __future__ import annotations

MUST_FAIL = {"characters spanning tokens", "a byte that is no character"}
MUST_SAY = "the last read token decoded alone"
CAUGHT_BY = {"hand", "generated"}
HINT_SAYS = "the last read token alone decodes to other text"


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
        before = self._decode(self.ids[self.read - 1 : self.read]) if self.read else ""
        now = self._decode(self.ids[self.window :])
        if len(now) > len(before) and not now.endswith("\ufffd"):
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
