"""Cuts the text at a stop string once it is complete, but shows everything before that at once.
When a stop string spans tokens, its first half has already gone to the client when the second
half arrives."""

MUST_FAIL = {"stop string across tokens"}
MUST_SAY = "hold it back"


class IncrementalDetokenizer:
    def __init__(self, tokenizer, stop=()):
        self.tokenizer = tokenizer
        self.stop = [s for s in stop if s]
        self.ids = []
        self.sent = 0
        self.stopped = False

    def add(self, token_id):
        if self.stopped:
            return ""
        self.ids.append(token_id)
        text = self.tokenizer.decode(self.ids, skip_special_tokens=True)
        if text.endswith("\ufffd"):
            return ""
        end = len(text)
        for s in self.stop:
            i = text.find(s)
            if i >= 0:
                end, self.stopped = min(end, i), True
        out = text[self.sent : end] if end > self.sent else ""
        self.sent = max(self.sent, end)
        return out

    def finish(self):
        return ""


CAUGHT_BY = {"hand", "generated"}
HINT_SAYS = "hold back a tail that could begin a stop string"
