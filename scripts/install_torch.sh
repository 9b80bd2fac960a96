#!/usr/bin/env bash
# Installs torch into the given venv before the package itself, choosing the build:
#   - an NVIDIA GPU is visible            -> the default (CUDA) build from PyPI
#   - no GPU, a local CPU wheel is known  -> that wheel (pip's find-links, as on the course machines)
#   - no GPU otherwise                    -> the CPU build from PyTorch's own index
# A plain `pip install torch` on a machine without a GPU would pull several GB of CUDA libraries.
set -euo pipefail
PIP="$1/bin/pip"
TORCH_VERSION="${TORCH_VERSION:-2.13.0}"
if "$1/bin/python" -c "import torch" 2>/dev/null; then
  echo "torch already installed: $("$1/bin/python" -c 'import torch; print(torch.__version__)')"
  exit 0
fi
if command -v nvidia-smi >/dev/null 2>&1 && nvidia-smi -L >/dev/null 2>&1; then
  echo "NVIDIA GPU found: installing the CUDA build of torch"
  "$PIP" install "torch>=2.4"
elif "$PIP" download -q --no-deps --no-index -d "$(mktemp -d)" "torch==${TORCH_VERSION}" >/dev/null 2>&1; then
  echo "no NVIDIA GPU: installing torch==${TORCH_VERSION} from the local CPU wheel"
  "$PIP" install "torch==${TORCH_VERSION}"
else
  echo "no NVIDIA GPU: installing the CPU build of torch from download.pytorch.org"
  "$PIP" install "torch==${TORCH_VERSION}" --index-url https://download.pytorch.org/whl/cpu \
    || "$PIP" install torch --index-url https://download.pytorch.org/whl/cpu
fi
