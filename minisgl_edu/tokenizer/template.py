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
    (ids,) = encode_prompts(tokenizer, [prompt])
    if isinstance(ids, ValueError):
        raise ids
    return ids


def encode_prompts(tokenizer: Any, prompts: list[Prompt]) -> list[Union[list[int], ValueError]]:
    """`encode_prompt` of many prompts at once, in order; a prompt that cannot be encoded gets its
    ValueError in its place. The texts go to the tokenizer in one call: a fast (Rust) tokenizer
    spreads a batch over the cores, which a burst of new requests needs."""
    out: list[Union[list[int], ValueError, None]] = [None] * len(prompts)
    texts: dict[bool, list[tuple[int, str]]] = {True: [], False: []}  # add_special_tokens -> (index, text)
    for i, prompt in enumerate(prompts):
        try:
            found = _text_of(tokenizer, prompt)
        except ValueError as e:
            out[i] = e
            continue
        if isinstance(found, list):
            out[i] = found
        else:
            texts[found[1]].append((i, found[0]))
    for special, items in texts.items():
        if items:
            encoded = tokenizer([text for _, text in items], add_special_tokens=special)["input_ids"]
            for (i, _), ids in zip(items, encoded):
                out[i] = list(ids)
    return out


def _text_of(tokenizer: Any, prompt: Prompt) -> Union[list[int], tuple[str, bool]]:
    """The text to encode and whether the tokenizer adds its special tokens, or the ids as sent."""
    if isinstance(prompt, str):
        return prompt, True
    if not isinstance(prompt, (list, tuple)) or len(prompt) == 0:
        raise ValueError("the prompt must be a string, a non-empty list of chat messages or of token ids")
    if all(isinstance(t, int) and not isinstance(t, bool) for t in prompt):
        return list(prompt)
    if all(isinstance(m, dict) for m in prompt):
        if not getattr(tokenizer, "chat_template", None):
            raise ValueError("this model has no chat template: send a plain prompt to /v1/completions")
        messages = normalize_messages(list(prompt))
        try:
            text = tokenizer.apply_chat_template(messages, tokenize=False, add_generation_prompt=True)
        except Exception as e:  # e.g. a chat template that raises on an unexpected role order
            raise ValueError(f"could not apply the chat template: {e}") from e
        # Encoded without adding special tokens: the template already wrote the ones the model
        # expects (a second BOS would change the model's answer).
        return text, False
    raise ValueError("the prompt must be a string, a list of chat messages or a list of token ids, not a mix")
