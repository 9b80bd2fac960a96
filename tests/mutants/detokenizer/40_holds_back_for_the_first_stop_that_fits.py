"""Works the held-back tail out stop string by stop string, in list order, and the first stop string
whose start the text ends with decides it (break): a later stop string whose longer start the text
also ends with is never looked at. With stop=['o!', 'two three'] the text 'one two' ends in 'o' (of
'o!') and in 'two' (of 'two three'): it holds back only 'o' and shows 'tw', part of the stop string
that the next token completes. The tail to hold back is the longest that could begin any of them."""

from __future__ import annotations

MUST_FAIL = {"the earliest stop string wins", "generated: 100 streams, one or two at once"}
MUST_SAY = "the order of the list decided"
CAUGHT_BY = {"hand", "generated"}
HINT_SAYS = "the longest tail that could begin any of them (here 'two'), not a shorter one, whatever the order"


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
            # tokens that never completed a character (cut by max_tokens): their text as decoded
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
            # hold back the longest tail that is the start of a stop string, one stop string at a time
            pending = len(self.decoded) - self.sent
            hold = 0
            for s in self.stop:
                starts = [k for k in range(1, len(s)) if k <= pending and self.decoded.endswith(s[:k])]
                if starts:
                    hold = max(starts)
                    break
            end = len(self.decoded) - hold
        out, self.sent = self.decoded[self.sent : end], end
        return out
