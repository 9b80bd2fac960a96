"""Finds the tail to hold back by testing, for every k, whether the stop string starts with the last k
characters of the text (`s.startswith(self.decoded[-k:])`). When the text is shorter than k the
slice is the whole text, so a short text that begins a stop string counts as a start of length k,
longer than the text: the cut `len(decoded) - hold` goes negative and `sent` with it. The next piece
is then sliced from a negative index, only the last characters of the text, and what comes before
them is never shown. E.g. stop=["Three four"] on 'Th answering': after 'Th' the cut is -7, and the
pieces join to 'swering'."""

from __future__ import annotations

MUST_FAIL = {"false starts of a stop string"}
MUST_SAY = "the last 7 characters only"
CAUGHT_BY = {"hand", "generated"}
HINT_SAYS = "the held-back tail can never be longer than the text not yet returned"


class IncrementalDetokenizer:
    def __init__(self, tokenizer, stop=()):
        self.tokenizer = tokenizer
        self.stop = [s for s in stop if s]
        ### BEGIN SOLUTION
        ### HINT: see the contract above
        self.ids = []
        self.decoded = ""  # complete characters decoded so far
        self.sent = 0  # how much of `decoded` was returned
        self.window = 0  # decode from here: one step back, so leading spaces come out right
        self.read = 0  # ids before this are already in `decoded`
        self.stopped = False
        ### END SOLUTION

    def add(self, token_id: int) -> str:
        """One new token; return the text that is safe to show now (maybe '')."""
        ### BEGIN SOLUTION
        ### HINT: see the contract above
        if self.stopped:
            return ""
        self.ids.append(token_id)
        before = self._decode(self.ids[self.window : self.read])
        now = self._decode(self.ids[self.window :])
        if len(now) > len(before) and not now.endswith("\ufffd"):
            self.decoded += now[len(before) :]
            self.window, self.read = self.read, len(self.ids)
        return self._release(final=False)
        ### END SOLUTION

    def finish(self) -> str:
        """The request ended: return whatever is still held back (never a stop string)."""
        ### BEGIN SOLUTION
        ### HINT: see the contract above
        if not self.stopped and self.read < len(self.ids):
            # tokens that never completed a character (cut by max_tokens): their text as decoded
            before = self._decode(self.ids[self.window : self.read])
            self.decoded += self._decode(self.ids[self.window :])[len(before) :]
            self.window = self.read = len(self.ids)
        return self._release(final=True)
        ### END SOLUTION

    def _decode(self, ids):
        return self.tokenizer.decode(ids, skip_special_tokens=True)

    def _release(self, final: bool) -> str:
        """The next piece of `decoded` that is safe to show (all of it if final), cut at a stop string."""
        ### BEGIN SOLUTION
        ### HINT: see the contract above
        if self.stopped:
            return ""
        hits = [i for i in (self.decoded.find(s, self.sent) for s in self.stop) if i >= 0]
        if hits:
            end, self.stopped = min(hits), True
        elif final:
            end = len(self.decoded)
        else:
            # hold back the longest tail that is the start of some stop string
            hold = max([k for s in self.stop for k in range(1, len(s)) if s.startswith(self.decoded[-k:])] or [0])
            end = len(self.decoded) - hold
        out, self.sent = self.decoded[self.sent : end], end
        return out
        ### END SOLUTION


class StopKeepingDetokenizer(IncrementalDetokenizer):
    def __init__(self, tokenizer, stop=(), include_stop_str_in_output=False):
        super().__init__(tokenizer, stop)
        ### BEGIN SOLUTION
        ### HINT: see the contract above
        self.include_stop_str_in_output = include_stop_str_in_output
        ### END SOLUTION

    def _release(self, final: bool) -> str:
        """The next piece of `decoded` that may be shown: the base part's, or cut after a stop string."""
        ### BEGIN SOLUTION
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
        ### END SOLUTION
