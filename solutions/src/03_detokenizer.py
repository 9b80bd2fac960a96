from cells import code, md

CELLS = [
    md("""
# Exercise 3 — Streaming text without broken characters

**Goal:** write the detokenizer's per-request state: token ids in, text pieces out.
**Time:** about 30 minutes.

The detokenizer worker (`minisgl-detokenizer-0`) receives one `DetokenizeMsg` per new token and
sends `UserReply(uid, incremental_output, finished)` to the API server, which writes each piece
into an SSE chunk. It keeps one object per request, built as `IncrementalDetokenizer(tokenizer,
stop)`; `add(token_id)` returns the text that may be shown now and `finish()` the rest.

The contract, for each request (`add` is called once per generated token, `finish` once at the
end):

* **Whole characters only.** Byte-level BPE splits `🙂` or `北` into byte pieces, and decoding only
  some of them gives `'\\ufffd'` (the replacement character). No piece may contain a character
  that is split that way.
* **The right text.** The pieces of a request, joined, are the decode of all its tokens with
  `tokenizer.decode(ids, skip_special_tokens=True)` (so `<|im_end|>` never shows), cut right
  before the first stop string of `stop` that occurs in that text (when several occur, the one
  that starts first, whatever its place in the list), and nothing after it.
* **Never any part of a stop string.** Not even its first half: stop strings rarely line up with
  tokens. With SmolLM2's tokenizer, `"three four"` covers the token `' three'` (all but its
  leading space) and the token `' four'`; after `' three'` nobody knows yet whether `"three"` is
  text or the start of the stop string, so it must not be shown yet. If `' four'` follows, the
  text is cut before `"three"`; if something else follows, `"three"` is ordinary text.
* **Nothing waits without a reason.** After every `add()`, all the text that is made of whole
  characters and can no longer be the start of a stop string has been returned: a stream must
  not stall until `finish()`. The grader checks this token by token.
* **`finish()`**: the request has ended (the scheduler's own check stops it on the token that
  completes a stop string, exercise 1). Return what is still held back, which is part of the
  answer, except that a stop string is still never shown: a whole stop string that is also the
  start of a longer one ends the text.

The worker keeps one object per request and several requests stream at once, so keep all state
on `self`. The package's own version is `IncrementalDetokenizer` in
`minisgl_edu/tokenizer/detokenizer.py`; don't peek before you try.
"""),
    code("""
from __future__ import annotations

from minisgl_edu.grading import check
"""),
    code('''
class IncrementalDetokenizer:
    def __init__(self, tokenizer, stop=()):
        self.tokenizer = tokenizer
        self.stop = [s for s in stop if s]
        ### BEGIN SOLUTION
        ### HINT: see the contract above
        self.ids = []
        self.decoded = ""   # complete characters decoded so far
        self.sent = 0       # how much of `decoded` was returned
        self.window = 0     # decode from here: one step back, so leading spaces come out right
        self.read = 0       # ids before this are already in `decoded`
        self.stopped = False
        ### END SOLUTION

    def add(self, token_id: int) -> str:
        """One new token; return the text that is safe to show now (maybe '')."""
        ### BEGIN SOLUTION
        ### HINT: see the contract above
        if self.stopped:
            return ""
        self.ids.append(token_id)
        before = self._decode(self.ids[self.window:self.read])
        now = self._decode(self.ids[self.window:])
        if len(now) > len(before) and not now.endswith("\\ufffd"):
            self.decoded += now[len(before):]
            self.window, self.read = self.read, len(self.ids)
        return self._release(final=False)
        ### END SOLUTION

    def finish(self) -> str:
        """The request ended: return whatever is still held back (never a stop string)."""
        ### BEGIN SOLUTION
        ### HINT: see the contract above
        if not self.stopped and self.read < len(self.ids):
            # tokens that never completed a character (cut by max_tokens): their text as decoded
            before = self._decode(self.ids[self.window:self.read])
            self.decoded += self._decode(self.ids[self.window:])[len(before):]
            self.window = self.read = len(self.ids)
        return self._release(final=True)
        ### END SOLUTION

    def _decode(self, ids):
        return self.tokenizer.decode(ids, skip_special_tokens=True)

    def _release(self, final: bool) -> str:
        """The next piece of `decoded` that is safe to show (all of it if final), cut at a stop string."""
        ### BEGIN SOLUTION
        ### HINT: see the contract above
        if self.stopped:
            return ""
        hits = [i for i in (self.decoded.find(s, self.sent) for s in self.stop) if i >= 0]
        if hits:
            end, self.stopped = min(hits), True
        elif final:
            end = len(self.decoded)
        else:
            # hold back the longest tail that is the start of some stop string
            hold = max([k for s in self.stop for k in range(1, len(s))
                        if self.decoded.endswith(s[:k]) and k <= len(self.decoded) - self.sent] or [0])
            end = len(self.decoded) - hold
        out, self.sent = self.decoded[self.sent:end], end
        return out
        ### END SOLUTION
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
class StopKeepingDetokenizer(IncrementalDetokenizer):
    def __init__(self, tokenizer, stop=(), include_stop_str_in_output=False):
        super().__init__(tokenizer, stop)
        ### BEGIN SOLUTION
        ### HINT: see the contract above
        self.include_stop_str_in_output = include_stop_str_in_output
        ### END SOLUTION

    def _release(self, final: bool) -> str:
        """The next piece of `decoded` that may be shown: the base part's, or cut after a stop string."""
        ### BEGIN SOLUTION
        if not self.include_stop_str_in_output:
            return super()._release(final)
        if self.stopped:
            return ""
        ends = []
        for s in self.stop:
            # a stop string can begin in text already returned: search from len(s) - 1 characters back
            i = self.decoded.find(s, max(0, self.sent - len(s) + 1))
            if i >= 0:
                ends.append(i + len(s))
        end = min(ends) if ends else len(self.decoded)  # the stop string that ends first wins
        self.stopped = bool(ends)
        out, self.sent = self.decoded[self.sent:end], end
        return out
        ### END SOLUTION
'''),
    code("""
result_stretch = check("detokenizer_include_stop", StopKeepingDetokenizer)
"""),
    md("""
## Going further

* Why decode a window that starts one step *back* instead of only the new tokens? Try
  `tokenizer.decode([id])` on a token that starts with a space.
* The held-back tail delays text by a few characters. When is that delay visible to a user?
"""),
]
