"""Returns the text up to the end of the stop string from add(), but forgets to move `sent`
on that path, and finish() hands out the rest up to the cut again: the stop string (and what
was held back before it) reaches the client twice."""

MUST_FAIL = {"stretch: stop string across tokens, kept"}
MUST_SAY = "shown twice"


class StopKeepingDetokenizer:
    def __init__(self, tokenizer, stop=(), include_stop_str_in_output=False):
        self.tokenizer = tokenizer
        self.stop = [s for s in stop if s]
        self.include = include_stop_str_in_output
        self.ids = []
        self.decoded = ""  # whole characters decoded so far
        self.sent = 0
        self.stopped = False
        self.cut = None

    def add(self, token_id):
        if self.stopped:
            return ""
        self.ids.append(token_id)
        text = self.tokenizer.decode(self.ids, skip_special_tokens=True)
        if not text.endswith("\ufffd"):
            self.decoded = text
        return self._release(final=False)

    def finish(self):
        if self.cut is not None:
            return self.decoded[self.sent : self.cut]
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
        if self.include:
            ends = []
            for s in self.stop:
                i = self.decoded.find(s, max(0, self.sent - len(s) + 1))
                if i >= 0:
                    ends.append(i + len(s))
            if ends:
                self.stopped = True
                self.cut = min(ends)
                return self.decoded[self.sent : self.cut]
        end = self._cut_before(final)
        out, self.sent = self.decoded[self.sent : end], end
        return out


CAUGHT_BY = {"hand", "generated"}
HINT_SAYS = "finish() has nothing left: move what was sent past it"
