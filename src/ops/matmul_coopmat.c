/* Choosing the tensor-core MatMul kernel (shaders/matmul_coopmat_f16.comp). It takes the same
 * push constants, grid and specialization constants as matmul_tiled (plus OUT_WORDS), so
 * src/ops/matmul.c records it in matmul_tiled's place; this file decides when. */
#include "matmul_coopmat.h"

#include <stdlib.h>
#include <string.h>

enum {
    COOPMAT_MIN_DIM = 64,    /* smaller products leave most of a 64 tile idle: matmul_tiled */
    COOPMAT_BUSY_GROUPS = 256 /* 128 tiles when they alone keep an H200's 132 SMs busy */
};

bool mm_coopmat_choose(op_ctx *c, const int values[4], int64_t M, int64_t N, int64_t K, int64_t batches,
                       uint32_t *tile, uint32_t *out_words, gpu_storage stores[4])
{
    if (!c->vk->caps.cooperative_matrix) return false;
    /* VKINFER_MATMUL_KERNELS=tiled keeps the scalar kernels (comparisons on one device) */
    const char *force = getenv("VKINFER_MATMUL_KERNELS");
    if (force && !strcmp(force, "tiled")) return false;
    if (M < COOPMAT_MIN_DIM || N < COOPMAT_MIN_DIM || K < COOPMAT_MIN_DIM) return false;
    if (op_half_storage(c, values, 3) != GPU_F16) return false;
    gpu_storage ys = op_storage(c, values[3]);
    /* fp32 words: a float32 output of the fp16 mode (graph outputs stay words) */
    if (ys != GPU_F16 && !(ys == GPU_W32 && op_value(c, values[3])->dtype == VKI_DTYPE_FLOAT)) return false;
    int64_t groups128 = (M + 127) / 128 * ((N + 127) / 128) * batches;
    *tile = groups128 >= COOPMAT_BUSY_GROUPS ? 128 : 64;
    *out_words = ys == GPU_W32;
    stores[0] = stores[1] = stores[2] = GPU_F16;
    stores[3] = ys;
    return true;
}
