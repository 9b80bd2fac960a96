"""Holds back the last WORD of the text (from the last whitespace on, clamped to what was not
returned yet) when some stop string starts with it ("stop strings are words: hold the word that
may begin one"), instead of the longest tail that is the start of a stop string. A stop string can
begin inside a word or in the middle of the text of a token, and one of several words goes out as
soon as the next word does not continue it. With stop=["ree four"] on the tokens of "one three
four": after ' three' the reference holds "ree" and cuts before it when ' four' arrives (the
answer is "one th"); this answer shows " three" whole, then never finds the stop string (it
searches only text not yet returned) and shows " four" too."""

from __future__ import annotations

import re

MUST_FAIL = {"stop string inside a token", "false starts of a stop string"}
MUST_SAY = "could still be the start of the stop string"
CAUGHT_BY = {"hand", "generated"}
HINT_SAYS = "hold back a tail that could begin a stop string"


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
            # hold back the last word if a stop string starts with it
            spaces = [m.start() for m in re.finditer(r"\s", self.decoded)]
            start = max(spaces[-1] if spaces else 0, self.sent)
            word = self.decoded[start:]
            hold = 0
            if word and any(s.startswith(word) or (word.strip() and s.startswith(word.lstrip())) for s in self.stop):
                hold = len(word)
            end = len(self.decoded) - hold
        out, self.sent = self.decoded[self.sent : end], end
        return out
