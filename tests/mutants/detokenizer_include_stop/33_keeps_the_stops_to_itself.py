"""Calls `super().__init__(tokenizer)` without the stop strings and keeps them in its own `self.stops`,
"the stop strings are this class's business". With the flag set that works; with the flag unset it hands
over to the base `_release`, which reads `self.stop`, now empty: the text is never cut at a stop string,
where the contract says the unset flag must behave exactly as the base part."""

from __future__ import annotations

MUST_FAIL = {"stretch: include_stop_str_in_output=False is the base part"}
MUST_SAY = "never reached"
CAUGHT_BY = {"hand", "generated"}
HINT_SAYS = "pass the stop strings on"


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
        super().__init__(tokenizer)  # the stop strings are handled in this class
        self.stops = [s for s in stop if s]
        self.include_stop_str_in_output = include_stop_str_in_output

    def _release(self, final: bool) -> str:
        if not self.include_stop_str_in_output:
            return super()._release(final)
        if self.stopped:
            return ""
        ends = []
        for s in self.stops:
            i = self.decoded.find(s, max(0, self.sent - len(s) + 1))
            if i >= 0:
                ends.append(i + len(s))
        end = min(ends) if ends else len(self.decoded)
        self.stopped = bool(ends)
        out, self.sent = self.decoded[self.sent : end], end
        return out
