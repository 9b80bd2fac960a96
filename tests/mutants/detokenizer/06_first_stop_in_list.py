"""Cuts at the first stop string of the list that occurs, not at the one that occurs first in the
text. When one token completes two stop strings, the text between them is shown, and that text
begins with the other stop string."""

MUST_FAIL = {"the earliest stop string wins"}
MUST_SAY = "cut at the earliest one"


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
        return self._release(final=True)

    def _release(self, final):
        if self.stopped:
            return ""
        for s in self.stop:
            i = self.decoded.find(s, self.sent)
            if i >= 0:
                self.stopped = True
                out, self.sent = self.decoded[self.sent : i], i
                return out
        end = len(self.decoded)
        if not final:
            end -= max(
                [
                    k
                    for s in self.stop
                    for k in range(1, len(s))
                    if self.decoded.endswith(s[:k]) and k <= len(self.decoded) - self.sent
                ]
                or [0]
            )
        out, self.sent = self.decoded[self.sent : end], end
        return out


CAUGHT_BY = {"hand", "generated"}
HINT_SAYS = "the smallest position among all stop strings"
