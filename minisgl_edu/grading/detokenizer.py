"""Exercise 3 — incremental detokenization: a class with `add(token_id) -> str` and `finish() -> str`.

It is built as `cls(tokenizer, stop)` for each request, exactly like the detokenizer worker's
`IncrementalDetokenizer`. Every piece it returns goes straight to the client, so a piece may
never end in half a character, and the pieces together must equal the full decode (minus any stop
string and what follows it).
"""

from __future__ import annotations

import functools

from minisgl_edu.core import SamplingParams
from minisgl_edu.grading.core import Case
from minisgl_edu.grading.harness import run_requests
from minisgl_edu.tokenizer.detokenizer import IncrementalDetokenizer as reference

REPLACEMENT = "\ufffd"


@functools.lru_cache(maxsize=1)
def _tokenizer():
    from minisgl_edu.models import load_tokenizer, resolve_model

    return load_tokenizer(resolve_model("smollm2-135m"))


def _stream(cls, ids, stop=()):
    detok = cls(_tokenizer(), list(stop))
    pieces = [detok.add(t) for t in ids]
    pieces.append(detok.finish())
    return pieces


def _full(ids):
    return _tokenizer().decode(ids, skip_special_tokens=True)


def _check_text(cls, text):
    ids = _tokenizer().encode(text)
    pieces = _stream(cls, ids)
    bad = [p for p in pieces if REPLACEMENT in p]
    assert not bad, f"a piece contains a broken character: {bad[0]!r}"
    assert "".join(pieces) == _full(ids), f"pieces join to {''.join(pieces)!r}, expected {_full(ids)!r}"


def case_ascii(cls):
    _check_text(cls, "The KV cache stores keys and values, so each step computes one new token.")


def case_multibyte(cls):
    _check_text(cls, "Café déjà vu — naïve façade. 北京欢迎你！ 🙂🚀👩‍💻 ok")


def case_special_tokens(cls):
    tok = _tokenizer()
    ids = tok.encode("Hello there") + [tok.convert_tokens_to_ids("<|im_end|>")]
    assert "".join(_stream(cls, ids)) == "Hello there", "special tokens such as <|im_end|> are not shown"


def case_stop_string(cls):
    tok = _tokenizer()
    text = "one two three four"
    ids = tok.encode(text)
    pieces = _stream(cls, ids, stop=["three"])
    assert "".join(pieces) == "one two ", f"expected the text before the stop string, got {''.join(pieces)!r}"
    assert all("thr" not in p for p in pieces), "not even the start of a stop string may be shown"


def case_real_engine(cls):
    _stream(cls, [])  # an unfinished class fails here, before the engine runs
    got = run_requests([SamplingParams(max_tokens=40), SamplingParams(max_tokens=40), SamplingParams(max_tokens=40)])
    for uid, ids in got.tokens.items():
        pieces = _stream(cls, ids)
        assert "".join(pieces) == "".join(_stream(reference, ids)), f"request {uid}: text differs from the reference"
        assert all(REPLACEMENT not in p for p in pieces), f"request {uid}: a broken character was shown"


CASES = [
    Case("plain text", case_ascii, "decode a window of recent tokens and return what is new"),
    Case("characters spanning tokens", case_multibyte, "hold text back while the decoded window ends in '\\ufffd'"),
    Case("special tokens skipped", case_special_tokens, "decode with skip_special_tokens=True"),
    Case("stop strings", case_stop_string, "hold back a tail that could begin a stop string; cut at a stop string"),
    Case("tokens from the real engine", case_real_engine, "the unit cases must pass first"),
]
SYMBOL = "IncrementalDetokenizer"
SOLUTION = reference
