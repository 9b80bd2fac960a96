"""Holds back a fixed tail of len(longest stop string) - 1 characters after every token instead
of the longest tail that really is the start of a stop string ("any stop string still completing
fits in there"). Nothing of a stop string is ever shown and finish() returns the rest, but text that
cannot begin any stop string waits anyway, and the contract says it goes out with the token that
decodes it. With stop=["three four"] on the tokens of "Hello world", after ' world' the answer
has returned "Hello world", this one "He" (9 characters held back)."""

MUST_FAIL = {"false starts of a stop string", "generated: 100 streams, one or two at once"}
MUST_SAY = "was already safe to show"
CAUGHT_BY = {"hand", "generated"}
HINT_SAYS = "release held-back text as soon as the next token shows it cannot begin a stop string"


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
            # a stop string may still be completing: keep its length minus one character back
            hold = max([len(s) - 1 for s in self.stop] or [0])
            end = max(len(self.decoded) - hold, self.sent)
        out, self.sent = self.decoded[self.sent : end], end
        return out
