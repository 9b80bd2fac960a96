"""Holds text back from the first place where a stop string could begin, and keeps holding from
there until the stop string completes or the request ends. After a false start ("three" followed
by " two" when the stop string is "three four") everything that follows waits, although it is
known by then not to be the stop string: the stream stalls until finish()."""

MUST_FAIL = {"false starts of a stop string"}
MUST_SAY = "can no longer be the start of a stop string"


class IncrementalDetokenizer:
    def __init__(self, tokenizer, stop=()):
        self.tokenizer = tokenizer
        self.stop = [s for s in stop if s]
        self.ids = []
        self.decoded = ""
        self.sent = 0
        self.holding = False
        self.stopped = False

    def add(self, token_id):
        if self.stopped:
            return ""
        self.ids.append(token_id)
        text = self.tokenizer.decode(self.ids, skip_special_tokens=True)
        if not text.endswith("\ufffd"):
            self.decoded = text
        return self._release(final=False)

    def finish(self):
        return self._release(final=True)

    def _release(self, final):
        if self.stopped:
            return ""
        hits = [i for i in (self.decoded.find(s, self.sent) for s in self.stop) if i >= 0]
        if hits:
            end, self.stopped = min(hits), True
        elif final:
            end = len(self.decoded)
        elif self.holding:
            end = self.sent
        else:
            hold = max([k for s in self.stop for k in range(1, len(s)) if self.decoded.endswith(s[:k])] or [0])
            self.holding = hold > 0
            end = len(self.decoded) - hold
        out, self.sent = self.decoded[self.sent : end], end
        return out


CAUGHT_BY = {"hand", "generated"}
HINT_SAYS = "as soon as the next token shows it cannot begin a stop string"
