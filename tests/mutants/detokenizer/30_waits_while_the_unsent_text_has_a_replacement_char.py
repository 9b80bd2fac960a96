"""Decodes every token so far and shows the text past what it returned, but waits while that text
holds a '\\ufffd' anywhere (`'\\ufffd' in new`), not only at its end. A byte token that is no
character on its own (a model may sample one anywhere) decodes to '\\ufffd' for good: no later
token completes it, so from there on the unsent text always holds it, and the rest of the answer
comes out only at finish(). Only a decode that ends in '\\ufffd' may be a character still being
cut. Differs e.g. for the tokens of 'one two', byte 244, then ' three four': the reference shows
'\\ufffd three' with the token ' three', this answer nothing until finish()."""

from __future__ import annotations

MUST_FAIL = {"a byte that is no character", "generated: 100 streams, one or two at once"}
MUST_SAY = "no later token completes it"
CAUGHT_BY = {"hand", "generated"}
HINT_SAYS = "test the end, not the whole window"


class IncrementalDetokenizer:
    def __init__(self, tokenizer, stop=()):
        self.tokenizer = tokenizer
        self.stop = [s for s in stop if s]
        self.ids = []
        self.text = ""  # the whole characters decoded so far
        self.sent = 0
        self.stopped = False

    def add(self, token_id: int) -> str:
        if self.stopped:
            return ""
        self.ids.append(token_id)
        whole = self.tokenizer.decode(self.ids, skip_special_tokens=True)
        new = whole[len(self.text) :]
        if "\ufffd" in new:  # part of a character: wait for its other bytes
            return ""
        self.text = whole
        return self._out(final=False)

    def finish(self) -> str:
        if self.stopped:
            return ""
        self.text = self.tokenizer.decode(self.ids, skip_special_tokens=True)
        return self._out(final=True)

    def _out(self, final: bool) -> str:
        cuts = [i for i in (self.text.find(s, self.sent) for s in self.stop) if i >= 0]
        if cuts:
            end, self.stopped = min(cuts), True
        elif final:
            end = len(self.text)
        else:
            unsent = len(self.text) - self.sent
            held = [k for s in self.stop for k in range(1, min(len(s), unsent + 1)) if self.text.endswith(s[:k])]
            end = len(self.text) - max(held, default=0)
        out, self.sent = self.text[self.sent : end], end
        return out
