/* The tensor-core MatMul kernel (shaders/matmul_coopmat_f16.comp): when src/ops/matmul.c may
 * run it instead of matmul_tiled. */
#ifndef VKI_MATMUL_COOPMAT_H
#define VKI_MATMUL_COOPMAT_H

#include "op.h"

/* Whether the product [batches x] M x K by K x N, over values[0..3] = A, B, C (A again when
 * there is no C) and Y, runs on cooperative matrices: the device has them (vk_caps), A, B and
 * C are held as fp16 and Y as fp16 or fp32 words, and the product is big enough for the 64
 * tiles to pay. Then sets *tile (64 or 128), *out_words (the OUT_WORDS spec constant) and
 * stores[0..3], the storages the kernel reads and writes. */
bool mm_coopmat_choose(op_ctx *c, const int values[4], int64_t M, int64_t N, int64_t K, int64_t batches,
                       uint32_t *tile, uint32_t *out_words, gpu_storage stores[4]);

#endif
