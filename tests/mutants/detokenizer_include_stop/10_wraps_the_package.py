"""Subclasses the package's own IncrementalDetokenizer and changes only the cut. The decoding,
the hold-back and finish() are the package's answer, not the student's."""

from minisgl_edu.tokenizer.detokenizer import IncrementalDetokenizer

MUST_FAIL = {"stretch: stop string across tokens, kept", "stretch: include_stop_str_in_output=False is the base part"}
MUST_SAY = "not your own code"


class StopKeepingDetokenizer(IncrementalDetokenizer):
    def __init__(self, tokenizer, stop=(), include_stop_str_in_output=False):
        super().__init__(tokenizer, stop)
        self.include = include_stop_str_in_output

    def _release(self, final):
        if not self.include:
            return super()._release(final)
        if self.stopped:
            return ""
        ends = []
        for s in self.stop:
            i = self._decoded.find(s, max(0, self._released - len(s) + 1))
            if i >= 0:
                ends.append(i + len(s))
        end = min(ends) if ends else len(self._decoded)
        self.stopped = bool(ends)
        out, self._released = self._decoded[self._released : end], end
        return out


CAUGHT_BY = {"hand", "generated"}
HINT_SAYS = "write the answer without calling, subclassing or keeping"
