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
"""

from __future__ import annotations

import json
from collections import OrderedDict
from typing import Any

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
                raise ValueError(f"invalid {kind}: {e}") from None
            self._cache[key] = compiled
            if len(self._cache) > self.cache_size:
                self._cache.popitem(last=False)
        self._cache.move_to_end(key)
        return Grammar(compiled)

    def _compile(self, kind: str, spec: str) -> Any:
        if kind == "json_schema":
            json.loads(spec)  # a clear message for text that is not JSON at all
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
