"""add() decodes the window with `self._decode` (skip_special_tokens=True) but the text already taken,
`before`, with a plain `self.tokenizer.decode(...)`, so the two decodes of one comparison disagree whenever a
special token sits in ids[window:read]. The token after a special token then finds `before` = '<|im_end|>'
(or similar) longer than the new text: its text is cut by that many characters or held back, and the pieces
no longer join to the decode of all the tokens."""

from __future__ import annotations

MUST_FAIL = {"special tokens skipped"}
MUST_SAY = "<|im_end|>"
CAUGHT_BY = {"hand", "generated"}
HINT_SAYS = "decode `before` (ids[window:read]) with skip_special_tokens=True too"


class IncrementalDetokenizer:
    def __init__(self, tokenizer, stop=()):
        self.tokenizer = tokenizer
        self.stop = [s for s in stop if s]
        self.ids = []
        self.decoded = ""  # complete characters decoded so far
        self.sent = 0  # how much of `decoded` was returned
        self.window = 0  # decode from here: one step back, so leading spaces come out right
        self.read = 0  # ids before this are already in `decoded`
        self.stopped = False

    def add(self, token_id: int) -> str:
        """One new token; return the text that is safe to show now (maybe '')."""
        if self.stopped:
            return ""
        self.ids.append(token_id)
        before = self.tokenizer.decode(self.ids[self.window : self.read])
        now = self._decode(self.ids[self.window :])
        if len(now) > len(before) and not now.endswith("\ufffd"):
            self.decoded += now[len(before) :]
            self.window, self.read = self.read, len(self.ids)
        return self._release(final=False)

    def finish(self) -> str:
        """The request ended: return whatever is still held back (never a stop string)."""
        if not self.stopped and self.read < len(self.ids):
            # tokens that never completed a character (cut by max_tokens): their text as decoded
            before = self._decode(self.ids[self.window : self.read])
            self.decoded += self._decode(self.ids[self.window :])[len(before) :]
            self.window = self.read = len(self.ids)
        return self._release(final=True)

    def _decode(self, ids):
        return self.tokenizer.decode(ids, skip_special_tokens=True)

    def _release(self, final: bool) -> str:
        """The next piece of `decoded` that is safe to show (all of it if final), cut at a stop string."""
        if self.stopped:
            return ""
        hits = [i for i in (self.decoded.find(s, self.sent) for s in self.stop) if i >= 0]
        if hits:
            end, self.stopped = min(hits), True
        elif final:
            end = len(self.decoded)
        else:
            # hold back the longest tail that is the start of some stop string
            hold = max(
                [
                    k
                    for s in self.stop
                    for k in range(1, len(s))
                    if self.decoded.endswith(s[:k]) and k <= len(self.decoded) - self.sent
                ]
                or [0]
            )
            end = len(self.decoded) - hold
        out, self.sent = self.decoded[self.sent : end], end
        return out


'''),
    md("""
## Check your answer

The grader feeds your class token ids of the default model's real tokenizer: English, accented,
CJK and emoji text (with a zero-width-joiner emoji, which is several code points), a special
token, a stop string that spans two tokens, one that ends inside a token, one made of CJK
characters, a stream that ends while a possible stop string is held back, two stop strings
completed by the same token, repeated false starts of a stop string, a stop string that is the
start of another (in both orders, the request ending on it), and two requests streaming at once.
It checks the pieces after every token against how far the package's detokenizer has got. Then it
streams the tokens of three real generations of the engine and compares the text with the
package's detokenizer. When a case fails, its message says what was shown and what was expected,
and a hint follows.

Each case has a time limit, so an answer that loops fails that case instead of hanging the
notebook; and the class must be your own code (a subclass or wrapper of the package's
`IncrementalDetokenizer` scores 0).
"""),
    code("""
result = check("detokenizer", IncrementalDetokenizer)
"""),
    md("""
## Stretch: keep the stop string (`include_stop_str_in_output`, not in this engine)

vLLM's `SamplingParams` has `include_stop_str_in_output`: when it is set, the answer keeps the stop
string instead of losing it. (SGLang's nearest field, `no_stop_trim`, goes further: its
detokenizer then skips the trimming altogether and returns the whole text of the tokens, including
what the last token carries past the stop string.) This engine has neither, so write a class of
your own, built as

`StopKeepingDetokenizer(tokenizer, stop, include_stop_str_in_output)`

with the same `add(token_id) -> str` and `finish() -> str` as above. The contract:

* **Flag set:** the pieces join to the full decode cut right **after** the first stop string to
  complete in the text, the stop string included. Nothing after it is ever shown: a token often
  carries text past the end of the stop string (`' welcome'` completes `"welc"`), and that text is
  cut, even in the middle of the token.
* **Which stop string:** the one that *ends* first in the text. When one token completes two stop
  strings, that is not necessarily the first listed, nor the one that begins first: with
  `stop=["e two", "tw"]` and the text `"one two three"`, the answer is `"one tw"`. (vLLM checks
  the list in order and takes the first one it finds in the new text; with one token per step the
  two rules differ only when a token completes two stop strings at once, and "ends first" is what
  a character-by-character stream would give.)
* **Flag unset:** exactly the base part: cut before the first stop string, nothing of it shown.
* **When text may be shown:** never half a character, never anything past the stop string. With
  the flag set, text that could be the start of a stop string no longer has to wait: if the stop
  string completes, that text is shown as part of it, and if it does not, it is ordinary text. So
  every whole character decoded so far may go out at once, as long as the newest text is checked
  for a stop string first (vLLM holds back nothing when the flag is set). Holding such a tail back
  as in the base part is also accepted. Either way, after each token at most
  `len(longest stop string) - 1` characters may still be waiting: text that is known not to begin
  a stop string goes out then, not only at `finish()`.
* **`finish()`** returns what is left, and nothing twice: if the stop string was already returned,
  there is nothing left.

What the rest of the engine expects is unchanged: the detokenizer worker keeps one object per
request, calls `add()` for every token and `finish()` when the request ends, and sends each piece
to the client. The scheduler's own stop check (exercise 1) still ends the request on the token that
completes a stop string; only the text shown changes.

You may build on your own `IncrementalDetokenizer` from above (subclass it); building on the
package's is not an answer. `check` grades it on its own score line, `detokenizer_include_stop`:
the real tokenizer with stop strings across tokens, ending inside a token, at the very start,
made of multi-byte characters, two stop strings completed by one token (in both orders), no stop
string, text held back when the request ends, the flag unset; then real requests of the engine,
replayed through the detokenizer worker with your class, compared with the grader's reference.
"""),
    code('''
