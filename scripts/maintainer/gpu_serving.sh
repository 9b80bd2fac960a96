#!/usr/bin/env bash
# The serving benchmark on a GPU against our server with its defaults (what a presenter gets from
# `python -m minisgl_edu.serve`): random bf16 weights of the Qwen3-0.6B shape (the offline
# benchmark's preset) with the bundled model's tokenizer files ($MINISGL_EDU_TOKENIZER_DIR) and its
# vocabulary (so every sampled token streams as text, and TTFT is the first token's), the
# chat endpoint, streaming, ~512-token prompts, 256 output tokens, ignore_eos; one stream, 64
# concurrent streams, a burst of 256 (those two from $CLIENTS client processes, default 4). Needs
# the server's wheels (scripts/maintainer/gpu_stage_extra.sh). Prints a table last; each run's
# JSON goes to $OUT when set. TREE=dir serves another copy of the
# package (`gpu_stage_base.sh COMMIT` makes .gpu/base) on the same model, for an A/B in one call;
# RUNS picks some of the runs (default "one_stream streams_64 burst_256"; also poisson_16: a Poisson
# stream of 16 requests/s, 256 requests). After the burst, where its first tokens waited
# (bench/stages.py), where the server keeps stage stamps; the same after the Poisson stream.
#   [TREE=.gpu/base] [RUNS=streams_64] bash scripts/maintainer/gpu.sh serving [SERVER ARGS...]
set -eu
tok=${MINISGL_EDU_TOKENIZER_DIR:?set MINISGL_EDU_TOKENIZER_DIR to the default model\'s tokenizer files}
out=${OUT:-/tmp/gpu_serving}
mkdir -p "$out"
model=$(python -c "from minisgl_edu.bench.offline import random_qwen3_dir; print(random_qwen3_dir('$tok'))")
cp "$tok"/tokenizer.json "$tok"/tokenizer_config.json "$tok"/chat_template.jinja "$model"/
start=$(date +%s)
# PYTHONSAFEPATH: `python -m` would put the current directory (this tree) before $TREE.
PYTHONSAFEPATH=1 PYTHONPATH=${TREE:+$TREE:}$PWD${PYTHONPATH:+:$PYTHONPATH} python -m minisgl_edu.serve --model "$model" "$@" > "$out/server.log" 2>&1 &
pid=$!
trap 'kill $pid 2>/dev/null; wait $pid 2>/dev/null || true' EXIT  # and wait: a server still stopping would share the GPU and the cores with the next run
until python -c "import httpx; httpx.get('http://127.0.0.1:1919/v1/models').raise_for_status()" 2>/dev/null; do
  kill -0 $pid 2>/dev/null || { tail -40 "$out/server.log"; exit 1; }
  sleep 2
done
echo "server ready after $(( $(date +%s) - start )) s:"
grep -i -E "ready|running requests" "$out/server.log" | tail -3
bench() {
  python -m minisgl_edu.bench.serving --endpoint chat --input-len 512 --output-len 256 --ignore-eos \
    --no-progress --json "$out/$1.json" "${@:2}" > "$out/$1.txt" 2>&1 || { tail -20 "$out/$1.txt"; exit 1; }
}
runs=${RUNS:-one_stream streams_64 burst_256}
bench warmup --num-prompts 32 --concurrency 32
[[ " $runs " != *" one_stream "* ]] || bench one_stream --num-prompts 16 --concurrency 1
# Several client processes where many streams run: one parses every chunk in Python and would
# set the pace itself (bench/serving_procs.py; the table's Client CPU row shows how busy each was).
if [[ " $runs " == *" poisson_16 "* ]]; then
  bench poisson_16 --num-prompts 256 --request-rate 16 --seed 2 --client-processes ${CLIENTS:-4}
  python -m minisgl_edu.bench.stages --last 256 --json "$out/poisson_16_stages.json" > "$out/poisson_16_stages.txt" 2>&1 \
    && cat "$out/poisson_16_stages.txt" || echo "(no stage stamps from this server)"
fi
[[ " $runs " != *" streams_64 "* ]] || bench streams_64 --num-prompts 256 --concurrency 64 --client-processes ${CLIENTS:-4}
if [[ " $runs " == *" burst_256 "* ]]; then
  # Seed 1: prompts of their own, so that none is in the prefix cache from the runs before (those
  # share only the chat template and the first line): the burst's whole prefill is computed.
  bench burst_256 --num-prompts 256 --concurrency 256 --seed 1 --client-processes ${CLIENTS:-4}
  # Where the burst's first tokens waited, from the server's stage stamps (a tree without them: skipped).
  python -m minisgl_edu.bench.stages --last 256 --json "$out/burst_256_stages.json" > "$out/burst_256_stages.txt" 2>&1 \
    && cat "$out/burst_256_stages.txt" || echo "(no stage stamps from this server)"
fi
python - "$out" $runs <<'PY'
import json, sys
print(f"\n{'run':<11} {'ok':>4} {'out tok/s':>10} {'TTFT p50':>9} {'TTFT p99':>9} {'TPOT p50':>9} {'ITL p50':>8} {'ITL p99':>8}  (ms)")
for name in sys.argv[2:]:
    s = json.load(open(f"{sys.argv[1]}/{name}.json"))["summary"]
    p = lambda k, q: s[k][q] if s.get(k) else float("nan")
    print(f"{name:<11} {s['succeeded']:>4} {s['output_throughput']:>10,.0f} {p('ttft_ms','p50'):>9.1f} "
          f"{p('ttft_ms','p99'):>9.1f} {p('tpot_ms','p50'):>9.2f} {p('itl_ms','p50'):>8.2f} {p('itl_ms','p99'):>8.2f}")
PY
