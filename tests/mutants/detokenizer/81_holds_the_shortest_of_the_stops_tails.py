"""Works out, for each stop string, the longest tail of the text that begins it (right), then holds
back the SHORTEST of those tails across the stop strings ("hold back as little as possible"). With
two stop strings whose starts both end the text, e.g. "one two" and "two" after "one tw", only "tw"
is held and "one " goes out: part of a stop string shown. The tail to hold is the longest of all."""

from __future__ import annotations

MUST_FAIL = {"the earliest stop string wins", "generated: 100 streams, one or two at once"}
MUST_SAY = "you held back only 'o'"
CAUGHT_BY = {"hand", "generated"}
HINT_SAYS = "the longest tail that could begin any of them"


class IncrementalDetokenizer:
    def __init__(self, tokenizer, stop=()):
        self.tokenizer = tokenizer
        self.stop = [s for s in stop if s]
        self.ids = []
        self.decoded = ""
        self.sent = 0
        self.window = 0
        self.read = 0
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
            # per stop string, the longest tail of the text that begins it; then hold back as
            # little as possible: the shortest of those tails (stop strings whose start is not there don't count)
            tails = []
            for s in self.stop:
                ks = [
                    k for k in range(1, len(s)) if self.decoded.endswith(s[:k]) and k <= len(self.decoded) - self.sent
                ]
                if ks:
                    tails.append(max(ks))
            hold = min(tails) if tails else 0
            end = len(self.decoded) - hold
        out, self.sent = self.decoded[self.sent : end], end
        return out
