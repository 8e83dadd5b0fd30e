/* The tensor-core MatMul kernels (shaders/matmul_coopmat_f16.comp and its vector-load sibling
 * matmul_coopmat_f16_aligned, shaders/matmul_coopmat_aligned.glsl): when src/ops/matmul_record.c
 * may run them instead of matmul_tiled, and with which tiles. */
#ifndef VKI_MATMUL_COOPMAT_H
#define VKI_MATMUL_COOPMAT_H

#include "op.h"

/* The chosen kernel: its name, the block of Y a workgroup computes, and the specialization
 * constants it takes beyond matmul_tiled's (local size, ids 6 and 9..14). */
typedef struct mm_coopmat_kernel {
    const char *shader;
    uint32_t tile_m, tile_n, local;
    uint32_t n_spec;          /* 10 (matmul_coopmat_f16), 15 (matmul_coopmat2_f16/_bf16 and the aligned kernel),
                                 22 (matmul_coopmat2_dims_*: src/ops/matmul_record.c sets 15..21 to M, N,
                                 K and the operand strides) */
    uint32_t spec_tail[6];    /* constant ids 9..14 */
} mm_coopmat_kernel;

/* Whether the product [batches x] M x K by K x N, over values[0..3] = A, B, C (A again when
 * there is no C) and Y, runs on cooperative matrices: the device has them (vk_caps), A, B and
 * C are held as fp16 and Y as fp16 or fp32 words, and the product is big enough for the 64
 * tiles to pay. rows_of_8: every operand is read along a contiguous axis whose extent, like
 * every other stride and batch offset of A, B and Y, is a multiple of 8 halves (then the
 * vector-load kernel runs). aligned: which operands start every row and batch at a multiple
 * of 8 halves (bit 0 A, 1 B, 2 Y; the workgroup-scope kernel's load hints). Sets *k and stores[0..3], the storages the kernel reads and
 * writes. */
bool mm_coopmat_choose(op_ctx *c, const int values[4], int64_t M, int64_t N, int64_t K, int64_t batches,
                       bool rows_of_8, uint32_t aligned, mm_coopmat_kernel *k, gpu_storage stores[4]);

#endif
