#!/usr/bin/env bash
# CPU time per streamed token of each server process and of the benchmark client, on this machine:
# the server on the graders' tiny random-weight model (2 layers: the engine's own cost is small,
# the processes around it are what is measured), driven by the serving benchmark. TREE=dir serves
# another copy of the package (scripts/gpu_stage_base.sh COMMIT makes .gpu/base), for an A/B.
#   bash scripts/serving_cpu_share.sh [CONCURRENCY [REQUESTS [OUTPUT_LEN]]]    # default 64 128 256
set -eu
cd "$(dirname "$0")/.."
py=${PY:-.venv/bin/python}
conc=${1:-64}; num=${2:-128}; outlen=${3:-256}; port=${PORT:-1931}
model=$(mktemp -d)
$py -c "import shutil, sys; from minisgl_edu.grading.harness import tiny_model; shutil.copytree(tiny_model(), sys.argv[1], dirs_exist_ok=True)" "$model"
# PYTHONSAFEPATH: `python -m` would put the current directory (this tree) before $TREE.
PYTHONSAFEPATH=1 PYTHONPATH=${TREE:+$TREE:}$PWD${PYTHONPATH:+:$PYTHONPATH} $py -m minisgl_edu.serve --model "$model" --port $port \
  --max-running-requests $conc --num-pages $(( conc * 80 )) > "$model/server.log" 2>&1 &
pid=$!
trap 'kill $pid 2>/dev/null; wait $pid 2>/dev/null; rm -rf "$model"' EXIT
until curl -sf localhost:$port/v1/models > /dev/null; do kill -0 $pid || { tail "$model/server.log"; exit 1; }; sleep 1; done
bench() {
  $py -m minisgl_edu.bench.serving --base-url http://127.0.0.1:$port --endpoint chat --input-len 512 \
    --ignore-eos --no-progress "$@"
}
bench --output-len 16 --num-prompts 32 --concurrency 32 > /dev/null  # warm-up: prefix cache, first calls
$py scripts/proc_cpu.py $pid > "$model/cpu0"
bench --output-len $outlen --num-prompts $num --concurrency $conc --json "$model/run.json" > "$model/run.txt"
$py scripts/proc_cpu.py $pid > "$model/cpu1"
$py - "$model" $(( num * outlen )) <<'PY'
import json, sys
d = sys.argv[1]; tokens = int(sys.argv[2])
before, after = json.load(open(f"{d}/cpu0")), json.load(open(f"{d}/cpu1"))
run = json.load(open(f"{d}/run.json")); s = run["summary"]
print(f"{s['output_tokens']} output tokens in {s['duration_s']:.1f} s: {s['output_throughput']:.0f} tok/s, "
      f"TTFT p50 {s['ttft_ms']['p50']:.0f} ms, TPOT p50 {s['tpot_ms']['p50']:.1f} ms")
rows = [(k.split()[0], after[k] - before.get(k, 0.0)) for k in after] + [("client", run["client_cpu_s"])]
for name, cpu in rows:
    if cpu > 0.005:
        print(f"  {name:<24} {cpu:6.2f} s CPU  {cpu / tokens * 1e6:6.1f} us per token  {100 * cpu / s['duration_s']:5.1f}% of a core")
PY
