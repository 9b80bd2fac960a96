#!/usr/bin/env bash
# One entry point for the GPU tools (CUDA machine only; scripts/README.md says which question each
# answers). `check` is the standard one: tests, correctness against transformers, the benchmark and
# its ablations, a table last.
#   bash scripts/gpu.sh check|ab|correct|smoke|probe|timeline|kernels|host|chain|warmup|requests|speculative|prefill|orders|serving|hops|stage-base [ARGS...]
set -eu
here=$(cd "$(dirname "$0")" && pwd)
tool=${1:-}
[ $# -gt 0 ] && shift
case $tool in
  check)      exec bash "$here/gpu_check.sh" "$@" ;;
  ab)         exec bash "$here/gpu_ab.sh" "$@" ;;
  correct)    exec python "$here/gpu_fused_check.py" "$@" ;;
  smoke)      exec python "$here/gpu_smoke.py" "$@" ;;
  probe)      exec python "$here/gpu_step_probe.py" "$@" ;;
  timeline)   exec python "$here/gpu_loop_timeline.py" "$@" ;;
  kernels)    exec python "$here/gpu_kernel_bench.py" "$@" ;;
  host)       exec python "$here/gpu_host_share.py" "$@" ;;
  chain)      exec python "$here/gpu_chain_floor.py" "$@" ;;
  warmup)     exec python "$here/gpu_warmup.py" "$@" ;;
  requests)   exec python "$here/gpu_requests.py" "$@" ;;
  speculative) exec python "$here/gpu_speculative.py" "$@" ;;
  prefill)    exec python "$here/gpu_prefill.py" "$@" ;;
  orders)     exec bash "$here/gpu_suite_orders.sh" "$@" ;;
  serving)    exec bash "$here/gpu_serving.sh" "$@" ;;
  hops)       exec bash "$here/server_hops.sh" "$@" ;;
  stage-base) exec bash "$here/gpu_stage_base.sh" "$@" ;;
  *) sed -n '2,5p' "$0" >&2; echo "see scripts/README.md" >&2; exit 2 ;;
esac
