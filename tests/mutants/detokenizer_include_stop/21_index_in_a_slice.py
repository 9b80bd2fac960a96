"""With the flag set, searches the stop string in a slice, `self.decoded[start:].find(s)` with
start = sent - len(s) + 1, and cuts at `i + len(s)`, forgetting that `i` counts from the slice's
start, not from the start of `decoded`: every cut after the first characters lands `start`
characters early. With stop=["two thr"] the text "one two three four five" comes out as
"one two th" (start 1), and with stop=["nan"] "I like banana split" as "I like b" (start 4); the
contract keeps the whole stop string ("one two thr", "I like banan")."""

from __future__ import annotations

MUST_FAIL = {
    "stretch: stop string across tokens, kept",
    "stretch: text after the stop string is cut",
    "stretch: generated: 150 streams, with and without the flag",
}
MUST_SAY = "is 4 characters early, the slice's start"
CAUGHT_BY = {"hand", "generated"}
HINT_SAYS = "an index found in a slice counts from the slice's start"


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
            # tokens that never completed a character (cut by max_tokens): their text as decoded
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
        if not self.include_stop_str_in_output:
            return super()._release(final)
        if self.stopped:
            return ""
        ends = []
        for s in self.stop:
            # a stop string can begin in text already returned: search from len(s) - 1 characters back
            start = max(0, self.sent - len(s) + 1)
            i = self.decoded[start:].find(s)
            if i >= 0:
                ends.append(i + len(s))
        end = min(ends) if ends else len(self.decoded)  # the stop string that ends first wins
        self.stopped = bool(ends)
        out, self.sent = self.decoded[self.sent : end], end
        return out
