"""Always keeps the stop string, whatever the flag says: with include_stop_str_in_output=False
the class must behave exactly as the base part and show nothing of the stop string."""

MUST_FAIL = {"stretch: include_stop_str_in_output=False is the base part"}
MUST_SAY = "nothing of the stop string"


class StopKeepingDetokenizer:
    def __init__(self, tokenizer, stop=(), include_stop_str_in_output=False):
        self.tokenizer = tokenizer
        self.stop = [s for s in stop if s]
        self.include = include_stop_str_in_output
        self.ids = []
        self.decoded = ""  # whole characters decoded so far
        self.sent = 0
        self.stopped = False

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
        end = self._cut_after()
        out, self.sent = self.decoded[self.sent : end], end
        return out

    def _cut_after(self):
        ends = []
        for s in self.stop:
            i = self.decoded.find(s, max(0, self.sent - len(s) + 1))
            if i >= 0:
                ends.append(i + len(s))
        if ends:
            self.stopped = True
            return min(ends)
        return len(self.decoded)


CAUGHT_BY = {"hand", "generated"}
HINT_SAYS = "with the flag unset, cut before the stop string"
