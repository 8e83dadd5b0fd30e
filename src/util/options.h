/* The library's options: one table (options.c) of every VKINFER_* setting, read from the
 * environment and from vki_context_create_with_options once, when a context is created, into
 * a vki_options that the context keeps (vk_context.opts) and ops read (c->vk->opts). */
#ifndef VKI_OPTIONS_H
#define VKI_OPTIONS_H

#include "vkinfer.h"

#include <stdbool.h>
#include <stdint.h>

/* A bool, int or enum option left unset where its default depends on the device: the code
 * that reads it decides (the table's doc says how). */
#define OPT_AUTO (-1)

/* An enum option's value is the index of its name in the option's names. */
enum { OPT_VALIDATION_OFF, OPT_VALIDATION_ON, OPT_VALIDATION_SYNC };
/* The *_KERNELS options share these names ("gpu|cpu|gemm|gemm_batch|tiled|sgemm|coopmat_general");
 * each takes those its family has. */
enum {
    OPT_KERNELS_GPU,
    OPT_KERNELS_CPU,
    OPT_KERNELS_GEMM,
    OPT_KERNELS_GEMM_BATCH,
    OPT_KERNELS_TILED,
    OPT_KERNELS_SGEMM,
    OPT_KERNELS_COOPMAT_GENERAL
};
enum { OPT_LIMITS_ANDROID_BASELINE_2022 };
enum { OPT_COOPMAT_NV, OPT_COOPMAT_KHR };
enum { OPT_CPU_DW_PLANES, OPT_CPU_DW_ROWS };
enum { OPT_WINOGRAD_F2, OPT_WINOGRAD_F4, OPT_WINOGRAD_F4T };
enum { OPT_ATTENTION_OFF, OPT_ATTENTION_ON, OPT_ATTENTION_TILE };
/* VKINFER_DISABLE_FEATURES: a bit per name */
enum {
    OPT_DISABLE_STORAGE16 = 1,
    OPT_DISABLE_STORAGE8 = 2,
    OPT_DISABLE_FP16 = 4,
    OPT_DISABLE_FLOAT64 = 8,
    OPT_DISABLE_COOPMAT = 16,
    OPT_DISABLE_COOPMAT2 = 32
};

/* VKINFER_COOPMAT2_EXP: a bit per candidate kernel */
enum { OPT_CM2_EXP_DIMS = 1 };

/* A string option: set (even to "") or not. */
typedef struct opt_text {
    bool set;
    char s[1024];
} opt_text;

/* "AxBxC": up to 5 positive numbers; n = 0 when unset. */
typedef struct opt_dims {
    int n;
    uint32_t v[5];
} opt_dims;

/* Every option, under the name of its variable (options.c documents each). bool and enum
 * fields are int: 0/1 or the enum's index, OPT_AUTO where unset without a fixed default. */
typedef struct vki_options {
    /* for users */
    opt_text device, cache_dir, vulkan_library;
    int validation;
    int64_t max_memory, spin_us;
    /* for tests: what another device would do, kernel families forced, faults */
    int limits, conv_kernels, matmul_kernels, elementwise_kernels, pool_kernels, norm_kernels;
    unsigned disable_features;
    int64_t max_binding_bytes, max_allocation, fault_device_lost;
    int no_fusion, conv_reference;
    /* tuning and A/B checks */
    int coopmat;
    int cpu_conv_transpose, cpu_mm_transpose, cpu_mm_pack_rows, cpu_mm_wide, cpu_mm_a_lanes, cpu_mm_kt, cpu_mm_y_t,
        cpu_mm_c_along, cpu_dw_x4, cpu_dw;
    opt_dims cpu_mm_block;
    int64_t cpu_dw_pxb, cpu_dw_rb, cpu_dw_rows;
    int conv_winograd, conv_winograd_tile;
    int mm_sgemm, sgemm_blocks, sgemm_exact;
    opt_dims sgemm_tile;
    int64_t sgemm_bk;
    int attention_rows;
    int64_t attention_tile_rows;
    int transposed_stores, splitk_chain, channel_ln, split_views, splitk_finish, mm_gemv_wide, splitk_ln;
    int64_t mm_split_below, mm_min_k_slice, mm_min_split_k, coopmat_min_flops, tiled_tile, mm_busy_groups, mm_gemv_rows,
        elementwise_groups;
    opt_dims coopmat_tile, coopmat2_tile;
    int64_t coopmat2_group_m, coopmat2_unroll;
    unsigned coopmat2_exp;
    /* from other programs' variables, read with the options: lavapipe runs its work on the
     * queue thread (LP_NUM_THREADS=0); the pipeline cache's folder where VKINFER_CACHE_DIR and
     * the program leave it ($XDG_CACHE_HOME/vkinfer, else ~/.cache/vkinfer; "" none) */
    bool lavapipe_inline;
    char home_cache_dir[1024];
} vki_options;

/* Every option at its default. */
void options_defaults(vki_options *o);
/* The environment's options over o (and lavapipe_inline, home_cache_dir), except those named
 * in except[0..n_except) (which the program sets). A value an option does not take fails with
 * VKI_ERROR_INVALID_ARGUMENT naming the (first such) variable; o then holds the valid ones. */
vki_status options_from_env(vki_options *o, const char *const *except, size_t n_except);
/* One option by name (a program's setting, over the environment's; NULL, or "" but for a string
 * option: its default); an unknown name or a value it does not take fails with
 * VKI_ERROR_INVALID_ARGUMENT naming it. */
vki_status options_set(vki_options *o, const char *name, const char *value);
/* The canonical name of an enum option's value (VKINFER_LIMITS's profile, for messages). */
const char *options_enum_name(const char *option, int value);

#endif
