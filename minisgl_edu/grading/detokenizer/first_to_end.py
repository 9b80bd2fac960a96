"""Exercise 3, stretch: which stop string wins when one token completes several at once.

With the flag set the answer is cut right after the stop string that ENDS first in the text. A
student may pick another one: the one listed first, the one that begins first (the base part's
rule), the one that ends last, the shortest (thinking it completes first) or the longest (a greedy
longest match). On 'one two three'
the token ' two' or ' three' completes each stop list of `ORDERS`, and the lists are chosen so that
every such rule gives some wrong cut there; three stop strings ending inside ' three' tell the
shortest ('hr') from the one that ends last ('o thre') and from the whole token.

`choice_rule` reads which of those rules an answer's cuts follow on every list (where two stop
strings tie under a rule, either may be taken); `probe_choice` plays the answer on the lists and
returns that hint, so a single scene that cannot tell the rules apart (with two stop strings the
shorter of them ends last whenever the longer ends first) is still named right.
"""

from __future__ import annotations

from typing import Callable

TEXT = "one two three"
# Per list: the stop strings, the answer, why.
ORDERS = (
    (["wo", " t"], "one t", "' t' ends before 'wo' does"),
    ([" t", "wo"], "one t", "' t' ends before 'wo' does"),
    (["tw", "e two"], "one tw", "'tw' ends before 'e two' does, although 'e two' begins first"),
    (["e two", "tw"], "one tw", "'tw' ends before 'e two' does, although 'e two' begins first"),
    (["ne t", "two"], "one t", "'ne t' ends before 'two' does, although 'two' is shorter"),
    (["two", "ne t"], "one t", "'ne t' ends before 'two' does, although 'two' is shorter and listed first"),
    (["hr", "o thre", "wo t"], "one two t", "'wo t' ends before 'hr' and 'o thre' do, although 'hr' is shorter"),
)


def _cut(s: str) -> str:
    return TEXT[: TEXT.find(s) + len(s)]


def _ends(s: str) -> int:
    return TEXT.find(s) + len(s)


RULES: tuple[tuple[str, Callable[[list[str]], list[str]]], ...] = (
    ("listed first", lambda stops: stops[:1]),
    ("that begins first", lambda st: [s for s in st if TEXT.find(s) == min(map(TEXT.find, st))]),
    ("that ends last", lambda st: [s for s in st if _ends(s) == max(map(_ends, st))]),
    ("that is shortest", lambda st: [s for s in st if len(s) == min(map(len, st))]),
    ("that is longest", lambda st: [s for s in st if len(s) == max(map(len, st))]),
)


def choice_rule(runs: list[tuple[list[str], str]]) -> str:
    """The hint for a wrong choice among stop strings one token completes, where every run (stop
    list, joined answer) made the choice of one rule of RULES; else ''."""
    for rule, pick in RULES:
        if all(joined in {_cut(s) for s in pick(stops)} for stops, joined in runs):
            return f"the stop string that ends first in the text wins, not the one {rule}"
    return ""


def probe_choice(cls, stream: Callable[..., list[str]], ids: list[int]) -> str:
    """`choice_rule` of the answer `cls` played on every list of ORDERS (`stream(cls, ids, stop,
    True)` its pieces; `ids` the tokens of TEXT)."""
    return choice_rule([(stops, "".join(stream(cls, ids, stops, True))) for stops, _, _ in ORDERS])
