"""With the flag set, cuts at `i + len(s) + 1`, "one past the last character of the stop string", where
i + len(s) already is one past it (an exclusive end): one character after the stop string is shown
('one two thre' for stop 'wo thr') whenever the completing token carries text past it; at a token end
the slice is clamped and the answer looks right. Cut at i + len(s)."""

from __future__ import annotations

MUST_FAIL = {
    "stretch: stop string across tokens, kept",
    "stretch: text after the stop string is cut",
    "stretch: no stop string, and finish()",
}
MUST_SAY = "exactly one character past the stop string"
CAUGHT_BY = {"hand", "generated"}
HINT_SAYS = "so cut at i + len(s), not i + len(s) + 1"


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
            # hold back the longest tail that is the start of some stop string
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
                ends.append(i + len(s) + 1)  # one past the stop string's last character
        end = min(ends) if ends else len(self.decoded)  # the stop string that ends first wins
        self.stopped = bool(ends)
        out, self.sent = self.decoded[self.sent : end], end
        return out
