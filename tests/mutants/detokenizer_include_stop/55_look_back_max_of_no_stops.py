"""With the flag set, works out one look-back for all stop strings, `max(len(s) for s in self.stop) - 1`, in
_release(). A request with the flag and no stop strings at all makes that max() of nothing: ValueError on the
first token, where there is simply nothing to look for (use max(..., default=1) or skip the search)."""

from __future__ import annotations

MUST_FAIL = {"stretch: no stop string, and finish()", "stretch: generated: 150 streams, with and without the flag"}
MUST_SAY = "max() arg is an empty sequence"
CAUGHT_BY = {"hand", "generated"}
HINT_SAYS = "max() or min() of nothing: in this case the sequence is empty (no stop strings"


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
            out = self.decoded[self.sent : min(hits)]
            self.stopped = True
        elif final:
            out = self.decoded[self.sent :]
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
            out = self.decoded[self.sent : len(self.decoded) - hold]
        self.sent += len(out)
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
        look_back = max(len(s) for s in self.stop) - 1  # no stop string begins further back than this
        start = max(0, self.sent - look_back)
        ends = []
        for s in self.stop:
            i = self.decoded.find(s, start)
            if i >= 0:
                ends.append(i + len(s))
        end = min(ends) if ends else len(self.decoded)
        self.stopped = bool(ends)
        out, self.sent = self.decoded[self.sent : end], end
        return out
