#!/usr/bin/env bash
# The standard GPU check, in one call on the lent H200: the GPU tests, our model and engine against
# transformers, the headline benchmark (256 requests and batch-1 decode), then each optimisation
# switched off in turn (what docs/benchmarks.md's ablation tables report). scripts/maintainer/gpu_ab.sh does
# the work and prints a table last.
#   source .gpu/env.sh && OUT=/tmp/out bash scripts/maintainer/gpu_check.sh [--with-transformers] [--skip-tests] \
#       [--skip-ablations] [--base DIR]
# --base DIR: also benchmark another copy of the code (made by `bash scripts/maintainer/gpu_stage_base.sh
# COMMIT`, which writes .gpu/base), right after this tree's headline run, for an A/B in one call.
opts=(--tests --checks); full='full||'; ablations=1; base=""
while [ $# -gt 0 ]; do
  case $1 in
    --with-transformers) full='full|HF=1|';; --skip-tests) opts=();; --skip-ablations) ablations=0;;
    --base) base=$2; shift;;
  esac
  shift
done
variants=("$full")
[ -n "$base" ] && variants+=("base|TREE=$base|")
if [ $ablations = 1 ]; then
  variants+=('no_graph||--no-cuda-graph --batch1-tokens 256'
             'no_overlap||--no-overlap'
             'no_triton||--triton-kernels 0 --attention-backend flashinfer'
             'no_fused||--no-fused-kernels'
             'no_tc_decode||--no-decode-tensor-cores'
             'prefill_2048||--max-prefill-tokens 2048'
             'torch_attn|TIMEOUT=240|--attention-backend torch --batch1-tokens 256')
fi
exec bash "$(dirname "$0")/gpu_ab.sh" "${opts[@]}" "${variants[@]}"
