"""For each stop string, tries the tail lengths from 1 up and stops at the first one the text ends
with (`break`), so it holds back the SHORTEST tail that begins the stop string, not the longest. A
stop string whose start recurs inside it ('abab' after 'aba', 'red blue red blue' after 'red blue
red') has a shorter start at the end of the longer one: with the tokens of 'Colors: red blue red
green' and stop=['red blue red blue'], after the second ' red' only 'red' is held and 'red blue '
is shown, although it is part of the stop string if ' blue' follows."""

from __future__ import annotations

MUST_FAIL = {"a stop string's start over several tokens", "generated: 100 streams, one or two at once"}
MUST_SAY = "is a shorter start of it"
CAUGHT_BY = {"hand", "generated"}
HINT_SAYS = "the longest tail that could begin a stop string"


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
            hold = 0
            for s in self.stop:
                for k in range(1, len(s)):
                    if self.decoded.endswith(s[:k]) and k <= len(self.decoded) - self.sent:
                        hold = max(hold, k)
                        break  # the stop string could begin here
            end = len(self.decoded) - hold
        out, self.sent = self.decoded[self.sent : end], end
        return out
