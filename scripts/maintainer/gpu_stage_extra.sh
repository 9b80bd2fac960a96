#!/usr/bin/env bash
# Wheels the lent GPU machine lacks, for its Python (3.12), into .gpu/extra: XGrammar for the
# request-field tests (JSON schemas), and the HTTP server's (FastAPI, uvicorn, pyzmq, msgpack, ...)
# for scripts/maintainer/gpu_serving.sh; with what they need beside torch, transformers and httpx.
# On the GPU machine, before the tests:
#   [ -d /tmp/xg-site/xgrammar ] || python3 -m pip install -q --no-index --no-deps --target /tmp/xg-site .gpu/extra/*.whl
#   export PYTHONPATH=$PYTHONPATH:/tmp/xg-site
set -eu
cd "$(dirname "$0")/../.."
py=${PY:-.venv/bin/python}
version() { "$py" -m pip show "$1" | awk '/^Version/{print $2}'; }
mkdir -p .gpu/extra
for pkg in "xgrammar==$(version xgrammar)" "apache-tvm-ffi==$(version apache-tvm-ffi)" "pydantic==$(version pydantic)" \
  "pydantic-core==$(version pydantic-core)" annotated-types typing-inspection "fastapi==$(version fastapi)" \
  "starlette==$(version starlette)" "uvicorn==$(version uvicorn)" "pyzmq==$(version pyzmq)" "msgpack==$(version msgpack)" \
  setproctitle uvloop httptools opentelemetry-api annotated-doc anyio h11 click idna; do
  "$py" -m pip download -q --no-deps --only-binary=:all: --python-version 3.12 \
    --platform manylinux2014_x86_64 --platform manylinux_2_17_x86_64 --platform manylinux_2_28_x86_64 \
    --platform manylinux_2_5_x86_64 --platform manylinux1_x86_64 \
    "$pkg" -d .gpu/extra
done
ls .gpu/extra
