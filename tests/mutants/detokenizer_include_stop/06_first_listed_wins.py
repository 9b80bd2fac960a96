"""Takes the first stop string of the list that is found and cuts after it. When one token
completes two stop strings, the one listed first is not always the one that ends first: the
client is shown text past the end of the stop string that completed first."""

MUST_FAIL = {"stretch: the first stop string to complete wins", "stretch: in the real engine"}
MUST_SAY = "whatever its place in the list"


class StopKeepingDetokenizer:
    def __init__(self, tokenizer, stop=(), include_stop_str_in_output=False):
        self.tokenizer = tokenizer
        self.stop = [s for s in stop if s]
        self.include = include_stop_str_in_output
        self.ids = []
        self.decoded = ""  # whole characters decoded so far
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

    def _cut_before(self, final):
        hits = [i for i in (self.decoded.find(s, self.sent) for s in self.stop) if i >= 0]
        if hits:
            self.stopped = True
            return min(hits)
        if final:
            return len(self.decoded)
        pending = len(self.decoded) - self.sent
        hold = [k for s in self.stop for k in range(1, len(s)) if k <= pending and self.decoded.endswith(s[:k])]
        return len(self.decoded) - max(hold or [0])

    def _release(self, final):
        if self.stopped:
            return ""
        end = self._cut_after() if self.include else self._cut_before(final)
        out, self.sent = self.decoded[self.sent : end], end
        return out

    def _cut_after(self):
        for s in self.stop:
            i = self.decoded.find(s, max(0, self.sent - len(s) + 1))
            if i >= 0:
                self.stopped = True
                return i + len(s)
        return len(self.decoded)


CAUGHT_BY = {"hand", "generated"}
HINT_SAYS = "not the one listed first"
