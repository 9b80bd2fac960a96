#!/usr/bin/env bash
# The GPU suite in three runs on one machine: in file order, again in file order (kernels now
# compiled and cached), and reversed (`pytest --reverse`, tests/conftest.py). A test that passes
# alone but fails after another one shows up here: state that an earlier test leaves behind (a
# kernel first compiled inside a graph capture, a global, a stream) that a server could meet too.
#   bash scripts/maintainer/gpu.sh orders [PYTEST ARGS...]      (default: the gpu-marked tests)
set -u
args=("$@")
[ ${#args[@]} -eq 0 ] && args=(-m gpu tests/test_gpu.py tests/test_gpu_kernels.py tests/test_gpu_sampling.py tests/test_mixed_batches.py)
declare -a rows
for run in forward again reverse; do
  extra=()
  [ "$run" = reverse ] && extra=(--reverse)
  start=$(date +%s)
  out=$(python -m pytest -q -p no:cacheprovider "${args[@]}" "${extra[@]}" 2>&1)
  rc=$?
  [ -n "${OUT:-}" ] && echo "$out" > "$OUT/orders_$run.log"
  echo "== $run"; echo "$out" | grep -E "^(FAILED|ERROR)" | cut -c1-200
  rows+=("$(printf '%-8s rc=%-3s %4ss  %s' "$run" "$rc" "$(( $(date +%s) - start ))" "$(echo "$out" | tail -1)")")
done
echo
echo "run      result  time  summary"
printf '%s\n' "${rows[@]}"
