"""Structured output's part in the scheduler: a request's grammar from arrival to its last token.

Where this sits on the request path: beside the scheduler, which calls it at two fixed points.

    receive    `attach(req)`: a request with `json_schema`, `regex` or `ebnf` gets its grammar
               matcher (`engine/grammar.py`), compiled by XGrammar for this tokenizer; a spec that
               does not compile rejects the request, with XGrammar's message
    results    `finish_reason(req, token)`: the matcher advances by the new token; the request
               finishes with "stop" when the grammar is complete

In between, the logits chain (`engine/logits_chain.py`) masks every token the grammar does not
allow, so the sampled token is always accepted; a token the matcher refuses all the same ends the
request with "abort" rather than letting the answer leave the grammar.
"""

from __future__ import annotations

from typing import Any, Optional

from minisgl_edu.core import Req


class StructuredOutput:
    def __init__(self, tokenizer: Any, vocab_size: int, eos_ids: set[int]) -> None:
        self.tokenizer = tokenizer
        self.vocab_size = vocab_size
        self.eos_ids = eos_ids
        self._compiler = None

    @property
    def compiler(self):
        """XGrammar's compiler for this tokenizer, built when the first request asks for a grammar."""
        if self._compiler is None:
            from minisgl_edu.engine.grammar import GrammarCompiler

            self._compiler = GrammarCompiler(self.tokenizer, self.vocab_size, sorted(self.eos_ids))
        return self._compiler

    def attach(self, req: Req) -> Optional[str]:
        """Give `req` its grammar, if it asks for one; -> an error message if the spec is invalid."""
        spec = req.sampling_params.grammar_spec
        if spec is None:
            return None
        try:
            req.grammar = self.compiler.compile(*spec)
        except ValueError as e:
            return str(e)
        return None

    @staticmethod
    def finish_reason(req: Req, token: int) -> Optional[str]:
        """Advance `req`'s grammar by `token`: "stop" when the grammar is complete (it accepted EOS,
        even with ignore_eos), "abort" if it refused the token, None otherwise (or without one)."""
        if req.grammar is None:
            return None
        if not req.grammar.accept(token):
            return "abort"  # cannot happen with the mask applied; never continue off the grammar
        return "stop" if req.grammar.is_terminated else None
