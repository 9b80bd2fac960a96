"""Command-line arguments of `python -m minisgl_edu.serve`.

Where this sits on the request path: before it. `ServerArgs` says which model to load, where to
listen, and how big the engine is; `launch.py` hands the engine part to the scheduler process
as a `SchedulerConfig` (`scheduler_overrides`), and the rest to the API server.

Engine options left out on the command line stay `None` here, so the scheduler's own defaults
apply (one place to change them). Two defaults are the server's own, on purpose: on CPU it runs
reduced-precision weights (`cpu_weights="auto"`: the GGUF file's 4-bit blocks where the CPU has
AVX512-BF16, float16 elsewhere) and small decode batches on one thread (`cpu_single_thread_decode`),
where the in-process engine of the chapters and tests runs the exact float32 model.
"""

from __future__ import annotations

import argparse
from dataclasses import dataclass, fields
from typing import Optional

from minisgl_edu import env

DEFAULT_PORT = 1919


@dataclass
class ServerArgs:
    model: str = "smollm2-135m"
    host: str = "127.0.0.1"
    port: int = DEFAULT_PORT
    device: str = "auto"
    num_tokenizer: int = 1
    tp_size: int = 1
    cpu_threads: int = 0  # torch threads of each scheduler process; 0: CPU all cores (split between TP ranks), CUDA 1
    # engine / scheduler (None = the SchedulerConfig default)
    max_running_requests: Optional[int] = None
    page_size: Optional[int] = None
    num_pages: Optional[int] = None
    kv_cache_dtype: Optional[str] = None  # --kv-cache-dtype; None: "auto"
    max_prefill_tokens: Optional[int] = None
    max_seq_len: Optional[int] = None
    cache: Optional[str] = None
    dtype: Optional[str] = None
    # CPU, float32: the matmul weights as int4 blocks where the CPU runs them fast, else float16
    # ("auto"), or one of float16, int4, float32 (the exact model). The engine's own default is float32.
    cpu_weights: str = "auto"
    cpu_single_thread_decode: int = 4  # CPU: decode batches of at most this many requests on one thread
    overlap: Optional[bool] = None  # None: the scheduler decides (on with CUDA, off on CPU)
    attention_backend: Optional[str] = None  # None: "auto"
    cuda_graph_max_bs: Optional[int] = None
    mixed_chunk: Optional[bool] = None  # --enable-mixed-chunk; None: the scheduler's default (off)
    speculative_algorithm: Optional[str] = None  # --speculative-algorithm ngram; None: off
    speculative_num_draft_tokens: Optional[int] = None
    speculative_ngram_max: Optional[int] = None
    speculative_ngram_min: Optional[int] = None
    # API server
    api_key: Optional[str] = None
    max_queue: Optional[int] = 256  # requests waiting beyond max_running_requests; None: no limit
    request_timeout: Optional[float] = 600.0  # seconds from arrival to the last token; None/0: no limit
    max_request_bytes: int = 4 << 20
    served_model_name: Optional[str] = None
    startup_timeout: float = 300.0
    shell: bool = False
    log_level: str = "warning"

    @property
    def model_name(self) -> str:
        """The name the API reports in `model` fields and /v1/models."""
        return self.served_model_name or self.model

    def scheduler_overrides(self) -> dict:
        names = (
            "device",
            "max_running_requests",
            "page_size",
            "num_pages",
            "kv_cache_dtype",
            "max_prefill_tokens",
            "max_seq_len",
            "cache",
            "dtype",
            "cpu_weights",
            "cpu_single_thread_decode",
            "overlap",
            "attention_backend",
            "cuda_graph_max_bs",
            "mixed_chunk",
            "speculative_algorithm",
            "speculative_num_draft_tokens",
            "speculative_ngram_max",
            "speculative_ngram_min",
        )
        return {n: getattr(self, n) for n in names if getattr(self, n) is not None}


def _positive(value: str) -> int:
    n = int(value)
    if n < 1:
        raise argparse.ArgumentTypeError(f"must be a positive integer, got {value}")
    return n


def _non_negative(value: str) -> int:
    n = int(value)
    if n < 0:
        raise argparse.ArgumentTypeError(f"must be 0 or more, got {value}")
    return n


def _seconds(value: str) -> float:
    x = float(value)
    if not x >= 0 or x == float("inf"):
        raise argparse.ArgumentTypeError(f"must be a number of seconds (0: no limit), got {value}")
    return x


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="python -m minisgl_edu.serve",
        description="OpenAI-compatible LLM server: API server, tokenizer, scheduler and detokenizer processes.",
    )
    _add_engine_args(
        p.add_argument_group("engine", "the model, the device and the engine's memory and kernels (EngineConfig)")
    )
    _add_scheduler_args(
        p.add_argument_group("scheduler", "batching, the prefix cache and speculative decoding (SchedulerConfig)")
    )
    _add_server_args(p.add_argument_group("server", "HTTP, the tokenizer workers and the limits on requests"))
    return p


def _add_engine_args(p: argparse._ArgumentGroup) -> None:
    p.add_argument(
        "--model", default=ServerArgs.model, help="model alias (smollm2-135m, bundled), local HF directory, or hub id"
    )
    p.add_argument("--device", default=ServerArgs.device, help="cpu, cuda, or auto")
    p.add_argument(
        "--tp",
        "--tp-size",
        dest="tp_size",
        type=_positive,
        default=1,
        help="tensor parallel ranks: N scheduler processes, each with 1/N of the model "
        "(N must divide the query and KV heads)",
    )
    p.add_argument("--dtype", help="auto, float32, bfloat16, float16")
    p.add_argument(
        "--cpu-weights",
        choices=["auto", "float16", "float32", "int4"],
        default=ServerArgs.cpu_weights,
        help="CPU in float32, how the matmul weights are kept: int4 (the layers on the GGUF file's 4-bit "
        "blocks, bfloat16 at each matmul's input and output; CPUs with AVX512-BF16 only), float16 for "
        "FBGEMM, or float32 (the exact model, token for token as transformers). Default auto: int4 "
        "where the CPU and the model allow it, else float16. The math between the matmuls is float32",
    )
    p.add_argument(
        "--cpu-threads",
        type=_non_negative,
        default=0,
        help="torch threads of each scheduler process (default 0: on CPU all cores, split between the TP "
        "ranks; on CUDA one, for the host's small tensors)",
    )
    p.add_argument(
        "--cpu-single-thread-decode",
        type=_non_negative,
        default=ServerArgs.cpu_single_thread_decode,
        help="CPU: run decode batches of at most this many requests on one thread, where waking the "
        "other threads costs more than they save (default %(default)s; 0: always all --cpu-threads)",
    )
    p.add_argument(
        "--attention-backend",
        help="torch, flashinfer, or prefill,decode such as flashinfer,triton (default auto: torch on "
        "CPU, flashinfer,triton on CUDA)",
    )
    p.add_argument(
        "--cuda-graph-max-bs",
        type=_non_negative,
        help="CUDA: decode batches up to this size replay a captured graph (0: no graphs)",
    )
    p.add_argument("--page-size", type=_positive, help="tokens per KV cache page")
    p.add_argument("--num-pages", type=_positive, help="pages in the KV cache")
    p.add_argument(
        "--kv-cache-dtype",
        choices=["auto", "fp8_e4m3"],
        help="what the KV pages store: auto (the model's dtype) or fp8_e4m3 (one byte per number, a scale "
        "per token and head: about twice the tokens, half the bytes a decode step reads)",
    )
    p.add_argument("--max-seq-len", type=_positive, help="cap on prompt + output tokens of one request")


def _add_scheduler_args(p: argparse._ArgumentGroup) -> None:
    p.add_argument(
        "--max-running-requests",
        type=_positive,
        help="requests decoded together at most (default: 32 on CPU; on CUDA as many as the KV cache "
        "holds at 2,048 tokens each, from 32 to 256; the ready line says which)",
    )
    p.add_argument("--max-prefill-tokens", type=_positive, help="token budget of one prefill batch")
    p.add_argument("--cache", choices=["radix", "naive"], help="prefix cache (default radix)")
    p.add_argument(
        "--disable-overlap-schedule",
        dest="overlap",
        action="store_false",
        default=None,
        help="use normal_loop even on CUDA (overlap_loop prepares the next batch while one runs)",
    )
    p.add_argument(
        "--enable-mixed-chunk",
        dest="mixed_chunk",
        action="store_true",
        default=None,
        help="decode tokens of running requests ride along with each prefill batch in one forward "
        "pass, within --max-prefill-tokens (default off: a prefill batch runs alone)",
    )
    p.add_argument(
        "--speculative-algorithm",
        choices=["ngram"],
        help="speculative decoding: ngram guesses each request's next tokens from its own prompt and "
        "output, and one forward pass checks them (default off)",
    )
    p.add_argument(
        "--speculative-num-draft-tokens",
        type=_positive,
        help="tokens guessed per request and step (default 4 on CPU, 7 on CUDA)",
    )
    p.add_argument("--speculative-ngram-max", type=_positive, help="longest suffix looked up for a draft (default 4)")
    p.add_argument("--speculative-ngram-min", type=_positive, help="shortest suffix looked up for a draft (default 2)")


def _add_server_args(p: argparse._ArgumentGroup) -> None:
    p.add_argument("--host", default=ServerArgs.host, help="address to bind (default 127.0.0.1: this machine only)")
    p.add_argument("--port", type=int, default=ServerArgs.port)
    p.add_argument("--num-tokenizer", type=_positive, default=1, help="number of tokenizer worker processes")
    p.add_argument(
        "--api-key",
        default=env.get().api_key,
        help="require 'Authorization: Bearer KEY' on /v1/* (default: $MINISGL_API_KEY; the "
        "environment keeps the key out of `ps`)",
    )
    p.add_argument(
        "--max-queue",
        type=_non_negative,
        default=ServerArgs.max_queue,
        help="generation requests that may wait beyond --max-running-requests; more get 503 "
        "with Retry-After (default %(default)s)",
    )
    p.add_argument(
        "--request-timeout",
        type=_seconds,
        default=ServerArgs.request_timeout,
        help="abort a request that has not finished after this many seconds, waiting included "
        "(default %(default)s; 0: no limit)",
    )
    p.add_argument(
        "--max-request-bytes",
        type=_positive,
        default=ServerArgs.max_request_bytes,
        help="largest request body; larger ones get 413 (default %(default)s)",
    )
    p.add_argument("--served-model-name", help="model name reported by the API (default: --model)")
    p.add_argument(
        "--startup-timeout",
        type=float,
        default=ServerArgs.startup_timeout,
        help="seconds to wait for the workers to load",
    )
    p.add_argument("--shell", action="store_true", help="chat in this terminal instead of serving HTTP")
    p.add_argument("--log-level", default=ServerArgs.log_level, choices=["debug", "info", "warning", "error"])


def parse_args(argv: Optional[list[str]] = None) -> ServerArgs:
    ns = build_parser().parse_args(argv)
    known = {f.name for f in fields(ServerArgs)}
    return ServerArgs(**{k: v for k, v in vars(ns).items() if k in known})
