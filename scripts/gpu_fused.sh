#!/usr/bin/env bash
# The fused-kernel model path on the lent H200, in one call (see ../shared/gpu/README.md):
# parallel JIT warm-up (attention + the fused norm/rope/activation kernels, each checked against
# float32 torch), correctness against transformers (model alone, then the whole engine with
# CUDA graphs and overlap), the offline benchmark with the fused kernels on and off
# (MINISGL_EDU_FUSED=0) on the same machine, then as much of tests/test_gpu.py as time allows.
# Logs and JSON go to $OUT; a table is printed last.
#   source .gpu/env.sh && OUT=/tmp/out DEADLINE=530 bash scripts/gpu_fused.sh
set -u
OUT=${OUT:-/tmp/gpu_fused}; mkdir -p "$OUT"
DEADLINE=${DEADLINE:-530}  # seconds from start; the tests get what is left
export PYTHONPATH=$PWD${PYTHONPATH:+:$PYTHONPATH}
python -c "import pytest, pytest_timeout" 2>/dev/null || export PYTHONPATH=$PYTHONPATH:$PWD/.gpu/pylib
t0=$(date +%s)
el() { echo $(( $(date +%s) - t0 )); }
stamp() { echo "[$(el)s] $*"; }
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader | tee "$OUT/gpu.txt"
python -c "import torch, flashinfer, transformers; print('torch', torch.__version__, 'flashinfer', flashinfer.__version__, 'transformers', transformers.__version__)" | tee -a "$OUT/gpu.txt"
git log -1 --format='base commit %h %s' 2>/dev/null | tee -a "$OUT/gpu.txt"

stamp "JIT warm-up (parallel): prefill decode sampling norm rope act; random Qwen3-0.6B weights"
declare -A PID
for k in prefill decode sampling norm rope act; do
  python scripts/gpu_warmup.py $k > "$OUT/warm_$k.log" 2>&1 & PID[$k]=$!
done
python -c "from minisgl_edu.bench.offline import random_qwen3_dir as r; print(r())" > "$OUT/mkmodel.log" 2>&1 & PID[mk]=$!
for k in norm rope act mk; do wait ${PID[$k]}; done
stamp "fused kernels compiled"; cat "$OUT"/warm_norm.log "$OUT"/warm_rope.log "$OUT"/warm_act.log | grep -v "^$" | tail -n 12

stamp "correctness: our model (fused, and unfused) vs transformers fp32/bf16"
timeout 150 python scripts/gpu_fused_check.py model > "$OUT/correct_model.log" 2>&1; echo "  rc=$?"
tail -n 1 "$OUT/correct_model.log" | cut -c1-600

for k in prefill decode sampling; do wait ${PID[$k]}; done  # no compiling beside the benchmarks
stamp "attention and sampling kernels compiled"; tail -qn 1 "$OUT"/warm_prefill.log "$OUT"/warm_decode.log "$OUT"/warm_sampling.log

stamp "correctness: whole engine (FlashInfer, CUDA graphs, overlap) greedy vs transformers fp32"
timeout 150 python scripts/gpu_fused_check.py engine > "$OUT/correct_engine.log" 2>&1; echo "  rc=$?"
tail -n 1 "$OUT/correct_engine.log" | cut -c1-600

bench() {  # name, timeout, env, extra args
  local name=$1 to=$2 env=$3; shift 3
  stamp "bench $name ($env): $*"
  env $env timeout "$to" python -m minisgl_edu.bench.offline --preset qwen3-0.6b --json "$OUT/bench_$name.json" "$@" \
    > "$OUT/bench_$name.log" 2>&1 || echo "  (bench $name failed or timed out, see bench_$name.log)"
  tail -n 2 "$OUT/bench_$name.log"
}
bench fused 170 MINISGL_EDU_FUSED=1 --skip-transformers
bench unfused 170 MINISGL_EDU_FUSED=0 --skip-transformers

left=$(( DEADLINE - $(el) ))
if [ $left -ge 45 ]; then
  stamp "tests/test_gpu.py (-m gpu), ${left}s left"
  timeout $left python -m pytest -v -rs -s -m gpu tests/test_gpu.py > "$OUT/pytest.log" 2>&1
  echo "  rc=$? (124: cut off by the time limit)"
  grep -E "relative error|PASSED|FAILED|ERROR|passed|failed" "$OUT/pytest.log" | sed 's/^tests\/test_gpu.py:://' | cut -c1-150 | tail -n 20
else
  stamp "no time left for tests/test_gpu.py (${left}s)"
fi

stamp "summary"
python - "$OUT" <<'PY'
import glob, json, os, sys
d = sys.argv[1]
for part in ("model", "engine"):
    f = os.path.join(d, f"correct_{part}.json")
    if os.path.exists(f):
        r = json.load(open(f))
        print(part, {k: (round(v, 5) if isinstance(v, float) else v) for k, v in r.items() if not k.endswith("_tokens")})
    else:
        print(part, "no result")
print("| run | attention | graphs | overlap | engine tok/s | batch-1 tok/s | engine s | startup s |")
print("|---|---|---|---|---|---|---|---|")
for f in sorted(glob.glob(os.path.join(d, "bench_*.json"))):
    r = json.load(open(f))
    print(f"| {os.path.basename(f)[6:-5]} | {r['attention']} | {r['cuda_graph']} | {r['overlap']} | "
          f"{r['engine_tok_s']} | {r.get('batch1_tok_s', '-')} | {r.get('engine_s', '-')} | {r['startup_s']} |")
PY
