"""Decodes every token on its own. A CJK character or an emoji is two to four byte tokens, and
each piece alone decodes to the replacement character '\ufffd': the client sees broken text."""

MUST_FAIL = {"characters spanning tokens"}
MUST_SAY = "broken character"


class IncrementalDetokenizer:
    def __init__(self, tokenizer, stop=()):
        self.tokenizer = tokenizer
        self.stop = [s for s in stop if s]
        self.text = ""
        self.stopped = False

    def add(self, token_id):
        if self.stopped:
            return ""
        piece = self.tokenizer.decode([token_id], skip_special_tokens=True)
        new = self.text + piece
        for s in self.stop:
            if s in new:
                self.stopped = True
                out = new[len(self.text) : new.index(s)] if new.index(s) >= len(self.text) else ""
                self.text = new
                return out
        self.text = new
        return piece

    def finish(self):
        return ""


CAUGHT_BY = {"hand", "generated"}
HINT_SAYS = "hold text back while the decoded window ends in"
