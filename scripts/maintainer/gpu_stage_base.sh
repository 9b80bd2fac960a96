#!/usr/bin/env bash
# Copy the package as it was at COMMIT into .gpu/base (ignored by git, carried to the GPU machine
# with .gpu), so that one GPU call can benchmark it beside the working tree:
#   bash scripts/maintainer/gpu_stage_base.sh COMMIT && ... bash scripts/maintainer/gpu_check.sh --base .gpu/base
set -eu
commit=${1:?usage: gpu_stage_base.sh COMMIT}
rm -rf .gpu/base && mkdir -p .gpu/base
git archive "$commit" minisgl_edu | tar -x -C .gpu/base
echo "$commit" > .gpu/base/COMMIT
echo ".gpu/base: minisgl_edu at $(git rev-parse --short "$commit")"
