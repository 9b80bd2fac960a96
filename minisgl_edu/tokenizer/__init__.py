"""Tokenizer and detokenizer: text <-> token ids, at both ends of the request path.

`encode_prompt` (chat template) and `IncrementalDetokenizer` are used by the worker processes
(`tokenize_worker` in `server.py`) and by the offline `LLM`. Importing this package is cheap: the
worker entry function imports transformers only inside the process that needs it.
"""

from minisgl_edu.tokenizer.detokenizer import IncrementalDetokenizer
from minisgl_edu.tokenizer.template import encode_prompt, normalize_messages

__all__ = ["IncrementalDetokenizer", "encode_prompt", "normalize_messages"]
