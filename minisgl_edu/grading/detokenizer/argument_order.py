"""Exercise 3, stretch: the constructor's parameters in the contract's order. The detokenizer worker
builds the class positionally, `StopKeepingDetokenizer(tokenizer, stop, include_stop_str_in_output)`.
An answer that declares the flag before the stop list gets the list as its flag and the flag as its
stop strings, and breaks at once, in a way the crash alone does not explain (a bool where a list goes).

When a play raises, include_stop.py calls `check_argument_order`: it builds the class again with the
two swapped, and by keyword. Only when one of those gives the right text on a stream of its own while
the contract's positional call does not is the order named; otherwise the crash is reported as it is.
"""

from __future__ import annotations

from minisgl_edu.grading.core import Mistake
from minisgl_edu.grading.detokenizer.common import pieces_of, probe_pieces
from minisgl_edu.grading.harness import tokenizer

TEXT, STOP, ANSWER = "one two three four", ["two"], "one two"
ORDER = (
    "declare the constructor as __init__(self, tokenizer, stop=(), include_stop_str_in_output=False): "
    "the worker passes them positionally in that order, the stop list before the flag"
)


def check_argument_order(cls) -> None:
    """Raise a Mistake naming the parameter order when the class works with the stop list and the flag
    swapped (or passed by keyword) but not when called as the contract calls it."""
    ids = tokenizer().encode(TEXT)
    swapped = probe_pieces(lambda: cls(tokenizer(), True, list(STOP)), ids)
    by_name = probe_pieces(lambda: cls(tokenizer(), stop=list(STOP), include_stop_str_in_output=True), ids)
    works = [how for how, got in (("swapped", swapped), ("by keyword", by_name)) if got and "".join(got) == ANSWER]
    if not works:
        return
    try:
        got = "".join(pieces_of(cls(tokenizer(), list(STOP), True), ids))
    except Exception as e:  # the crash a swapped order gives: a list as the flag, a bool as the stop list
        said = f"raises {type(e).__name__}: {e}"
    else:
        if got == ANSWER:
            return
        said = f"gives {got!r}"
    raise Mistake(
        f"StopKeepingDetokenizer(tokenizer, {STOP}, True), called positionally as the detokenizer worker "
        f"does, on {TEXT!r}: your class {said}; called with the two arguments {' or '.join(works)} it "
        f"gives {ANSWER!r}, the right answer. Your constructor takes its parameters in another order: "
        "the stop list comes second, the flag third",
        ORDER,
    )
