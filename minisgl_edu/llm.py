"""The offline API: `LLM(model).generate(prompts, params)` with no server.

Where this sits on the request path: it is a client of the in-process runtime (`LocalServer`),
which runs the server's own tokenizer worker, `Scheduler` (so the same engine, KV cache and
batching) and detokenizer, connected by in-memory queues. `generate` submits every prompt and
steps the runtime until all of them are done.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Optional, Sequence, Union

from minisgl_edu.core import SamplingParams

Prompt = Union[str, list[dict], list[int]]


@dataclass
class RequestOutput:
    uid: int
    prompt_token_ids: list[int]
    token_ids: list[int]
    text: str
    finish_reason: Optional[str]
    error: Optional[str] = None
    logprobs: list[dict] = field(default_factory=list)  # per token, when `SamplingParams.logprobs`


def _is_single_prompt(prompts) -> bool:
    if isinstance(prompts, str):
        return True
    if isinstance(prompts, list) and prompts and all(isinstance(p, dict) for p in prompts):
        return True  # one chat conversation
    if isinstance(prompts, list) and prompts and all(isinstance(p, int) for p in prompts):
        return True  # one prompt as token ids
    return False


class LLM:
    def __init__(self, model: str = "smollm2-135m", **kwargs) -> None:
        from minisgl_edu.runtime import LocalServer

        # No trace: a long offline run would otherwise keep every event of every request.
        self.runtime = LocalServer(model, trace=False, **kwargs)
        self.config = self.runtime.config
        self.io = self.runtime.io
        self.scheduler = self.runtime.scheduler
        self.tokenizer = self.runtime.tokenizer

    def encode(self, prompt: Prompt) -> list[int]:
        from minisgl_edu.tokenizer.template import encode_prompt

        return encode_prompt(self.tokenizer, prompt)

    def generate(
        self,
        prompts: Union[Prompt, Sequence[Prompt]],
        sampling_params: Union[SamplingParams, Sequence[SamplingParams], None] = None,
    ) -> list[RequestOutput]:
        """Run all prompts together (continuous batching) and return one output per prompt, or
        with `n` > 1, n outputs per prompt, one after the other (they share the prompt's pages)."""
        batch = [prompts] if _is_single_prompt(prompts) else list(prompts)
        if sampling_params is None or isinstance(sampling_params, SamplingParams):
            params = [sampling_params or SamplingParams()] * len(batch)
        else:
            params = list(sampling_params)
            if len(params) != len(batch):
                raise ValueError(f"{len(batch)} prompts but {len(params)} sampling params")
        uids = []
        for prompt, sp in zip(batch, params):
            first = self.runtime.submit(prompt, sp)
            uids.extend(range(first, first + sp.n))
        self.runtime.run_until_idle()
        outs = []
        for uid in uids:
            # The text is what a streaming client would have received: the detokenizer already
            # left out the stop string and anything after it, as OpenAI's API does.
            r = self.runtime.pop_result(uid)
            outs.append(
                RequestOutput(uid, r.prompt_token_ids, r.token_ids, r.text, r.finish_reason, r.error, r.logprobs)
            )
        return outs
