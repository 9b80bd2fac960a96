#!/usr/bin/env bash
# A burst on the course CPU: the server with its defaults on the bundled model, 32 chat requests
# sent at once (~64-token questions, each answered with 32 tokens, ignore_eos; every round's
# prompts its own seed, so none is in the prefix cache but the chat template's start), after a
# warm-up of 4; then where the
# first tokens waited (GET /debug/stages, bench/stages.py) where the server keeps stamps. ROUNDS
# bursts in a row (default 2, the first one's figures are the cold ones). TREE=dir serves another
# copy of the package (`git archive COMMIT minisgl_edu | tar -x -C dir`), for a before/after on
# the same machine minutes apart; PORT (default 19790). N, INPUT_LEN, OUTPUT_LEN, CLIENTS change the
# burst (default 32, 64, 32, 1): with the tests' 2-layer model (`--model DIR`, a step in
# milliseconds) a burst of a few hundred long prompts shows the server's own stages, as a GPU
# does. Also printed: each process's CPU seconds before and after every burst (what one request
# costs the API server, the tokenizer, the scheduler, the detokenizer). Each run's JSON goes to
# $OUT when set.
#   [TREE=/tmp/base] [ROUNDS=3] bash scripts/maintainer/cpu_burst.sh [SERVER ARGS...]
set -eu
out=${OUT:-/tmp/cpu_burst}
port=${PORT:-19790}
url=http://127.0.0.1:$port
py=${PYTHON:-python}
n=${N:-32}
mkdir -p "$out"
# PYTHONSAFEPATH: `python -m` would put the current directory (this tree) before $TREE.
PYTHONSAFEPATH=1 PYTHONPATH=${TREE:+$TREE:}$PWD${PYTHONPATH:+:$PYTHONPATH} $py -m minisgl_edu.serve --port "$port" "$@" \
  > "$out/server.log" 2>&1 &
pid=$!
trap 'kill $pid 2>/dev/null; wait $pid 2>/dev/null || true' EXIT
until $py -c "import httpx; httpx.get('$url/v1/models').raise_for_status()" 2>/dev/null; do
  kill -0 $pid 2>/dev/null || { tail -40 "$out/server.log"; exit 1; }
  sleep 1
done
echo "load before: $(cut -d' ' -f1-3 /proc/loadavg)"
bench() {
  $py -m minisgl_edu.bench.serving --base-url "$url" --endpoint chat --input-len ${INPUT_LEN:-64} \
    --output-len ${OUTPUT_LEN:-32} --ignore-eos \
    --no-progress --json "$out/$1.json" "${@:2}" > "$out/$1.txt" 2>&1 || { tail -20 "$out/$1.txt"; exit 1; }
}
# CPU seconds of the API server (this pid) and of each worker process, by name.
cpu_of() {
  $py - "$pid" <<'PY'
import os, sys
pid = sys.argv[1]
tick = os.sysconf("SC_CLK_TCK")
def cpu(p):
    f = open(f"/proc/{p}/stat").read().rsplit(")", 1)[1].split()
    return (int(f[11]) + int(f[12])) / tick
out = {"api": cpu(pid)}
for p in os.listdir("/proc"):
    if p.isdigit():
        try:
            f = open(f"/proc/{p}/stat").read()
            if f.rsplit(")", 1)[1].split()[1] == pid:
                name = open(f"/proc/{p}/cmdline", "rb").read().split(b"\0")[0].decode()
                if name.startswith("minisgl"):
                    out[name] = cpu(p)
        except OSError:
            pass
print(" ".join(f"{k}={v:.2f}" for k, v in sorted(out.items())))
PY
}
bench warmup --num-prompts 4 --concurrency 4 --seed 100
names=""
for r in $(seq 1 "${ROUNDS:-2}"); do
  before=$(cpu_of)
  bench "burst_${n}_$r" --num-prompts "$n" --concurrency "$n" --seed "$r" --client-processes "${CLIENTS:-1}"
  echo "round $r, CPU seconds of each process before / after: $before / $(cpu_of)" >> "$out/cpu.txt"
  names="$names burst_${n}_$r"
  $py -m minisgl_edu.bench.stages --base-url "$url" --last "$n" --json "$out/stages_$r.json" \
    > "$out/stages_$r.txt" 2>&1 || echo "(no stage stamps from this server)" > "$out/stages_$r.txt"
done
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)"
cat "$out/cpu.txt"
cat "$out/stages_${ROUNDS:-2}.txt"
$py - "$out" $names <<'PY'
import json, sys
print(f"\n{'run':<11} {'ok':>4} {'out tok/s':>10} {'TTFT p50':>9} {'TTFT p99':>9} {'ITL p50':>8} {'ITL p99':>8}  (ms)")
for name in sys.argv[2:]:
    s = json.load(open(f"{sys.argv[1]}/{name}.json"))["summary"]
    p = lambda k, q: s[k][q] if s.get(k) else float("nan")
    print(f"{name:<11} {s['succeeded']:>4} {s['output_throughput']:>10,.1f} {p('ttft_ms','p50'):>9.0f} "
          f"{p('ttft_ms','p99'):>9.0f} {p('itl_ms','p50'):>8.1f} {p('itl_ms','p99'):>8.1f}")
PY
