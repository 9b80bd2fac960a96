"""Returns nothing from add() and the whole answer, cut before the first stop string, from
finish(). No broken character and no stop string ever reaches the client, and the pieces join to
the right text, but nothing streams: the client sees a blank screen until the request ends."""

MUST_FAIL = {"plain text"}
MUST_SAY = "as soon as"


class IncrementalDetokenizer:
    def __init__(self, tokenizer, stop=()):
        self.tokenizer = tokenizer
        self.stop = [s for s in stop if s]
        self.ids = []

    def add(self, token_id):
        self.ids.append(token_id)
        return ""

    def finish(self):
        text = self.tokenizer.decode(self.ids, skip_special_tokens=True)
        hits = [i for i in (text.find(s) for s in self.stop) if i >= 0]
        return text[: min(hits)] if hits else text


CAUGHT_BY = {"hand", "generated"}
HINT_SAYS = "add() returns each whole character as soon as it is decoded"
