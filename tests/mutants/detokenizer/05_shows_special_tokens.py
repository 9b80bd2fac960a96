"""Decodes with the tokenizer's default, which keeps special tokens: the chat model's
end-of-turn marker <|im_end|> shows up at the end of every answer."""

MUST_FAIL = {"special tokens skipped"}
MUST_SAY = "skip_special_tokens=True"


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
        text = self.tokenizer.decode(self.ids)
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


CAUGHT_BY = {"hand", "generated"}
HINT_SAYS = "skip_special_tokens=True"
