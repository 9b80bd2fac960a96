#!/usr/bin/env bash
# Everything the GPU path needs checked and measured, in one call on the lent H200 (see
# ../shared/gpu/README.md): JIT warm-up, the GPU tests, then the offline benchmark with each
# optimisation switched off in turn. Logs and JSON go to $OUT; a table is printed last.
#   source .gpu/env.sh && OUT=/tmp/out bash scripts/gpu_check.sh [--with-transformers] [--skip-tests]
set -u
OUT=${OUT:-/tmp/gpu_check}; mkdir -p "$OUT"
export PYTHONPATH=$PWD${PYTHONPATH:+:$PYTHONPATH}
# pytest, if the machine lacks it: pure-Python copies staged in .gpu/pylib (appended: never shadows)
python -c "import pytest, pytest_timeout" 2>/dev/null || export PYTHONPATH=$PYTHONPATH:$PWD/.gpu/pylib
HF=0; TESTS=1; ABL=1
for a in "$@"; do
  case $a in --with-transformers) HF=1;; --skip-tests) TESTS=0;; --skip-ablations) ABL=0;; esac
done
t0=$(date +%s)
stamp() { echo "[$(( $(date +%s) - t0 ))s] $*"; }
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader | tee "$OUT/gpu.txt"
python -c "import torch, flashinfer; print('torch', torch.__version__, 'flashinfer', flashinfer.__version__)" | tee -a "$OUT/gpu.txt"

stamp "JIT warm-up (parallel) + random Qwen3-0.6B weights"
KERNELS="prefill decode norm rope act"; [ $TESTS = 1 ] && KERNELS="$KERNELS sampling"  # greedy bench: no sampling kernel
for k in $KERNELS; do python scripts/gpu_warmup.py $k > "$OUT/warm_$k.log" 2>&1 & done
python -c "from minisgl_edu.bench.offline import random_qwen3_dir as r; print(r())" > "$OUT/mkmodel.log" 2>&1 &
wait
tail -n 2 "$OUT"/warm_*.log "$OUT/mkmodel.log"

if [ $TESTS = 1 ]; then
  stamp "tests/test_gpu.py"
  timeout 300 python -m pytest -q -rs -s -m gpu tests/test_gpu.py > "$OUT/pytest.log" 2>&1
  grep -E "relative error|passed|failed|error" "$OUT/pytest.log" | tail -n 25
fi

if [ "${PROFILE:-0}" = 1 ]; then
  stamp "profile batch-1 (replay GPU time, kernels, host cProfile)"
  timeout 180 python scripts/gpu_step_probe.py "$OUT" > "$OUT/profile_batch1.log" 2>&1
  grep -E "^[0-9]\.|^   " "$OUT/profile_batch1.log" | head -n 45 | cut -c1-150
fi

bench() {  # name, timeout, extra args
  local name=$1 to=$2; shift 2
  stamp "bench $name: $*"
  timeout "$to" python -m minisgl_edu.bench.offline --preset qwen3-0.6b --json "$OUT/bench_$name.json" "$@" \
    > "$OUT/bench_$name.log" 2>&1 || echo "  (bench $name failed or timed out, see bench_$name.log)"
  tail -n 3 "$OUT/bench_$name.log"
}
if [ $HF = 1 ]; then bench full 470 ; else bench full 200 --skip-transformers; fi
if [ $ABL = 1 ]; then
  bench no_graph 200 --skip-transformers --no-cuda-graph
  bench no_overlap 200 --skip-transformers --no-overlap
  bench torch_attn 240 --skip-transformers --attention-backend torch --batch1-tokens 256
fi

stamp "summary"
python - "$OUT" <<'PY'
import glob, json, os, sys
print("| run | attention | graphs | overlap | engine tok/s | batch-1 tok/s | transformers tok/s | ratio | startup s |")
print("|---|---|---|---|---|---|---|---|---|")
for f in sorted(glob.glob(os.path.join(sys.argv[1], "bench_*.json"))):
    r = json.load(open(f))
    name = os.path.basename(f)[6:-5]
    print(f"| {name} | {r['attention']} | {r['cuda_graph']} | {r['overlap']} | {r['engine_tok_s']} | "
          f"{r.get('batch1_tok_s','-')} | {r.get('hf_tok_s','-')} | {r.get('speedup','-')} | {r['startup_s']} |")
PY
