#!/bin/bash
# matmul_sgemm's driver statistics (registers, spills...) per register block and fused activation,
# through bench/probes/pipeline_stats.c (VK_KHR_pipeline_executable_properties), on a lent GPU:
#   cc bench/probes/pipeline_stats.c -o DIR/pipeline_stats -ldl
#   glslc --target-env=vulkan1.1 -O -I shaders -o DIR/sgemm.spv build/shaders/variants/matmul_sgemm.comp
#   bench/tuning/gpu_sgemm_stats.sh DIR
# Spec constants as src/ops/matmul_record.c passes them: 0 local size, 3 A_K_CONTIG, 5 HAS_C, 6 BN,
# 8 ACT (1 a clamp, 7 erf GELU), 9 BM, 10 BK, 11 VEC, 12 TM, 13 TN, 14 EXACT: a Linear's product
# (A row-major, B [K, N], a bias) with whole blocks.
DIR=${1:-gpubuild}
for cfg in "128x128 8x8 relu:256 0 0 1 0 1 128 0 1 128 8 7 8 8 1" "128x128 8x8 gelu:256 0 0 1 0 1 128 0 7 128 8 7 8 8 1" \
           "64x128 4x8 relu:256 0 0 1 0 1 128 0 1 64 8 7 4 8 1" "64x128 4x8 gelu:256 0 0 1 0 1 128 0 7 64 8 7 4 8 1" \
           "64x128 8x8 relu:128 0 0 1 0 1 128 0 1 64 8 7 8 8 1" "64x128 8x8 gelu:128 0 0 1 0 1 128 0 7 64 8 7 8 8 1"; do
    echo "== ${cfg%%:*}"
    "$DIR/pipeline_stats" "$DIR/sgemm.spv" --bindings 4 ${cfg#*:} 2>&1 | grep -vE "^device|^$" | head -12
done
