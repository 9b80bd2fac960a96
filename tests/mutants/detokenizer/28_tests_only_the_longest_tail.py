"""Holds back the text not yet returned (at most its last len(s) - 1 characters) only when ALL of
it is the start of a stop string: one tail length is tested, the longest, instead of every length
from 1 up. A shorter end of the unsent text can be the start of a stop string while the whole is
not: with stop=["three four"] on the tokens of "one two three four", the unsent text after ' three'
is ' three', not a start of the stop string, so it goes out, and 'three' (a start of it) reaches the
client before ' four' completes the stop string. With stop=[" three four"] the same answer holds
' three' back, which shows it tests only the whole tail."""

from __future__ import annotations

MUST_FAIL = {"stop string across tokens", "stop string inside a token", "false starts of a stop string"}
MUST_SAY = "a shorter end of it may still be"
CAUGHT_BY = {"hand", "generated"}
HINT_SAYS = "try every length of the tail, from 1 to len(s) - 1 characters"


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
        """One new token; return the text that is safe to show now (maybe '')."""
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
        """The request ended: return whatever is still held back (never a stop string)."""
        if not self.stopped and self.read < len(self.ids):
            # tokens that never completed a character (cut by max_tokens): their text as decoded
            before = self._decode(self.ids[self.window : self.read])
            self.decoded += self._decode(self.ids[self.window :])[len(before) :]
            self.window = self.read = len(self.ids)
        return self._release(final=True)

    def _decode(self, ids):
        return self.tokenizer.decode(ids, skip_special_tokens=True)

    def _release(self, final: bool) -> str:
        """The next piece of `decoded` that is safe to show (all of it if final), cut at a stop string."""
        if self.stopped:
            return ""
        hits = [i for i in (self.decoded.find(s, self.sent) for s in self.stop) if i >= 0]
        if hits:
            end, self.stopped = min(hits), True
        elif final:
            end = len(self.decoded)
        else:
            # hold back the unsent tail (at most len(s) - 1 characters) if it could begin a stop string
            hold = 0
            for s in self.stop:
                tail = self.decoded[max(self.sent, len(self.decoded) - (len(s) - 1)) :]
                if tail and s.startswith(tail):
                    hold = max(hold, len(tail))
            end = len(self.decoded) - hold
        out, self.sent = self.decoded[self.sent : end], end
        return out


class StopKeepingDetokenizer(IncrementalDetokenizer):
    def __init__(self, tokenizer, stop=(), include_stop_str_in_output=False):
        super().__init__(tokenizer, stop)
        self.include_stop_str_in_output = include_stop_str_in_output

    def _release(self, final: bool) -> str:
        """The next piece of `decoded` that may be shown: the base part's, or cut after a stop string."""
        if not self.include_stop_str_in_output:
            return super()._release(final)
        if self.stopped:
            return ""
        ends = []
        for s in self.stop:
            # a stop string can begin in text already returned: search from len(s) - 1 characters back
            i = self.decoded.find(s, max(0, self.sent - len(s) + 1))
            if i >= 0:
                ends.append(i + len(s))
        end = min(ends) if ends else len(self.decoded)  # the stop string that ends first wins
        self.stopped = bool(ends)
        out, self.sent = self.decoded[self.sent : end], end
        return out
