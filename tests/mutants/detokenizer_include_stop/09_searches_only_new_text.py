"""Releases text at once (right: with the flag set nothing needs holding back), but then looks
for stop strings only in the text not yet returned. A stop string that begins in text already
shown ('three' of 'three four') is never found whole, and everything after it leaks."""

MUST_FAIL = {"stretch: stop string across tokens, kept"}
MUST_SAY = "already returned"


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
        ends = []
        for s in self.stop:
            i = self.decoded.find(s, self.sent)
            if i >= 0:
                ends.append(i + len(s))
        if ends:
            self.stopped = True
            return min(ends)
        return len(self.decoded)


CAUGHT_BY = {"hand", "generated"}
HINT_SAYS = "a stop string may begin in text already returned"
