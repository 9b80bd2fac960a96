"""Exercise 3, stretch's reference: the package's detokenizer with `include_stop_str_in_output`
(`reference_stop_keeping`), and the same class with one known mistake each, which the grader plays
to tell which mistake an answer's pieces show."""

from __future__ import annotations

from typing import Iterable

from minisgl_edu.tokenizer.detokenizer import IncrementalDetokenizer as package_detokenizer


class reference_stop_keeping(package_detokenizer):
    """The stretch's reference: the package's detokenizer, with a second way to cut. With the flag
    set nothing is held back, and the cut is at the smallest end of any stop string in the text."""

    def __init__(self, tokenizer, stop: Iterable[str] = (), include_stop_str_in_output: bool = False) -> None:
        super().__init__(tokenizer, stop)
        self.include_stop_str_in_output = include_stop_str_in_output

    def _release(self, final: bool) -> str:
        if not self.include_stop_str_in_output:
            return super()._release(final)
        if self.stopped:
            return ""
        # Everything before `_released` was searched when it was released: only an occurrence that
        # ends after it is new, and it may begin up to len(s) - 1 characters before it.
        ends = []
        for s in self.stop:
            at = self._find(s)
            if at >= 0:
                ends.append(at + len(s))
        end = min(ends) if ends else len(self._decoded)
        self.stopped = bool(ends)
        out = self._decoded[self._released : end]
        self._released = end
        self.text += out
        return out

    def _find(self, s: str) -> int:
        """Where `s` first begins in the decoded text, from where it could begin; -1 if nowhere."""
        return self._decoded.find(s, self._search_start(s))

    def _search_start(self, s: str) -> int:
        # Never below 0: str.find counts a negative start from the end of the text.
        return max(0, self._released - len(s) + 1)


class _unclamped_start(reference_stop_keeping):
    """The reference with one mistake: the search's start is not clamped at 0. Early in the stream
    it is negative, so str.find looks only in the last few characters and misses the stop string."""

    def _search_start(self, s: str) -> int:
        return self._released - len(s) + 1


class _shortest_look_back(reference_stop_keeping):
    """The reference with one mistake: one look-back for every stop string, the shortest one's."""

    def _search_start(self, s: str) -> int:
        return max(0, self._released - min(len(t) for t in self.stop if t) + 1)


class _late_start(reference_stop_keeping):
    """The reference with one mistake: the search starts one character too late (len(s) - 2
    characters back), so it misses a stop string that begins len(s) - 1 characters before the text
    not yet returned (a 1-character one at the first character not yet returned)."""

    def _search_start(self, s: str) -> int:
        return max(0, self._released - len(s) + 2)


class _no_look_back(reference_stop_keeping):  # the reference searching only the text not yet returned
    def _search_start(self, s: str) -> int:
        return self._released


class _slice_relative(reference_stop_keeping):
    """The reference with one mistake: it searches a slice, decoded[start:].find(s), and takes the
    index, which counts from the slice's start, for one in the whole text, so every cut after a
    look-back that starts past 0 lands `start` characters early."""

    def _find(self, s: str) -> int:
        return self._decoded[self._search_start(s) :].find(s)


class _end_in_bytes(reference_stop_keeping):
    """The reference with one mistake: the cut's end is the stop string's start plus its length in
    UTF-8 bytes, len(s.encode()), not in characters, so a stop string with a character of two or
    more bytes (é, 京, 🚀) is cut that many characters too late (at most at the end of the text)."""

    def _release(self, final: bool) -> str:
        if not self.include_stop_str_in_output or self.stopped:
            return super()._release(final)
        ends = [at + len(s.encode()) for s in self.stop if (at := self._find(s)) >= 0]
        end = min(ends) if ends else len(self._decoded)
        self.stopped = bool(ends)
        out = self._decoded[self._released : end]
        self._released = min(end, len(self._decoded))
        self.text += out
        return out
