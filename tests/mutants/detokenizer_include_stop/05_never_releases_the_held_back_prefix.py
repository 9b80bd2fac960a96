"""Holds back from the first place where a stop string could begin, and keeps holding from
there until a stop string completes or the request ends: when the next tokens show that it was
ordinary text, it is not released, and the client waits for it until finish()."""

MUST_FAIL = {"stretch: text is not held back for ever"}
MUST_SAY = "held back"


class StopKeepingDetokenizer:
    def __init__(self, tokenizer, stop=(), include_stop_str_in_output=False):
        self.tokenizer = tokenizer
        self.stop = [s for s in stop if s]
        self.include = include_stop_str_in_output
        self.ids = []
        self.decoded = ""  # whole characters decoded so far
        self.sent = 0
        self.stopped = False
        self.hold_from = None

    def add(self, token_id):
        if self.stopped:
            return ""
        self.ids.append(token_id)
        text = self.tokenizer.decode(self.ids, skip_special_tokens=True)
        if not text.endswith("\ufffd"):
            self.decoded = text
        return self._release(final=False)

    def finish(self):
        return self._release(final=True)

    def _release(self, final):
        if self.stopped:
            return ""
        cuts = []
        for s in self.stop:
            i = self.decoded.find(s)
            if i >= 0:
                cuts.append(i + len(s) if self.include else i)
        if cuts:
            self.stopped = True
            end = min(cuts)
        elif final:
            end = len(self.decoded)
        else:
            if self.hold_from is None:
                for k in range(self.sent, len(self.decoded)):
                    if any(s.startswith(self.decoded[k:]) for s in self.stop):
                        self.hold_from = k
                        break
            end = len(self.decoded) if self.hold_from is None else self.hold_from
        out, self.sent = self.decoded[self.sent : end], max(self.sent, end)
        return out


CAUGHT_BY = {"hand", "generated"}
HINT_SAYS = "release held-back text as soon as the next tokens show it cannot begin a stop string"
