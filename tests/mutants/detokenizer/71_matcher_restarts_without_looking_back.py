"""Finds the stop strings with one streaming matcher per stop string, fed each new character once: it counts
how many characters of the stop string match so far and, on a mismatch, starts again at 0 (or 1 if the
character begins the stop string). That forgets a start inside a false start: with stop "no no yes" the text
"no no no yes" leaves the matcher at 1 after the third "n", though "no n" already begins the stop string, so
the stop string is never seen and the text after it is shown."""

from __future__ import annotations

MUST_FAIL = {"false starts of a stop string"}
MUST_SAY = "without looking back at the characters it had already matched"
CAUGHT_BY = {"hand"}
HINT_SAYS = "look back at the characters already matched"


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
        self.fed = 0  # characters of `decoded` the matchers have seen
        self.matched = {s: 0 for s in self.stop}  # how many characters of each stop string match so far

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
        # feed every new character to one matcher per stop string (no decode of old text again)
        cut = None
        while self.fed < len(self.decoded):
            c = self.decoded[self.fed]
            self.fed += 1
            for s in self.matched:  # each distinct stop string once
                m = self.matched[s]
                if s[m] == c:
                    m += 1
                else:
                    m = 1 if s[0] == c else 0  # a mismatch: start again, maybe at this character
                if m == len(s):
                    start = self.fed - len(s)
                    cut = start if cut is None else min(cut, start)
                    m = 0
                self.matched[s] = m
        if cut is not None:
            end, self.stopped = cut, True
        elif final:
            end = len(self.decoded)
        else:
            # hold back what the matchers are in the middle of
            end = max(len(self.decoded) - max(self.matched.values(), default=0), self.sent)
        out, self.sent = self.decoded[self.sent : end], end
        return out
