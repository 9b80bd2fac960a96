"""finish() releases the held-back tail (searched for stop strings) and then appends the text of
the tokens that never completed a character (cut by max_tokens) without searching it. That text
can complete a stop string begun in the held-back tail: 'one two.' then ' \ufffd' with
stop='. ' holds '.' back, and the flushed ' \ufffd' completes '. ', so the answer is 'one two';
this one shows the stop string and what follows it ('one two. \ufffd'). Everything finish()
releases is searched, like add()'s text."""

from __future__ import annotations

MUST_FAIL = {"held-back text at finish()"}
MUST_SAY = "finish() did not search the text it released"
CAUGHT_BY = {"hand"}
HINT_SAYS = "the tokens it flushes (cut by max_tokens inside a character) can complete a stop string"


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
        """One new token; return the text that is safe to show now (maybe '')."""
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
        """The request ended: return what is held back, then the text of unfinished tokens."""
        out = self._release(final=True)  # the held-back tail, searched for stop strings
        if not self.stopped and self.read < len(self.ids):
            # tokens that never completed a character (cut by max_tokens): their text as decoded
            before = self._decode(self.ids[self.window : self.read])
            tail = self._decode(self.ids[self.window :])[len(before) :]
            self.decoded += tail
            self.sent = len(self.decoded)
            self.window = self.read = len(self.ids)
            out += tail
        return out

    def _decode(self, ids):
        return self.tokenizer.decode(ids, skip_special_tokens=True)

    def _release(self, final: bool) -> str:
        """The next piece of `decoded` that is safe to show (all of it if final), cut at a stop string."""
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
