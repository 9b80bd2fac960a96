"""From whatever the client sent to the token ids the scheduler needs.

Where this sits on the request path: inside the tokenizer worker, right after the API server's
`TokenizeMsg` arrives (and inside the offline `LLM`). A prompt comes in one of three shapes:

* a string (`/v1/completions`): encoded as it is;
* a list of chat messages (`/v1/chat/completions`): the model's chat template turns roles and
  contents into the single text the model was trained on, ending with the opening of an assistant
  turn (`add_generation_prompt=True`), so the model's next tokens are the answer;
* a list of token ids: passed through (the caller already tokenized).

After this point nothing downstream sees text again until the detokenizer.
"""

from __future__ import annotations

from typing import Any, Union

Prompt = Union[str, list[dict], list[int]]


def normalize_messages(messages: list[Any]) -> list[dict]:
    """Check chat messages and flatten OpenAI content parts (`[{"type": "text", ...}]`) to text."""
    if not messages:
        raise ValueError("messages must be a non-empty list")
    out = []
    for i, m in enumerate(messages):
        if not isinstance(m, dict) or "role" not in m:
            raise ValueError(f"messages[{i}] must be an object with a 'role'")
        content = m.get("content")
        if content is None:
            content = ""
        if isinstance(content, list):
            texts = []
            for part in content:
                if not (isinstance(part, dict) and part.get("type") == "text" and isinstance(part.get("text"), str)):
                    raise ValueError(f"messages[{i}].content: only text parts are supported")
                texts.append(part["text"])
            content = "".join(texts)
        if not isinstance(content, str):
            raise ValueError(f"messages[{i}].content must be a string or a list of text parts")
        out.append({**m, "content": content})
    return out


def encode_prompt(tokenizer: Any, prompt: Prompt) -> list[int]:
    """Token ids for `prompt` (a string, a list of chat messages, or a list of token ids)."""
    if isinstance(prompt, str):
        return list(tokenizer.encode(prompt))
    if not isinstance(prompt, (list, tuple)) or len(prompt) == 0:
        raise ValueError("the prompt must be a string, a non-empty list of chat messages or of token ids")
    if all(isinstance(t, int) and not isinstance(t, bool) for t in prompt):
        return list(prompt)
    if all(isinstance(m, dict) for m in prompt):
        if not getattr(tokenizer, "chat_template", None):
            raise ValueError("this model has no chat template: send a plain prompt to /v1/completions")
        # Render to text first, then encode without adding special tokens: the template already
        # wrote the ones the model expects (a second BOS would change the model's answer).
        text = tokenizer.apply_chat_template(
            normalize_messages(list(prompt)), tokenize=False, add_generation_prompt=True
        )
        return list(tokenizer.encode(text, add_special_tokens=False))
    raise ValueError("the prompt must be a string, a list of chat messages or a list of token ids, not a mix")
