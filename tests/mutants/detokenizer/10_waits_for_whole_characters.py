"""Waits in a loop "until the character is complete" inside add(). The next byte token only
arrives with the next call, so the loop never ends on a character that spans tokens; the case
must fail on its time limit."""

MUST_FAIL = {"characters spanning tokens"}
MUST_SAY = "did not finish within"
TIME_LIMIT = 2.0


class IncrementalDetokenizer:
    def __init__(self, tokenizer, stop=()):
        self.tokenizer = tokenizer
        self.stop = [s for s in stop if s]
        self.ids = []
        self.sent = 0

    def add(self, token_id):
        self.ids.append(token_id)
        text = self.tokenizer.decode(self.ids, skip_special_tokens=True)
        while text.endswith("\ufffd"):
            text = self.tokenizer.decode(self.ids, skip_special_tokens=True)
        out, self.sent = text[self.sent :], len(text)
        return out

    def finish(self):
        return ""


CAUGHT_BY = {"hand", "generated"}
HINT_SAYS = "the rest of the character comes with a later add()"
