"""Subclasses the package's own detokenizer and changes nothing. It passes every case, and it is
the package's answer, not the student's."""

from minisgl_edu.tokenizer.detokenizer import IncrementalDetokenizer as Base

MUST_FAIL = {"plain text", "stop string across tokens"}
MUST_SAY = "not your own code"


class IncrementalDetokenizer(Base):
    pass


CAUGHT_BY = {"hand", "generated"}
HINT_SAYS = "write the answer without calling, subclassing or keeping"
