"""Structured output: a grammar that allows, at every step, only the tokens that keep the answer valid.

Where this sits on the request path: a request with `json_schema`, `regex` or `ebnf` set gets a
`Grammar` when the scheduler admits it (`Scheduler.add_request`). Before each of its tokens is
sampled, the logits chain (`logits_chain.py`) asks the grammar for a bitmask of the allowed tokens
and sets every other logit to -inf; after the token is sampled, the scheduler's `_process_results`
tells the grammar which token was chosen (`accept`), so the next mask follows from it. When the
grammar is complete, the only token it allows is EOS, and the request finishes with "stop".

The grammar engine is XGrammar (the default of SGLang's structured outputs): it compiles a schema
against the tokenizer's vocabulary once (milliseconds for a small schema) and then fills a mask
per step. `GrammarCompiler` here keeps the compiled grammars of recent specs, so the same schema
sent again is not compiled again. XGrammar is imported only when a request asks for a grammar.

A JSON schema that uses a keyword XGrammar compiles but does not enforce (`not`, `if`, a remote
`$ref` ...) is refused (`unenforced_keyword`) rather than answered with JSON that breaks it.
"""

from __future__ import annotations

import json
import re
from collections import OrderedDict
from typing import Any, Optional

import torch


class Grammar:
    """One request's matcher: which tokens may come next, given the tokens accepted so far."""

    def __init__(self, compiled: Any) -> None:
        import xgrammar as xgr

        self.matcher = xgr.GrammarMatcher(compiled)

    def fill_mask(self, bitmask: torch.Tensor, row: int) -> None:
        """Write the allowed tokens into row `row` of `bitmask` (one bit per token)."""
        self.matcher.fill_next_token_bitmask(bitmask, row)

    def accept(self, token: int) -> bool:
        """Advance by the sampled token; False if the grammar did not allow it."""
        return self.matcher.accept_token(token)

    @property
    def is_terminated(self) -> bool:
        """The grammar is complete and has accepted its end (the EOS token)."""
        return self.matcher.is_terminated()


class GrammarCompiler:
    """Specs -> compiled grammars for one tokenizer, with a small cache of recent specs."""

    def __init__(self, tokenizer: Any, vocab_size: int, eos_ids: list[int], cache_size: int = 64) -> None:
        import xgrammar as xgr

        # vocab_size: the model's logits width, which may be larger than the tokenizer's vocabulary
        # (padding rows); the extra ids are never allowed.
        info = xgr.TokenizerInfo.from_huggingface(tokenizer, vocab_size=vocab_size, stop_token_ids=eos_ids)
        self.vocab_size = vocab_size
        self._compiler = xgr.GrammarCompiler(info, max_threads=1)
        self._cache: OrderedDict[tuple[str, str], Any] = OrderedDict()
        self.cache_size = cache_size

    def compile(self, kind: str, spec: str) -> Grammar:
        """A fresh matcher for ("json_schema" | "regex" | "ebnf", text). Raises ValueError with the
        compiler's message for a spec it cannot compile, which goes back to the client as a 400."""
        key = (kind, spec)
        compiled = self._cache.get(key)
        if compiled is None:
            try:
                compiled = self._compile(kind, spec)
            except Exception as e:  # XGrammar raises RuntimeError / ValueError with the reason
                raise ValueError(f"invalid {kind}: {clean_message(kind, str(e))}") from None
            self._cache[key] = compiled
            if len(self._cache) > self.cache_size:
                self._cache.popitem(last=False)
        self._cache.move_to_end(key)
        return Grammar(compiled)

    def _compile(self, kind: str, spec: str) -> Any:
        if kind == "json_schema":
            keyword = unenforced_keyword(json.loads(spec))  # json.loads: a clear message for text that is not JSON
            if keyword is not None:
                raise ValueError(
                    f"{keyword}: XGrammar does not enforce this keyword, so the answer could break the schema"
                )
            # any_whitespace=False: one space after ':' and ',' and no newlines, so a small model
            # cannot spend its max_tokens on whitespace inside the object.
            return self._compiler.compile_json_schema(spec, any_whitespace=False)
        if kind == "regex":
            return self._compiler.compile_regex(spec)
        if kind == "ebnf":
            return self._compiler.compile_grammar(spec)
        raise ValueError(f"unknown grammar kind {kind!r}")


def grammar_mask(logits: torch.Tensor, rows: list[int], grammars: list[Grammar]) -> None:
    """Set every logit that grammars[i] forbids in row rows[i] to -inf, in place, on the logits'
    device (XGrammar has a CPU and a CUDA kernel). The bitmask has one bit per token, all set
    (every token allowed) in the rows without a grammar."""
    import xgrammar as xgr

    bitmask = xgr.allocate_token_bitmask(logits.shape[0], logits.shape[-1])
    for row, grammar in zip(rows, grammars):
        grammar.fill_mask(bitmask, row)
    if logits.is_cuda:  # from page-locked memory, so the host does not wait for the forward pass
        bitmask = bitmask.pin_memory().to(logits.device, non_blocking=True)
    xgr.apply_token_bitmask_inplace(logits, bitmask, indices=rows)


# What XGrammar (0.2) compiles but does not enforce, found by feeding its matcher JSON that breaks
# each keyword (tests/test_grammar_limits.py keeps those probes): the keyword is dropped, with
# at most a warning on the server's stderr. Each entry: keyword -> when a schema's use of it counts.
_UNENFORCED = {
    "not": lambda v: True,
    "if": lambda v: True,
    "then": lambda v: True,
    "else": lambda v: True,
    "dependentRequired": lambda v: bool(v),
    "dependentSchemas": lambda v: bool(v),
    "dependencies": lambda v: bool(v),
    "contains": lambda v: True,
    "minContains": lambda v: True,
    "maxContains": lambda v: True,
    "uniqueItems": lambda v: v is True,
    "allOf": lambda v: isinstance(v, list) and len(v) > 1,  # one schema is merged; two are not
    "$ref": lambda v: not (isinstance(v, str) and (v == "#" or v.startswith("#/"))),  # only refs inside the schema
    "$dynamicRef": lambda v: True,
    "$recursiveRef": lambda v: True,
}
# Where a schema holds other schemas: one, a list of them, or a map of name -> schema.
_ONE = (
    "items",
    "additionalItems",
    "additionalProperties",
    "unevaluatedItems",
    "unevaluatedProperties",
    "propertyNames",
    "contains",
    "not",
    "if",
    "then",
    "else",
)
_LIST = ("allOf", "anyOf", "oneOf", "prefixItems", "items")
_MAP = ("properties", "patternProperties", "$defs", "definitions", "dependentSchemas")


def unenforced_keyword(schema: Any, where: str = "") -> Optional[str]:
    """The path and name of the first keyword in `schema` that XGrammar would not enforce, e.g.
    "properties.a.not", or None. `required` counts when it names a property that `properties`
    does not define: XGrammar then lets the answer leave it out."""
    if not isinstance(schema, dict):
        return None  # true/false, or not a schema at all (XGrammar says so)
    for keyword, counts in _UNENFORCED.items():
        if keyword in schema and counts(schema[keyword]):
            return where + keyword
    required, defined = schema.get("required"), schema.get("properties")
    if isinstance(required, list) and any(
        name not in (defined if isinstance(defined, dict) else {}) for name in required
    ):
        return where + "required"
    for key in _ONE:
        found = unenforced_keyword(schema.get(key), f"{where}{key}.")
        if found:
            return found
    for key in _LIST:
        if isinstance(schema.get(key), list):
            for i, sub in enumerate(schema[key]):
                found = unenforced_keyword(sub, f"{where}{key}.{i}.")
                if found:
                    return found
    for key in _MAP:
        if isinstance(schema.get(key), dict):
            for name, sub in schema[key].items():
                found = unenforced_keyword(sub, f"{where}{key}.{name}.")
                if found:
                    return found
    return None


# XGrammar's C++ messages begin with a time and its source file ("[21:24:08] /project/cpp/
# regex_converter.cc:94: "); a regex is converted to EBNF first, so its errors may give a line and
# column of that internal grammar. Neither means anything to the client.
_SOURCE_PREFIX = re.compile(r"^\[[\d:]+\]\s*\S+\.(?:cc|cpp|h|hpp|py):\d+:\s*")
_INTERNAL_EBNF_POSITION = re.compile(r"^EBNF (?:parser|lexer) error at line \d+, column \d+:\s*")


def clean_message(kind: str, message: str) -> str:
    """XGrammar's error message without the library's internals."""
    text = _SOURCE_PREFIX.sub("", message.strip().splitlines()[0] if message.strip() else "")
    if kind == "regex":
        text = _INTERNAL_EBNF_POSITION.sub("", text)
    return text or "the grammar engine could not compile it"
