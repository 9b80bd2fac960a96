"""minisgl_edu: a small, real LLM serving engine to learn how SGLang-style engines work.

from minisgl_edu import LLM, SamplingParams
llm = LLM("smollm2-135m", device="cpu")
out = llm.generate([{"role": "user", "content": "What is KV cache?"}], SamplingParams(max_tokens=32))[0]
"""

from __future__ import annotations

from minisgl_edu.core import SamplingParams

__all__ = ["LLM", "SamplingParams"]


def __getattr__(name: str):
    # Imported lazily so `import minisgl_edu` stays light (no model code until it is needed).
    if name == "LLM":
        from minisgl_edu.llm import LLM

        return LLM
    if name == "RequestOutput":
        from minisgl_edu.llm import RequestOutput

        return RequestOutput
    raise AttributeError(name)
