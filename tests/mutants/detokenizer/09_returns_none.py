"""Returns None when there is nothing new to show. The worker joins and sends the pieces as
text, so every call must return a str ('' for nothing yet)."""

MUST_FAIL = {"characters spanning tokens"}
MUST_SAY = "must return a str"


class IncrementalDetokenizer:
    def __init__(self, tokenizer, stop=()):
        self.tokenizer = tokenizer
        self.stop = [s for s in stop if s]
        self.ids = []
        self.sent = 0

    def add(self, token_id):
        self.ids.append(token_id)
        text = self.tokenizer.decode(self.ids, skip_special_tokens=True)
        if text.endswith("\ufffd") or len(text) == self.sent:
            return None
        out, self.sent = text[self.sent :], len(text)
        return out

    def finish(self):
        return ""


CAUGHT_BY = {"hand", "generated"}
HINT_SAYS = "never None"
