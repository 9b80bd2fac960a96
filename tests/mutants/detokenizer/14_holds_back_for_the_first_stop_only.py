"""Holds back a tail that could begin the first stop string of the list, and forgets the others:
with several stop strings, the start of the second one goes out, and the client sees half of it
before the cut."""

MUST_FAIL = {"generated: 100 streams, one or two at once"}
MUST_SAY = "first difference"
CAUGHT_BY = {"hand", "generated"}
HINT_SAYS = "not only the first"


class IncrementalDetokenizer:
    def __init__(self, tokenizer, stop=()):
        self.tokenizer = tokenizer
        self.stop = [s for s in stop if s]
        self.ids = []
        self.decoded = ""
        self.sent = 0
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
        if not self.stopped:
            self.decoded = self.tokenizer.decode(self.ids, skip_special_tokens=True)
        return self._release(final=True)

    def _release(self, final):
        if self.stopped:
            return ""
        hits = [i for i in (self.decoded.find(s, self.sent) for s in self.stop) if i >= 0]
        if hits:
            self.stopped = True
            out, self.sent = self.decoded[self.sent : min(hits)], min(hits)
            return out
        end = len(self.decoded)
        if not final and self.stop:
            first = self.stop[0]
            for k in range(min(len(first) - 1, end - self.sent), 0, -1):
                if self.decoded.endswith(first[:k]):
                    end -= k
                    break
        out, self.sent = self.decoded[self.sent : end], end
        return out
