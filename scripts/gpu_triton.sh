#!/usr/bin/env bash
# Our Triton kernels on the lent H200, in one call: JIT warm-up, GPU time per decode-graph replay
# and the offline benchmark with the kernels on and off (MINISGL_EDU_TRITON=0), alternated twice
# on the same machine, tests/test_gpu.py, and (if its compile is done by then) FA3 prefill.
# Logs under $OUT; a table is printed last.
#   source .gpu/env.sh && OUT=/tmp/out DEADLINE=540 bash scripts/gpu_triton.sh
set -u
OUT=${OUT:-/tmp/gpu_triton}; mkdir -p "$OUT" /tmp/gl
DEADLINE=${DEADLINE:-540}
export PYTHONPATH=$PWD${PYTHONPATH:+:$PYTHONPATH}
python -c "import pytest, pytest_timeout" 2>/dev/null || export PYTHONPATH=$PYTHONPATH:$PWD/.gpu/pylib
t0=$(date +%s); el() { echo $(( $(date +%s) - t0 )); }; stamp() { echo "[$(el)s] $*"; }
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader | tee "$OUT/gpu.txt"
python -c "import torch, triton, flashinfer; print('torch', torch.__version__, 'triton', triton.__version__, 'flashinfer', flashinfer.__version__)" | tee -a "$OUT/gpu.txt"
stamp "JIT warm-up (parallel; FA3 prefill in the background)"
MINISGL_EDU_FI_PREFILL=fa3 python scripts/gpu_warmup.py prefill > "/tmp/gl/warm_fa3.log" 2>&1 & FA3=$!
declare -A PID
for k in prefill decode sampling norm rope act; do python scripts/gpu_warmup.py $k > "/tmp/gl/warm_$k.log" 2>&1 & PID[$k]=$!; done
python -c "from minisgl_edu.bench.offline import random_qwen3_dir as r; print(r())" > "/tmp/gl/mkmodel.log" 2>&1 & PID[mk]=$!
for k in prefill decode norm rope act mk; do wait ${PID[$k]}; done
stamp "warm (sampling and FA3 may still compile)"
for t in 1 0; do
  v=$([ $t = 1 ] && echo rope,gemm || echo 0)
  stamp "probe, MINISGL_EDU_TRITON=$v"
  MINISGL_EDU_TRITON=$v timeout 100 python scripts/gpu_step_probe.py "$OUT" --quick > "/tmp/gl/probe_$t.log" 2>&1; echo "  rc=$?"
done
bench() {  # name, env...
  local name=$1; shift
  stamp "bench $name ($*)"
  env "$@" timeout 120 python -m minisgl_edu.bench.offline --preset qwen3-0.6b --skip-transformers --json "$OUT/bench_$name.json" \
    > "/tmp/gl/bench_$name.log" 2>&1 || echo "  (failed or timed out, see /tmp/gl/bench_$name.log)"
  tail -n 1 "/tmp/gl/bench_$name.log"
}
bench triton_a MINISGL_EDU_TRITON=rope,gemm
bench off_a MINISGL_EDU_TRITON=0
bench triton_b MINISGL_EDU_TRITON=rope,gemm
bench off_b MINISGL_EDU_TRITON=0
wait ${PID[sampling]}
left=$(( DEADLINE - $(el) - 60 ))
if [ $left -ge 40 ]; then
  stamp "tests/test_gpu.py, ${left}s left"
  timeout $left python -m pytest -q -rs -s -m gpu tests/test_gpu.py > "/tmp/gl/pytest.log" 2>&1; echo "  rc=$?"
  grep -E "relative error|qk_rope_store|passed|failed|FAILED|Error" "/tmp/gl/pytest.log" | tail -n 14
fi
if kill -0 $FA3 2>/dev/null; then stamp "FA3 still compiling: no FA3 run"; else
  tail -n 1 "/tmp/gl/warm_fa3.log"
  [ $(( DEADLINE - $(el) )) -ge 50 ] && bench fa3 MINISGL_EDU_TRITON=rope,gemm MINISGL_EDU_FI_PREFILL=fa3
fi
cp /tmp/gl/pytest.log /tmp/gl/probe_1.log "$OUT"/ 2>/dev/null
stamp "summary"
for t in 1 0; do echo "probe TRITON=$t:"; grep -E "^   (overlap|bs=)" "/tmp/gl/probe_$t.log"; done
python - "$OUT" <<'PY'
import glob, json, os, sys
print("| run | engine tok/s | batch-1 tok/s | engine s |")
print("|---|---|---|---|")
for f in sorted(glob.glob(os.path.join(sys.argv[1], "bench_*.json"))):
    r = json.load(open(f))
    print(f"| {os.path.basename(f)[6:-5]} | {r['engine_tok_s']} | {r.get('batch1_tok_s')} | {r.get('engine_s')} |")
PY
