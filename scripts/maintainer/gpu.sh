#!/usr/bin/env bash
# One entry point for the maintainer's GPU tools (CUDA machine only; scripts/maintainer/README.md
# says which question each answers). `check` is the standard one: tests, correctness against
# transformers, the benchmark and its ablations, a table last.
#   bash scripts/maintainer/gpu.sh check|ab|stage-base|correct|smoke|warmup|kernels|fp8|requests|speculative|orders|serving [ARGS...]
set -eu
here=$(cd "$(dirname "$0")" && pwd)
tool=${1:-}
[ $# -gt 0 ] && shift
case $tool in
  check)       exec bash "$here/gpu_check.sh" "$@" ;;
  ab)          exec bash "$here/gpu_ab.sh" "$@" ;;
  stage-base)  exec bash "$here/gpu_stage_base.sh" "$@" ;;
  correct)     exec python "$here/gpu_fused_check.py" "$@" ;;
  smoke)       exec python "$here/gpu_smoke.py" "$@" ;;
  warmup)      exec python "$here/gpu_warmup.py" "$@" ;;
  kernels)     exec python "$here/gpu_kernel_bench.py" "$@" ;;
  fp8)         exec python "$here/gpu_fp8_kv.py" "$@" ;;
  requests)    exec python "$here/gpu_requests.py" "$@" ;;
  speculative) exec python "$here/gpu_speculative.py" "$@" ;;
  orders)      exec bash "$here/gpu_suite_orders.sh" "$@" ;;
  serving)     exec bash "$here/gpu_serving.sh" "$@" ;;
  *) sed -n '2,5p' "$0" >&2; echo "see scripts/maintainer/README.md" >&2; exit 2 ;;
esac
