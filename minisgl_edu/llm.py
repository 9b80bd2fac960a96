"""The offline API: `LLM(model).generate(prompts, params)` with no server.

Where this sits on the request path: it plays the part of the API server, tokenizer and
detokenizer in one object, and drives the very same `Scheduler` (and so the same engine, KV cache
and batching) that the multi-process server runs, by calling `step()` until every request is done.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass
from typing import Optional, Sequence, Union

from minisgl_edu.core import SamplingParams
from minisgl_edu.scheduler import QueueIO, Scheduler, SchedulerConfig

Prompt = Union[str, list[dict], list[int]]


@dataclass
class RequestOutput:
    uid: int
    prompt_token_ids: list[int]
    token_ids: list[int]
    text: str
    finish_reason: Optional[str]
    error: Optional[str] = None


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
        self.config = SchedulerConfig(model=model, **kwargs)
        self.io = QueueIO()
        self.scheduler = Scheduler(self.config, self.io)
        self.tokenizer = self.scheduler.tokenizer
        self._uids = itertools.count()

    def encode(self, prompt: Prompt) -> list[int]:
        from minisgl_edu.tokenizer.template import encode_prompt

        return encode_prompt(self.tokenizer, prompt)

    def generate(
        self,
        prompts: Union[Prompt, Sequence[Prompt]],
        sampling_params: Union[SamplingParams, Sequence[SamplingParams], None] = None,
    ) -> list[RequestOutput]:
        """Run all prompts together (continuous batching) and return one output per prompt."""
        batch = [prompts] if _is_single_prompt(prompts) else list(prompts)
        if sampling_params is None or isinstance(sampling_params, SamplingParams):
            params = [sampling_params or SamplingParams()] * len(batch)
        else:
            params = list(sampling_params)
            if len(params) != len(batch):
                raise ValueError(f"{len(batch)} prompts but {len(params)} sampling params")
        uids, inputs = [], []
        for prompt, sp in zip(batch, params):
            uid = next(self._uids)
            ids = self.encode(prompt)
            uids.append(uid)
            inputs.append(ids)
            self.scheduler.add_request(uid, ids, sp)
        tokens: dict[int, list[int]] = {u: [] for u in uids}
        done: dict[int, tuple[Optional[str], Optional[str]]] = {}
        while len(done) < len(uids):
            self.scheduler.step()
            for msg in self.io.drain():
                if msg.next_token >= 0:
                    tokens[msg.uid].append(msg.next_token)
                if msg.finished:
                    done[msg.uid] = (msg.finish_reason, msg.error)
        outs = []
        for uid, ids, sp in zip(uids, inputs, params):
            reason, error = done[uid]
            outs.append(RequestOutput(uid, ids, tokens[uid], self._text(tokens[uid], sp), reason, error))
        return outs

    def _text(self, token_ids: list[int], sp: SamplingParams) -> str:
        text = self.tokenizer.decode(token_ids, skip_special_tokens=True)
        # The stop string (and anything after it) is not part of the answer, as in OpenAI's API.
        cut = [text.find(s) for s in sp.stop if s in text]
        return text[: min(cut)] if cut else text
