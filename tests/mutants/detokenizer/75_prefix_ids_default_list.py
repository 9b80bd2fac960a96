"""Takes an optional `prefix_ids=[]` (the prompt's last tokens as decode context) and keeps it as the
token list, `self.ids = prefix_ids`, with no copy. The default list is built once, when the def line
runs, so every object built without it (the worker passes only tokenizer and stop) appends to the SAME
list, and two requests streaming at once decode each other's tokens."""

from __future__ import annotations

MUST_FAIL = {"two requests at once"}
MUST_SAY = "the default value of __init__'s parameter"
CAUGHT_BY = {"hand", "generated"}
HINT_SAYS = "a mutable default argument kept as state"


class IncrementalDetokenizer:
    def __init__(self, tokenizer, stop=(), prefix_ids=[]):
        self.tokenizer = tokenizer
        self.stop = [s for s in stop if s]
        self.ids = prefix_ids  # tokens before the answer (none by default) give the first token its context
        self.decoded = ""  # complete characters decoded so far
        self.sent = 0  # how much of `decoded` was returned
        self.window = max(0, len(prefix_ids) - 1)  # decode from here: one step back
        self.read = len(prefix_ids)  # ids before this are already in `decoded` (or are the prefix)
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
