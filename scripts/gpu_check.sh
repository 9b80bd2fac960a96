#!/usr/bin/env bash
# The standard GPU check, in one call on the lent H200: the GPU tests, our model and engine against
# transformers, the headline benchmark, then each optimisation switched off in turn (what
# docs/benchmarks.md's ablation tables report). scripts/gpu_ab.sh does the work.
#   source .gpu/env.sh && OUT=/tmp/out bash scripts/gpu_check.sh [--with-transformers] [--skip-tests] [--skip-ablations]
opts=(--tests --checks); full='full||'; ablations=1
for a in "$@"; do
  case $a in --with-transformers) full='full|HF=1|';; --skip-tests) opts=();; --skip-ablations) ablations=0;; esac
done
variants=("$full")
if [ $ablations = 1 ]; then
  variants+=('no_graph||--no-cuda-graph --batch1-tokens 256'
             'no_overlap||--no-overlap'
             'no_triton|MINISGL_EDU_TRITON=0|'
             'no_tc_decode|MINISGL_EDU_FI_DECODE_TC=0|'
             'prefill_2048||--max-prefill-tokens 2048'
             'torch_attn|TIMEOUT=240|--attention-backend torch --batch1-tokens 256')
fi
exec bash "$(dirname "$0")/gpu_ab.sh" "${opts[@]}" "${variants[@]}"
