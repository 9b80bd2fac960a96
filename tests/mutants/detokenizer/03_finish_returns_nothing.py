"""Holds back a possible start of a stop string correctly, but finish() returns ''. When the
request ends (max_tokens, EOS) while text is held back, that text is lost: the answer is cut
short."""

MUST_FAIL = {"held-back text at finish()"}
MUST_SAY = "finish() must return it"


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
        hits = [i for i in (text.find(s, self.sent) for s in self.stop) if i >= 0]
        if hits:
            end, self.stopped = min(hits), True
        else:
            hold = max(
                [k for s in self.stop for k in range(1, len(s)) if text.endswith(s[:k]) and k <= len(text) - self.sent]
                or [0]
            )
            end = len(text) - hold
        out, self.sent = text[self.sent : end], end
        return out

    def finish(self):
        return ""


CAUGHT_BY = {"hand", "generated"}
HINT_SAYS = "finish() releases what is held back"
