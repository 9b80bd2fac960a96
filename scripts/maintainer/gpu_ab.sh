#!/usr/bin/env bash
# Everything a GPU run checks and measures, in one call on one GPU machine (FlashInfer installed:
# docs/benchmarks.md). Machines differ by ~10%, so compare only runs of one call.
#   source .gpu/env.sh && OUT=/tmp/out bash scripts/maintainer/gpu_ab.sh [--tests] [--checks] \
#       'name|ENV=value ...|--bench-flags ...' ...
# In order: JIT warm-up; --tests: `pytest -m gpu tests/test_gpu*.py`; --checks: our model and the
# whole engine against transformers (scripts/maintainer/gpu_fused_check.py); the offline benchmark
# (--preset qwen3-0.6b) once per variant, in the order given. A table is printed last.
# In a variant's env part, three names are ours, not the engine's: TREE=dir runs another copy of
# the code (e.g. `git archive` of an older commit), HF=1 also runs transformers (~200 s), and
# TIMEOUT=s replaces the 120 s limit. Example:
#   'new||' 'old|TREE=.gpu/base|' 'big_prefill||--max-prefill-tokens 16384' 'no_triton||--triton-kernels 0' 'hf|HF=1|'
set -u
OUT=${OUT:-/tmp/gpu_ab}; mkdir -p "$OUT" /tmp/gl
DEADLINE=${DEADLINE:-560}  # seconds from the start; a variant that would begin later is skipped
export PYTHONPATH=$PWD${PYTHONPATH:+:$PYTHONPATH}
# pytest, if the machine lacks it: pure-Python copies staged in .gpu/pylib (appended: never shadows)
python -c "import pytest, pytest_timeout" 2>/dev/null || export PYTHONPATH=$PYTHONPATH:$PWD/.gpu/pylib
TESTS=0; CHECKS=0; VARIANTS=()
for a in "$@"; do
  case $a in --tests) TESTS=1;; --checks) CHECKS=1;; *) VARIANTS+=("$a");; esac
done
t0=$(date +%s); el() { echo $(( $(date +%s) - t0 )); }; stamp() { echo "[$(el)s] $*"; }
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader | tee "$OUT/gpu.txt"
python -c "import torch, triton, flashinfer; print('torch', torch.__version__, 'triton', triton.__version__, 'flashinfer', flashinfer.__version__)" | tee -a "$OUT/gpu.txt"

stamp "JIT warm-up (parallel) + random Qwen3-0.6B weights"
KERNELS="prefill decode norm rope act"; [ $TESTS = 1 ] && KERNELS="$KERNELS sampling"  # greedy bench: no sampling kernel
for k in $KERNELS; do python scripts/maintainer/gpu_warmup.py $k > "/tmp/gl/warm_$k.log" 2>&1 & done
python -c "from minisgl_edu.bench.offline import random_qwen3_dir as r; print(r())" > /tmp/gl/mkmodel.log 2>&1 &
wait
stamp "warm"

if [ $TESTS = 1 ]; then
  stamp "pytest -m gpu tests/test_gpu*.py"
  timeout 240 python -m pytest -q -rs -s -m gpu tests/test_gpu.py tests/test_gpu_kernels.py tests/test_gpu_sampling.py > "$OUT/pytest.log" 2>&1; echo "  rc=$?"
  grep -E "relative error|passed|failed|FAILED|Error" "$OUT/pytest.log" | tail -n 12
fi

if [ $CHECKS = 1 ]; then
  for part in model engine; do
    stamp "against transformers: $part (scripts/maintainer/gpu_fused_check.py)"
    OUT=$OUT timeout 150 python scripts/maintainer/gpu_fused_check.py $part > "/tmp/gl/check_$part.log" 2>&1; echo "  rc=$?"
    tail -n 1 "/tmp/gl/check_$part.log" | cut -c1-600
  done
fi

for v in "${VARIANTS[@]}"; do
  IFS='|' read -r name envs flags <<< "$v"
  if [ $(( DEADLINE - $(el) )) -lt 45 ]; then stamp "no time left for $name"; continue; fi
  stamp "bench $name: env [$envs] flags [$flags]"
  ours() { sed -n "s/.*\\b$1=\\([^ ]*\\).*/\\1/p" <<< "$envs"; }
  tree=$(ours TREE); tree=${tree:-.}
  skip=--skip-transformers; [ "$(ours HF)" = 1 ] && skip=""
  to=$(ours TIMEOUT); to=${to:-$([ -z "$skip" ] && echo 420 || echo 120)}
  # shellcheck disable=SC2086
  (cd "$tree" && env $envs PYTHONPATH="$PWD:$PYTHONPATH" timeout "$to" python -m minisgl_edu.bench.offline \
    --preset qwen3-0.6b $skip --json "$OUT/bench_$name.json" $flags) \
    > "/tmp/gl/bench_$name.log" 2>&1 || echo "  (failed, see /tmp/gl/bench_$name.log)"
  tail -n 1 "/tmp/gl/bench_$name.log"
done

stamp "summary"
python - "$OUT" <<'PY'
import glob, json, os, sys
print("| run | attention | graphs | overlap | engine tok/s | batch-1 tok/s | engine s | transformers tok/s | ratio |")
print("|---|---|---|---|---|---|---|---|---|")
for f in sorted(glob.glob(os.path.join(sys.argv[1], "bench_*.json")), key=os.path.getmtime):
    r = json.load(open(f))
    print(f"| {os.path.basename(f)[6:-5]} | {r['attention']} | {r['cuda_graph']} | {r['overlap']} | {r['engine_tok_s']} | "
          f"{r.get('batch1_tok_s', '-')} | {r.get('engine_s')} | {r.get('hf_tok_s', '-')} | {r.get('speedup', '-')} |")
PY
