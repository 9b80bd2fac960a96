"""With the flag set, starts the look-back search for a stop string at `self.read - len(s) + 1`, reading
`self.read` (how many TOKENS are decoded) where it means `self.sent` (how many CHARACTERS of the text were
returned). Where a character takes several tokens (CJK, emoji) read runs ahead of sent, the search starts
past the beginning of a stop string that began in text already returned, and that stop string is missed:
'o' in 'one' (after the one token 'one', read is 1 while sent is 0) and '🚀' in 'ok 🙂🚀 done'."""

from __future__ import annotations

MUST_FAIL = {"stretch: characters spanning tokens"}
MUST_SAY = "not from sent, the number of characters returned"
CAUGHT_BY = {"hand", "generated"}
HINT_SAYS = "not from read, the tokens decoded"


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
            i = self.decoded.find(s, max(0, self.read - len(s) + 1))
            if i >= 0:
                ends.append(i + len(s))
        end = min(ends) if ends else len(self.decoded)  # the stop string that ends first wins
        self.stopped = bool(ends)
        out, self.sent = self.decoded[self.sent : end], end
        return out
