"""Holds back a tail that could start a stop string, but then searches for the stop string only
in the newest decoded piece. A stop string whose start was held back from an earlier token is
never found whole, and it is shown."""

MUST_FAIL = {"stop string across tokens"}
MUST_SAY = "not only in the newest piece"


class IncrementalDetokenizer:
    def __init__(self, tokenizer, stop=()):
        self.tokenizer = tokenizer
        self.stop = [s for s in stop if s]
        self.ids = []
        self.text = ""
        self.sent = 0
        self.stopped = False

    def add(self, token_id):
        if self.stopped:
            return ""
        self.ids.append(token_id)
        text = self.tokenizer.decode(self.ids, skip_special_tokens=True)
        if text.endswith("\ufffd"):
            return ""
        piece = text[len(self.text) :]
        self.text = text
        for s in self.stop:
            if s in piece:
                self.stopped = True
                end = len(text) - len(piece) + piece.index(s)
                out, self.sent = text[self.sent : end], end
                return out
        hold = max(
            [k for s in self.stop for k in range(1, len(s)) if text.endswith(s[:k]) and k <= len(text) - self.sent]
            or [0]
        )
        out, self.sent = text[self.sent : len(text) - hold], len(text) - hold
        return out

    def finish(self):
        if self.stopped:
            return ""
        out, self.sent = self.text[self.sent :], len(self.text)
        return out


CAUGHT_BY = {"hand", "generated"}
HINT_SAYS = "look for stop strings in all the text not yet returned"
