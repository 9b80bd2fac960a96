#!/usr/bin/env bash
# The serving benchmark for several server variants in one call on one GPU machine, alternated
# ROUNDS times, with where the burst's first tokens waited (bench/stages.py) for the variants that
# keep stage stamps; then, with PHASES=1, the offline run's phases against the floor
# (bench/offline_phases.py). Needs .gpu/ staged (FlashInfer: ../shared/gpu/stage.sh; the server's
# wheels: gpu_stage_extra.sh; the bundled model's tokenizer files in .gpu/tok). A variant is
# 'name|ENV=value ...|server args'; TREE=dir in ENV serves another copy of the package
# (gpu_stage_base.sh). RUNS as in gpu_serving.sh (default: all four workloads). Everything lands in
# $OUT/all.tgz; a table is printed last.
#   source .gpu/env.sh && OUT=/tmp/out ROUNDS=2 bash scripts/maintainer/gpu_burst.sh 'new||' 'base|TREE=.gpu/base|'
set -u
OUT=${OUT:-/tmp/gpu_burst}; mkdir -p "$OUT"
runs=/tmp/gpu_burst_runs; rm -rf "$runs"; mkdir -p "$runs"  # outside $OUT: only the tarball comes back
DEADLINE=${DEADLINE:-540}  # seconds from the start; a run that would begin later is skipped
t0=$(date +%s); el() { echo $(( $(date +%s) - t0 )); }
[ -d /tmp/xg-site/uvicorn ] || python3 -m pip install -q --no-index --no-deps --target /tmp/xg-site .gpu/extra/*.whl
export PYTHONPATH=$PWD:${PYTHONPATH:-}:/tmp/xg-site MINISGL_EDU_TOKENIZER_DIR=$PWD/.gpu/tok
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader | tee "$runs/gpu.txt"
echo "[$(el)s] JIT warm-up (parallel)"
for k in prefill decode norm rope act; do python scripts/maintainer/gpu_warmup.py $k > "$runs/warm_$k.log" 2>&1 & done
python -c "from minisgl_edu.bench.offline import random_qwen3_dir as r; r(); r('$MINISGL_EDU_TOKENIZER_DIR')" &
wait
echo "[$(el)s] warm"
for r in $(seq 1 "${ROUNDS:-1}"); do
  for v in "$@"; do
    IFS='|' read -r name envs args <<< "$v"
    [ "$(el)" -lt "$DEADLINE" ] || { echo "[$(el)s] skipped $name round $r (deadline)"; continue; }
    echo "[$(el)s] $name round $r"
    dir="$runs/${name}_$r"
    # shellcheck disable=SC2086
    env $envs OUT="$dir" RUNS="${RUNS:-one_stream streams_64 poisson_16 burst_256}" \
      timeout 300 bash scripts/maintainer/gpu_serving.sh $args > "$dir.log" 2>&1 || { echo "  failed:"; tail -5 "$dir.log"; }
    grep -E "^(burst_256|streams_64|one_stream|poisson_16) |^largest" "$dir.log" | sed 's/^/  /'
  done
done
if [ "${PHASES:-0}" = 1 ] && [ "$(el)" -lt "$DEADLINE" ]; then
  echo "[$(el)s] offline phases"
  timeout 200 python -m minisgl_edu.bench.offline_phases --json "$runs/phases.json" > "$runs/phases.txt" 2>&1
  cat "$runs/phases.txt" | tail -14
fi
tar czf "$OUT/all.tgz" -C /tmp gpu_burst_runs
python - "$runs" "${ROUNDS:-1}" "$@" <<'PY'
import json, os, sys
root, rounds, variants = sys.argv[1], int(sys.argv[2]), [v.split("|")[0] for v in sys.argv[3:]]
print(f"\n{'variant':<14} {'run':<11} {'tok/s':>8} {'TTFT p50':>9} {'TTFT p99':>9} {'ITL p50':>8} {'ITL p99':>8}  (ms)")
for run in ("one_stream", "streams_64", "poisson_16", "burst_256"):
    for r in range(1, rounds + 1):
        for name in variants:
            f = f"{root}/{name}_{r}/{run}.json"
            if not os.path.exists(f):
                continue
            s = json.load(open(f))["summary"]
            p = lambda k, q: s[k][q] if s.get(k) else float("nan")
            print(f"{name + '_' + str(r):<14} {run:<11} {s['output_throughput']:>8,.0f} {p('ttft_ms','p50'):>9.1f} "
                  f"{p('ttft_ms','p99'):>9.1f} {p('itl_ms','p50'):>8.2f} {p('itl_ms','p99'):>8.2f}")
PY
