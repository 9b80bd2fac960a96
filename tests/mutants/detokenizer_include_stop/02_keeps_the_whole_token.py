"""Finds the stop string but then shows everything decoded, the whole token that completed it:
the text the token carries past the end of the stop string (' welcome' for 'welc') leaks."""

MUST_FAIL = {"stretch: text after the stop string is cut", "stretch: in the real engine"}
MUST_SAY = "leaked"


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
        if any(s in self.decoded for s in self.stop):
            self.stopped = True
        return len(self.decoded)


CAUGHT_BY = {"hand", "generated"}
HINT_SAYS = "cut right after the end of the stop string, even in the middle of a token"
