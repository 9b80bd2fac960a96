"""Token ids back into text, one token at a time, for streaming.

Where this sits on the request path: in the detokenizer worker (and in the offline `LLM`). For
every `DetokenizeMsg` from the scheduler it turns the new token into the text that can be shown
now, which the worker sends to the API server as `UserReply.incremental_output`.

Two things make this harder than `tokenizer.decode([token])`:

1. A character can span several tokens. Byte-level BPE (GPT-2, Llama 3, SmolLM2, Qwen) splits an
   emoji or a CJK character into byte pieces; decoding only some of them gives U+FFFD, the
   replacement character. We decode a short window of recent tokens and emit new text only
   when it does not end in U+FFFD, i.e. when the last character is complete. Decoding a window
   that starts one chunk back (`_prefix_offset`), rather than the new token alone, also keeps
   tokenizers right that change how a token prints depending on what precedes it (leading spaces).
2. Stop strings. The client must never see a stop string, not even its first half. So text that
   could be the start of a stop string is held back until the next tokens show whether it is;
   once a stop string appears, everything from it on is dropped.
"""

from __future__ import annotations

from typing import Any, Iterable

REPLACEMENT_CHAR = "\ufffd"


class IncrementalDetokenizer:
    def __init__(self, tokenizer: Any, stop: Iterable[str] = (), skip_special_tokens: bool = True) -> None:
        self.tokenizer = tokenizer
        self.stop = [s for s in stop if s]
        self.skip_special_tokens = skip_special_tokens
        self.ids: list[int] = []
        self.text = ""  # everything returned by add() and finish() so far
        self.stopped = False  # a stop string appeared; later tokens produce no text
        self._prefix_offset = 0  # start of the decode window
        self._read_offset = 0  # tokens before this are already part of `_decoded`
        self._decoded = ""  # complete characters decoded so far (may run ahead of `text`)
        self._released = 0  # how much of `_decoded` has been returned

    def _decode(self, ids: list[int]) -> str:
        return self.tokenizer.decode(
            ids, skip_special_tokens=self.skip_special_tokens, clean_up_tokenization_spaces=False
        )

    def add(self, token_id: int) -> str:
        """Feed one generated token; return the new text that is safe to show (maybe '')."""
        if self.stopped:
            return ""
        self.ids.append(token_id)
        prefix = self._decode(self.ids[self._prefix_offset : self._read_offset])
        window = self._decode(self.ids[self._prefix_offset :])
        if len(window) > len(prefix) and not window.endswith(REPLACEMENT_CHAR):
            self._decoded += window[len(prefix) :]
            self._prefix_offset = self._read_offset
            self._read_offset = len(self.ids)
        return self._release(final=False)

    def finish(self) -> str:
        """The request ended: return whatever is still held back (minus any stop string)."""
        if not self.stopped and self._read_offset < len(self.ids):
            # Tokens that never completed a character (cut by max_tokens): decode them as they are.
            prefix = self._decode(self.ids[self._prefix_offset : self._read_offset])
            window = self._decode(self.ids[self._prefix_offset :])
            self._decoded += window[len(prefix) :]
            self._prefix_offset = self._read_offset = len(self.ids)
        return self._release(final=True)

    def _release(self, final: bool) -> str:
        if self.stopped:
            return ""
        # No stop string can start before `_released`: we never release a tail that could begin one.
        hits = [i for i in (self._decoded.find(s, self._released) for s in self.stop) if i >= 0]
        if hits:
            end = min(hits)
            self.stopped = True
        elif final:
            end = len(self._decoded)
        else:
            end = len(self._decoded) - self._could_start_stop()
        out = self._decoded[self._released : end]
        self._released = end
        self.text += out
        return out

    def _could_start_stop(self) -> int:
        """Length of the longest unreleased tail of the text that is a proper prefix of a stop string."""
        pending = len(self._decoded) - self._released
        longest = 0
        for s in self.stop:
            for k in range(min(len(s) - 1, pending), longest, -1):
                if self._decoded.endswith(s[:k]):
                    longest = k
                    break
        return longest


def _byte_level_alphabet() -> dict[str, int]:
    """The printable character byte-level BPE (GPT-2, Llama 3, SmolLM2, Qwen) writes for each byte:
    printable Latin-1 bytes stand for themselves, the other 68 bytes for chr(256 + k) in order."""
    keep = [*range(ord("!"), ord("~") + 1), *range(ord("¡"), ord("¬") + 1), *range(ord("®"), ord("ÿ") + 1)]
    others = [b for b in range(256) if b not in keep]
    table = {chr(b): b for b in keep}
    table.update({chr(256 + k): b for k, b in enumerate(others)})
    return table


class TokenText:
    """A token's own text and bytes, for logprobs: what OpenAI's `token` and `bytes` fields hold.

    A byte-level token can be part of a character (an emoji's first byte); its bytes are exact,
    and its text is those bytes decoded with U+FFFD for the incomplete character, as OpenAI's API
    shows it. Tokenizers that are not byte-level fall back to decoding the one token.
    """

    def __init__(self, tokenizer: Any) -> None:
        self.tokenizer = tokenizer
        self._alphabet = _byte_level_alphabet()
        self._cache: dict[int, tuple[str, list[int]]] = {}

    def of(self, token_id: int) -> tuple[str, list[int]]:
        hit = self._cache.get(token_id)
        if hit is None:
            piece = self.tokenizer.convert_ids_to_tokens(token_id)
            if isinstance(piece, str) and piece and all(c in self._alphabet for c in piece):
                raw = bytes(self._alphabet[c] for c in piece)
            else:
                raw = self.tokenizer.decode([token_id]).encode("utf-8")
            hit = self._cache[token_id] = (raw.decode("utf-8", errors="replace"), list(raw))
        return hit

    def logprob_entry(self, token_id: int, logprob: float, top: list) -> dict:
        """OpenAI's chat `logprobs.content[i]` for one token (`top`: [token id, logprob] pairs)."""
        text, raw = self.of(token_id)
        entry = {"token": text, "logprob": logprob, "bytes": raw, "top_logprobs": []}
        for tid, lp in top:
            t, b = self.of(int(tid))
            entry["top_logprobs"].append({"token": t, "logprob": lp, "bytes": b})
        return entry
