#!/usr/bin/env bash
# A/B runs of the offline GPU benchmark in one call on the lent H200 (machines differ by ~10%, so
# only runs of one call are compared): JIT warm-up, optionally the GPU tests, the benchmark once
# per variant in the order given, optionally a kernel profile of the 256-request run; a table last.
#   source .gpu/env.sh && OUT=/tmp/out bash scripts/gpu_ab.sh [--tests] [--profile] \
#       'name|ENV=value ...|--bench-flags ...' ...
# e.g. 'base||' 'big_prefill||--max-prefill-tokens 8192' 'no_triton|MINISGL_EDU_TRITON=0|' 'hf|HF=1|'
set -u
OUT=${OUT:-/tmp/gpu_ab}; mkdir -p "$OUT" /tmp/gl
DEADLINE=${DEADLINE:-560}
export PYTHONPATH=$PWD${PYTHONPATH:+:$PYTHONPATH}
python -c "import pytest, pytest_timeout" 2>/dev/null || export PYTHONPATH=$PYTHONPATH:$PWD/.gpu/pylib
TESTS=0; PROFILE=0; VARIANTS=()
for a in "$@"; do
  case $a in --tests) TESTS=1;; --profile) PROFILE=1;; *) VARIANTS+=("$a");; esac
done
t0=$(date +%s); el() { echo $(( $(date +%s) - t0 )); }; stamp() { echo "[$(el)s] $*"; }
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader | tee "$OUT/gpu.txt"
python -c "import torch, triton, flashinfer; print('torch', torch.__version__, 'triton', triton.__version__, 'flashinfer', flashinfer.__version__)" | tee -a "$OUT/gpu.txt"

stamp "JIT warm-up (parallel) + random Qwen3-0.6B weights"
KERNELS="prefill decode norm rope act"; [ $TESTS = 1 ] && KERNELS="$KERNELS sampling"
for k in $KERNELS; do python scripts/gpu_warmup.py $k > "/tmp/gl/warm_$k.log" 2>&1 & done
python -c "from minisgl_edu.bench.offline import random_qwen3_dir as r; print(r())" > /tmp/gl/mkmodel.log 2>&1 &
wait
stamp "warm"

if [ $TESTS = 1 ]; then
  stamp "pytest -m gpu tests/test_gpu.py"
  timeout 240 python -m pytest -q -rs -s -m gpu tests/test_gpu.py > "$OUT/pytest.log" 2>&1; echo "  rc=$?"
  grep -E "relative error|passed|failed|FAILED|Error" "$OUT/pytest.log" | tail -n 12
fi

for v in "${VARIANTS[@]}"; do
  IFS='|' read -r name envs flags <<< "$v"
  if [ $(( DEADLINE - $(el) )) -lt 45 ]; then stamp "no time left for $name"; continue; fi
  stamp "bench $name: env [$envs] flags [$flags]"
  # TREE=dir in the env part runs another copy of the code (e.g. `git archive` of an older commit).
  tree=$(sed -n 's/.*TREE=\([^ ]*\).*/\1/p' <<< "$envs"); tree=${tree:-.}
  # HF=1 in the env part also runs transformers on the same prompts (~200 s for the 256 requests).
  skip=--skip-transformers; [[ " $envs " == *" HF=1 "* ]] && skip=""
  to=$([ -z "$skip" ] && echo 420 || echo 120)
  # shellcheck disable=SC2086
  (cd "$tree" && env $envs PYTHONPATH="$PWD:$PYTHONPATH" timeout $to python -m minisgl_edu.bench.offline \
    --preset qwen3-0.6b $skip --json "$OUT/bench_$name.json" $flags) \
    > "/tmp/gl/bench_$name.log" 2>&1 || echo "  (failed, see /tmp/gl/bench_$name.log)"
  tail -n 1 "/tmp/gl/bench_$name.log"
done

# PROBE_ENVS="A=1;A=0": GPU time per decode-graph replay (gpu_step_probe.py --quick) under each env.
IFS=';' read -r -a PROBES <<< "${PROBE_ENVS:-}"
for pe in "${PROBES[@]}"; do
  [ $(( DEADLINE - $(el) )) -lt 50 ] && { stamp "no time left for probe [$pe]"; continue; }
  stamp "graph replay probe, env [$pe]"
  # shellcheck disable=SC2086
  env $pe timeout 90 python scripts/gpu_step_probe.py "$OUT" --quick > /tmp/gl/probe.log 2>&1
  grep -E "^   (overlap|bs=)" /tmp/gl/probe.log
done

if [ $PROFILE = 1 ] && [ $(( DEADLINE - $(el) )) -ge 60 ]; then
  stamp "kernel mix of the 256-request run (decode steps 150-159)"
  timeout $(( DEADLINE - $(el) - 10 )) python scripts/gpu_host_share.py ${PROFILE_FLAGS:---profile-at 150} > "$OUT/host_share.log" 2>&1
  grep -vE "^\s*$|UserWarning|_warn_once" "$OUT/host_share.log" | tail -n 42 | cut -c1-200
fi

stamp "summary"
python - "$OUT" <<'PY'
import glob, json, os, sys
print("| run | engine tok/s | batch-1 tok/s | engine s | transformers tok/s | ratio |")
print("|---|---|---|---|---|---|")
for f in sorted(glob.glob(os.path.join(sys.argv[1], "bench_*.json")), key=os.path.getmtime):
    r = json.load(open(f))
    print(f"| {os.path.basename(f)[6:-5]} | {r['engine_tok_s']} | {r.get('batch1_tok_s')} | {r.get('engine_s')} | {r.get('hf_tok_s', '-')} | {r.get('speedup', '-')} |")
PY
