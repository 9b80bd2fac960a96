#!/usr/bin/env bash
# One call on the lent H200: JIT warm-up, then scripts/gpu_step_probe.py (where a decode step's
# time goes), then tests/test_gpu.py with what is left of DEADLINE seconds. Logs under $OUT.
#   source .gpu/env.sh && OUT=/tmp/out DEADLINE=540 bash scripts/gpu_probe.sh
set -u
OUT=${OUT:-/tmp/gpu_probe}; mkdir -p "$OUT"
DEADLINE=${DEADLINE:-540}
export PYTHONPATH=$PWD${PYTHONPATH:+:$PYTHONPATH}
python -c "import pytest, pytest_timeout" 2>/dev/null || export PYTHONPATH=$PYTHONPATH:$PWD/.gpu/pylib
t0=$(date +%s); el() { echo $(( $(date +%s) - t0 )); }; stamp() { echo "[$(el)s] $*"; }
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader | tee "$OUT/gpu.txt"
stamp "JIT warm-up (parallel)"
for k in prefill decode sampling norm rope act; do python scripts/gpu_warmup.py $k > "$OUT/warm_$k.log" 2>&1 & done
python -c "from minisgl_edu.bench.offline import random_qwen3_dir as r; print(r())" > "$OUT/mkmodel.log" 2>&1 &
wait; stamp "warm"; tail -qn 1 "$OUT"/warm_*.log
stamp "probe"
timeout 240 python scripts/gpu_step_probe.py "$OUT" > "$OUT/probe.log" 2>&1; echo "  rc=$?"
left=$(( DEADLINE - $(el) ))
if [ $left -ge 40 ]; then
  stamp "tests/test_gpu.py, ${left}s left"
  timeout $left python -m pytest -q -rs -m gpu tests/test_gpu.py > "$OUT/pytest.log" 2>&1; echo "  rc=$?"
  tail -n 5 "$OUT/pytest.log"
fi
stamp "probe summary"; grep -E "^[0-9]\.|^   " "$OUT/probe.log" | head -30
