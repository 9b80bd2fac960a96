"""Holds back the longest tail that begins a stop string, looks for stop strings only in the text
it is about to release, and flushes the held tail in finish() without looking. With
stop=["three", "three four"] the text "three" is held as the start of "three four" although it is
a whole stop string itself; the scheduler ends the request on that very token, and finish() shows
the stop string to the client."""

MUST_FAIL = {"a stop string that begins another"}
MUST_SAY = "finish() must still cut"


class IncrementalDetokenizer:
    def __init__(self, tokenizer, stop=()):
        self.tokenizer = tokenizer
        self.stop = [s for s in stop if s]
        self.ids = []
        self.decoded = ""
        self.sent = 0
        self.stopped = False

    def add(self, token_id):
        if self.stopped:
            return ""
        self.ids.append(token_id)
        text = self.tokenizer.decode(self.ids, skip_special_tokens=True)
        if text.endswith("\ufffd"):
            return ""
        self.decoded = text
        hold = max(
            [k for s in self.stop for k in range(1, len(s)) if text.endswith(s[:k]) and k <= len(text) - self.sent]
            or [0]
        )
        end = len(text) - hold
        piece = text[self.sent : end]
        hits = [i for i in (piece.find(s) for s in self.stop) if i >= 0]
        if hits:
            piece, self.stopped = piece[: min(hits)], True
        self.sent = end
        return piece

    def finish(self):
        if self.stopped:
            return ""
        out, self.sent = self.decoded[self.sent :], len(self.decoded)
        return out


CAUGHT_BY = {"hand", "generated"}
HINT_SAYS = "finish() looks for stop strings too"
