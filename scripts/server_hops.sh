#!/usr/bin/env bash
# Where one request's first token goes inside the server, hop by hop: starts the server with
# scripts/hop_probe on its PYTHONPATH (every process writes down each message it sends and
# receives), warms it with 32 requests, then sends 16 chat requests one at a time (the serving
# benchmark's ~600-token prompts, 16 output tokens), and prints the client's TTFT, the server's own
# (/metrics) and the median of each hop (scripts/server_hops.py).
# The model: the graders' tiny random-weight model; with $MINISGL_EDU_TOKENIZER_DIR set (the GPU
# machine), random Qwen3-0.6B-shaped weights with those tokenizer files, as gpu_serving.sh serves.
#   bash scripts/server_hops.sh [SERVER ARGS...]        (bash scripts/gpu.sh hops on the GPU)
set -eu
cd "$(dirname "$0")/.."
py=${PY:-$( [ -x .venv/bin/python ] && echo .venv/bin/python || echo python)}
port=${PORT:-1951}
work=$(mktemp -d)
if [ -n "${MINISGL_EDU_TOKENIZER_DIR:-}" ]; then
  tok=$MINISGL_EDU_TOKENIZER_DIR
  model=$($py -c "from minisgl_edu.bench.offline import random_qwen3_dir; print(random_qwen3_dir('$tok'))" 2>/dev/null | tail -1)
  cp "$tok"/tokenizer.json "$tok"/tokenizer_config.json "$tok"/chat_template.jinja "$model"/
else
  model=$work/model
  $py -c "import shutil, sys; from minisgl_edu.grading.harness import tiny_model; shutil.copytree(tiny_model(), sys.argv[1])" "$model"
fi
HOP_PROBE_DIR=$work/logs PYTHONSAFEPATH=1 PYTHONPATH=$PWD/scripts/hop_probe:$PWD${PYTHONPATH:+:$PYTHONPATH} \
  $py -m minisgl_edu.serve --model "$model" --port $port "$@" > "$work/server.log" 2>&1 &
pid=$!
trap 'kill $pid 2>/dev/null; wait $pid 2>/dev/null; rm -rf "$work"' EXIT
until curl -sf localhost:$port/v1/models > /dev/null; do kill -0 $pid || { tail -20 "$work/server.log"; exit 1; }; sleep 1; done
bench() {
  $py -m minisgl_edu.bench.serving --base-url http://127.0.0.1:$port --endpoint chat --input-len 512 --ignore-eos \
    --no-progress "$@"
}
bench --output-len 16 --num-prompts 32 --concurrency 32 > /dev/null
sleep 0.5
for f in "$work"/logs/*; do : > "$f"; done  # only the measured requests from here on
$py scripts/server_ttft.py http://127.0.0.1:$port > "$work/ttft0"
bench --output-len 16 --num-prompts 16 --concurrency 1 --json "$work/run.json" > /dev/null
$py scripts/server_ttft.py http://127.0.0.1:$port > "$work/ttft1"
$py -c "import json, sys; s = json.load(open(sys.argv[1]))['summary']; print(f\"client TTFT p50 {s['ttft_ms']['p50']:.2f} ms, mean {s['ttft_ms']['mean']:.2f} ms\")" "$work/run.json"
$py scripts/server_ttft.py --diff "$work/ttft0" "$work/ttft1"
$py scripts/server_hops.py "$work/logs"
