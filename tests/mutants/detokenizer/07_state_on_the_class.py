"""Keeps the token list in the class body (`ids = []`), which every object shares. The worker has
one object per request, so two requests at once read each other's tokens."""

MUST_FAIL = {"two requests at once"}
MUST_SAY = "shared by every object"


class IncrementalDetokenizer:
    ids = []

    def __init__(self, tokenizer, stop=()):
        self.tokenizer = tokenizer
        self.stop = [s for s in stop if s]
        self.start = len(self.ids)
        self.sent = ""
        self.stopped = False

    def add(self, token_id):
        if self.stopped:
            return ""
        self.ids.append(token_id)
        text = self.tokenizer.decode(self.ids[self.start :], skip_special_tokens=True)
        if text.endswith("\ufffd"):
            return ""
        for s in self.stop:
            if s in text:
                self.stopped = True
                text = text[: text.index(s)]
        hold = (
            0 if self.stopped else max([k for s in self.stop for k in range(1, len(s)) if text.endswith(s[:k])] or [0])
        )
        shown = text[: len(text) - hold]
        out = shown[len(self.sent) :]
        self.sent = shown if len(shown) > len(self.sent) else self.sent
        return out

    def finish(self):
        if self.stopped:
            return ""
        text = self.tokenizer.decode(self.ids[self.start :], skip_special_tokens=True)
        out, self.sent = text[len(self.sent) :], text
        return out


CAUGHT_BY = {"hand", "generated"}
HINT_SAYS = "keep all state on self, set in __init__"
