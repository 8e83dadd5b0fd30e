/* The one table of the library's options (VKINFER_* variables): name, type, values, default,
 * category and doc; parsed from the environment and from programs' settings into a
 * vki_options. The only file of the library that reads the environment. docs/environment.md
 * is generated from this table (`vkinfer options --markdown`). */
#include "options.h"
#include "util.h"

#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

typedef enum opt_type { OPT_BOOL, OPT_INT, OPT_ENUM, OPT_STRING, OPT_LIST, OPT_DIMS } opt_type;
static const char *const type_names[] = {"bool", "int", "enum", "string", "list", "dims"};

/* One option. values: what it takes, as documented and as parsed: bool "0|1"; int "A|B|C", "LO-HI"
 * or ">=LO"; enum and list names joined by '|' (an enum's value is the index of its name in
 * `names` where given, else in values; a list's bit i is its i-th name, and a list value's names
 * are separated by ',' or '+'); dims "AxB[xCxD]" (the numbers, those in brackets optional
 * together). init: a bool, int or enum field's value when
 * unset (OPT_AUTO: chosen per device, as the doc says). def: the default as documented ("": chosen
 * per device, or a string left unset). check: what else a dims value must satisfy (NULL: fine). */
typedef struct opt_def {
    const char *name;
    opt_type type;
    const char *category;
    size_t offset, size; /* the field's, in vki_options */
    const char *values, *names;
    int64_t init;
    const char *def;
    const char *doc;
    const char *(*check)(const opt_dims *d);
} opt_def;

#define F(field)     offsetof(vki_options, field), sizeof(((vki_options *)0)->field)
#define KERNEL_NAMES "gpu|cpu|gemm|gemm_batch|tiled|sgemm|coopmat_general"

static const char *sgemm_tile_check(const opt_dims *d)
{
    for (int i = 0; i < 2; i++)
        if (d->v[i] != 64 && d->v[i] != 128) return "BM and BN are 64 or 128";
    if (d->n == 4) {
        for (int i = 2; i < 4; i++)
            if (d->v[i] != 4 && d->v[i] != 8) return "TM and TN are 4 or 8";
        if ((d->v[0] / d->v[2]) * (d->v[1] / d->v[3]) > 256) return "(BM / TM) x (BN / TN) is at most 256 invocations";
    }
    return NULL;
}

static const char *cpu_mm_block_check(const opt_dims *d)
{
    if (d->v[0] > 64) return "RM is 1 to 64";
    if (d->v[1] != 4 && d->v[1] != 8 && d->v[1] != 16 && d->v[1] != 32) return "RN is 4, 8, 16 or 32";
    return NULL;
}

static const opt_def options[] = {
    /* ---- for users ---- */
    {"VKINFER_DEVICE", OPT_STRING, "user", F(device), "index or name", NULL, 0, "",
     "the device: its index or a substring of its name, as `vkinfer devices` lists them. Default: the first discrete "
     "GPU, else integrated, virtual, then CPU (lavapipe). `vki_context_options.device` overrides it"},
    {"VKINFER_VALIDATION", OPT_ENUM, "user", F(validation), "0|1|sync", NULL, 0, "0",
     "1: the Khronos validation layer on; any message it reports becomes `VKI_ERROR_VALIDATION`. sync: the same "
     "plus the layer's synchronization validation: hazards between dispatches, copies and the host that no barrier "
     "orders become `VKI_ERROR_VALIDATION` too; slower (tests: the thread stress test and a model parity test run "
     "this way). `vki_context_options.validation` 0 or 1 overrides it (1 keeps sync)"},
    {"VKINFER_CACHE_DIR", OPT_STRING, "user", F(cache_dir), "folder", NULL, 0, "",
     "the pipeline cache's folder (default `$XDG_CACHE_HOME/vkinfer`, else `~/.cache/vkinfer`); empty: no disk "
     "cache. `vki_context_options.cache_dir` overrides it"},
    {"VKINFER_VULKAN_LIBRARY", OPT_STRING, "user", F(vulkan_library), "path", NULL, 0, "libvulkan.so.1",
     "the Vulkan loader to open instead of `libvulkan.so.1` (empty: that one)"},
    {"VKINFER_MAX_MEMORY", OPT_INT, "user", F(max_memory), ">=1", NULL, 0, "",
     "cap the device memory of the context, in bytes: its device-local buffers (weights, a plan's intermediates, "
     "device tensors; host-visible staging buffers are not counted). A buffer past the cap fails with "
     "`VKI_ERROR_OUT_OF_MEMORY` before anything is allocated, naming what did not fit; the context stays usable "
     "(tests of exhaustion; a budget on a shared GPU). Default: no cap"},
    {"VKINFER_SPIN_US", OPT_INT, "user", F(spin_us), "0-1000000", NULL, OPT_AUTO, "",
     "how long each run's wait polls the GPU's fence before it blocks, in microseconds. Default 20000 on a GPU "
     "(a blocking wait wakes tens to hundreds of microseconds after the GPU is done); on a CPU device 2000 where "
     "lavapipe runs without its worker threads (`LP_NUM_THREADS=0`, as `--cpu-threads 0` sets it), else 0 (its "
     "threads need the cores). Costs one busy host thread for up to N microseconds per run"},

    /* ---- for tests: what another device does, kernel families forced, faults ---- */
    {"VKINFER_LIMITS", OPT_ENUM, "test", F(limits), "android-baseline-2022", NULL, OPT_AUTO, "",
     "behave as a device with only the Vulkan Android Baseline 2022 profile: 128 MiB per storage-buffer binding, "
     "16 KiB shared memory, 128 invocations per workgroup (128,128,64), 4 storage buffers per stage, 4 descriptor "
     "sets, 128 push-constant bytes, 256-byte buffer offset alignment, no 16/8-bit storage, fp16, float64 "
     "arithmetic (`shaderFloat64`), subgroups or cooperative matrices. Limits are only ever lowered. A kernel past a "
     "limit is refused at plan time naming the node, the kernel and the limit (what a phone would refuse, found on "
     "a desktop). Default: the device's own limits"},
    {"VKINFER_DISABLE_FEATURES", OPT_LIST, "test", F(disable_features),
     "storage16|storage8|fp16|float64|coopmat|coopmat2", NULL, 0, "",
     "treat the device as lacking these features (comma-separated): 16-bit kernels fall back to the packed path "
     "(conversions), float64 is computed in fp32 (no `shaderFloat64`), no tensor cores (`coopmat`), or no "
     "VK_NV_cooperative_matrix2 alone (`coopmat2`: the subgroup-scope tensor-core kernels run instead) (tests, A/B "
     "checks)"},
    {"VKINFER_MAX_BINDING_BYTES", OPT_INT, "test", F(max_binding_bytes), ">=256", NULL, OPT_AUTO, "",
     "lower the per-binding limit to N bytes (a value at or above the device's own limit leaves it), so that tests "
     "exercise windowed dispatches on small tensors. Default: the device's limit"},
    {"VKINFER_MAX_ALLOCATION", OPT_INT, "test", F(max_allocation), ">=4096", NULL, 0, "",
     "lower the device's `maxMemoryAllocationSize` to N bytes for this context (a value at or above the device's own "
     "limit leaves it). Weights are packed into blocks under it, and any single buffer past it (one tensor, a plan's "
     "intermediates) fails with `VKI_ERROR_OUT_OF_MEMORY` naming the limit (tests of models larger than one "
     "allocation: `model/weight_blocks`). Default: the device's limit"},
    {"VKINFER_FAULT_DEVICE_LOST", OPT_INT, "test", F(fault_device_lost), ">=1", NULL, 0, "",
     "fault injection: the context's Nth queue submission (weight uploads, runs, device-tensor copies, counted from 1) "
     "reports `VK_ERROR_DEVICE_LOST` instead of running, so that the loss handling can be tested without a GPU hang: "
     "the call returns `VKI_ERROR_DEVICE_LOST` and the context is dead from then on (see "
     "[troubleshooting.md](troubleshooting.md)). Default: never"},
    {"VKINFER_NO_FUSION", OPT_BOOL, "test", F(no_fusion), NULL, NULL, 0, "0",
     "1: plan every node as itself: no epilogue claims (MatMul/Gemm + Add/Relu/Clip, Conv + Relu/Clip) and no "
     "patterns (`src/plan/fuse.c`) (tests, A/B checks of dispatch counts and times)"},
    {"VKINFER_CONV_REFERENCE", OPT_BOOL, "test", F(conv_reference), NULL, NULL, 0, "0",
     "1: every convolution on the reference kernel, without the fast paths (A/B checks)"},
    {"VKINFER_CONV_KERNELS", OPT_ENUM, "test", F(conv_kernels), "gpu|cpu|gemm|gemm_batch", KERNEL_NAMES, OPT_AUTO, "",
     "force the GPU convolution kernels, the CPU-device ones, or convolutions as matrix products (im2col + MatMul "
     "kernels, the default on GPUs); gemm_batch: small maps as one product over the batch on any device. Any value "
     "also keeps Winograd off unless `VKINFER_CONV_WINOGRAD=1`. Default: per device"},
    {"VKINFER_MATMUL_KERNELS", OPT_ENUM, "test", F(matmul_kernels), "gpu|cpu|tiled|sgemm|coopmat_general", KERNEL_NAMES,
     OPT_AUTO, "",
     "force the GPU or the CPU-device MatMul/Gemm kernels; tiled: the scalar GPU kernels even where cooperative "
     "matrices exist; sgemm: float32 products of 64 rows and columns or more on `matmul_sgemm` on any device (CI "
     "checks it on lavapipe); coopmat_general: the element-wise loading tensor-core kernel. Default: per device"},
    {"VKINFER_ELEMENTWISE_KERNELS", OPT_ENUM, "test", F(elementwise_kernels), "gpu|cpu", KERNEL_NAMES, OPT_AUTO, "",
     "force the GPU or the CPU-device kernel for float32 Add, Sub, Mul, Div and their two-step chains "
     "(`binary_chain_cpu`: 4 outputs of a row per invocation, where the pass's count and innermost dim are multiples "
     "of 4). Default: per device"},
    {"VKINFER_POOL_KERNELS", OPT_ENUM, "test", F(pool_kernels), "gpu|cpu", KERNEL_NAMES, OPT_AUTO, "",
     "force the GPU or the CPU-device pooling kernels (2-D MaxPool/AveragePool `pool2d_cpu`, global pooling an "
     "invocation per plane). Default: per device"},
    {"VKINFER_NORM_KERNELS", OPT_ENUM, "test", F(norm_kernels), "gpu|cpu", KERNEL_NAMES, OPT_AUTO, "",
     "force the GPU or the CPU-device row kernels of the normalizations (RMSNormalization too) and Softmax "
     "(`norm_rows_cpu`, `norm_rows_cpu_vec4`, `softmax_cpu`). Default: per device and row length"},

    /* ---- tuning and A/B checks: CPU devices (lavapipe) ---- */
    {"VKINFER_CPU_CONV_TRANSPOSE", OPT_BOOL, "tuning", F(cpu_conv_transpose), NULL, NULL, OPT_AUTO, "",
     "CPU devices: 0 never runs a convolution as the transposed product Y^T = colT x W^T, 1 wherever it applies "
     "(tests). Default: where the CPU MatMul's cost model finds it a tenth cheaper, and for maps of at most 16 "
     "pixels (docs/architecture.md)"},
    {"VKINFER_CPU_MM_TRANSPOSE", OPT_BOOL, "tuning", F(cpu_mm_transpose), NULL, NULL, 1, "1",
     "0: the CPU-device MatMul runs narrow products (at most 16 columns, 64+ rows) as they are instead of "
     "transposed (comparisons; docs/architecture.md)"},
    {"VKINFER_CPU_MM_Y_T", OPT_BOOL, "tuning", F(cpu_mm_y_t), NULL, NULL, 1, "1",
     "0: CPU devices' narrow products run transposed copy Y^T back into Y's layout instead of storing it there "
     "(`matmul_cpu`'s Y_T) (comparisons, tests)"},
    {"VKINFER_CPU_MM_PACK_ROWS", OPT_BOOL, "tuning", F(cpu_mm_pack_rows), NULL, NULL, 1, "1",
     "0: the CPU-device MatMul packs an A whose rows are not whole texels an element per invocation "
     "(`matmul_cpu_pack`) instead of a row per invocation (`matmul_cpu_pack_rows`) (comparisons)"},
    {"VKINFER_CPU_MM_WIDE", OPT_BOOL, "tuning", F(cpu_mm_wide), NULL, NULL, OPT_AUTO, "",
     "the CPU-device MatMul's register blocks for large products: 1 takes 32 x 32, 0 takes 16 x 16 (tests, "
     "comparisons). Default: 32 x 32 on llvmpipe from Mesa 25 on (whose texel fetch is an indirect call), 16 x 16 "
     "elsewhere"},
    {"VKINFER_CPU_MM_A_LANES", OPT_BOOL, "tuning", F(cpu_mm_a_lanes), NULL, NULL, 1, "1",
     "0: the CPU-device MatMul fetches A a row at a time (`matmul_cpu`), the same texel in every lane, instead of a "
     "texel per lane handed round by `subgroupShuffle` (`matmul_cpu_lanes`, taken where the workgroup is one "
     "subgroup with shuffles) (tests, comparisons)"},
    {"VKINFER_CPU_MM_KT", OPT_BOOL, "tuning", F(cpu_mm_kt), NULL, NULL, 1, "1",
     "0: the CPU-device MatMul packs a run-time B whose k is contiguous (attention's K^T, Gemm's transB of an "
     "input) with a `matmul_cpu_pack` dispatch first instead of reading it in place along k (`B_KT`) (comparisons; "
     "docs/architecture.md)"},
    {"VKINFER_CPU_MM_C_ALONG", OPT_BOOL, "tuning", F(cpu_mm_c_along), NULL, NULL, 1, "1",
     "0: the CPU-device MatMul loads a C constant along N (a convolution's bias) or along M (a Linear's) per "
     "element instead of once per row or column (`C_ALONG`) (comparisons)"},
    {"VKINFER_CPU_MM_BLOCK", OPT_DIMS, "tuning", F(cpu_mm_block), "RMxRN", NULL, 0, "",
     "the CPU-device MatMul's register block: RM rows (1-64) x RN columns (4, 8, 16 or 32) of Y per invocation "
     "(tuning). Default: from the product's size (src/ops/matmul_cpu.c)",
     cpu_mm_block_check},
    {"VKINFER_CPU_DW", OPT_ENUM, "tuning", F(cpu_dw), "planes|rows", NULL, OPT_AUTO, "",
     "CPU devices' float32 depthwise convolutions: rows runs them on `conv2d_cpu_depthwise(_tx)` (lanes along a "
     "row's columns) instead of `conv2d_cpu_dw_planes` (lanes along output planes, the default where its grid "
     "fits) (tests, comparisons)"},
    {"VKINFER_CPU_DW_X4", OPT_BOOL, "tuning", F(cpu_dw_x4), NULL, NULL, 1, "1",
     "0: CPU devices' `conv2d_cpu_dw_planes` reads X as 32-bit words even where its rows are whole RGBA texels "
     "(tests, comparisons)"},
    {"VKINFER_CPU_DW_PXB", OPT_INT, "tuning", F(cpu_dw_pxb), "4|8|16", NULL, OPT_AUTO, "",
     "CPU devices' depthwise kernels: the output columns an invocation computes (tests, tuning). Default: from the "
     "map's width and the stride"},
    {"VKINFER_CPU_DW_RB", OPT_INT, "tuning", F(cpu_dw_rb), "1-4096", NULL, 16, "16",
     "the rows a `conv2d_cpu_dw_planes` invocation walks (tests, tuning)"},
    {"VKINFER_CPU_DW_ROWS", OPT_INT, "tuning", F(cpu_dw_rows), "1-4", NULL, OPT_AUTO, "",
     "the output rows a `conv2d_cpu_depthwise` invocation computes on 2-D maps (tests, tuning). Default: 2"},

    /* ---- tuning and A/B checks: convolutions ---- */
    {"VKINFER_CONV_WINOGRAD", OPT_BOOL, "tuning", F(conv_winograd), NULL, NULL, OPT_AUTO, "",
     "0: 3x3 convolutions as im2col + products everywhere; 1: Winograd wherever it applies (float32, no groups, "
     "stride 1), small layers too (tests). Default: CPU devices on layers of 16+ channels and 32+ output tiles; "
     "GPUs on layers whose 16 products have 16M+ multiply-adds each (resnet50 at batch 32, not at batch 1)"},
    {"VKINFER_CONV_WINOGRAD_TILE", OPT_ENUM, "tuning", F(conv_winograd_tile), "2|4|4t", NULL, OPT_AUTO, "",
     "Winograd's transform: F(2x2, 3x3), F(4x4, 3x3), or F(4x4) with the tiles as the product's rows (Cout a multiple "
     "of 4, else the default) (comparisons, tests). Default: F(4x4) where it leaves 32 tiles or more, below that "
     "F(4x4) transposed on CPU devices and F(2x2) on GPUs"},

    /* ---- tuning and A/B checks: matrix products on GPUs ---- */
    {"VKINFER_COOPMAT", OPT_ENUM, "tuning", F(coopmat), "nv|khr", NULL, OPT_AUTO, "",
     "which tensor-core kernels a device with several kinds runs: nv the VK_NV_cooperative_matrix ones, khr the "
     "VK_KHR_cooperative_matrix ones (both leave VK_NV_cooperative_matrix2 off). Default: VK_NV_cooperative_matrix2 "
     "where the device has it (not under validation), else VK_NV_cooperative_matrix, else the KHR extension "
     "(A/B checks)"},
    {"VKINFER_MM_SGEMM", OPT_BOOL, "tuning", F(mm_sgemm), NULL, NULL, OPT_AUTO, "",
     "0: float32 GPU products on `matmul_tiled` only; 1: `matmul_sgemm` for every batched product too. Default: "
     "`matmul_sgemm` for float32 products of 64+ rows and columns on GPUs, unbatched ones and batched ones of 128+ "
     "rows (measured on the H200, docs/architecture.md)"},
    {"VKINFER_SGEMM_TILE", OPT_DIMS, "tuning", F(sgemm_tile), "BMxBN[xTMxTN]", NULL, 0, "",
     "`matmul_sgemm`'s tile, BM and BN 64 or 128, and the sums an invocation, TM x TN, 4 or 8 each, at most 256 "
     "invocations (tuning). Default: from the product's size (src/ops/matmul_record.c)",
     sgemm_tile_check},
    {"VKINFER_SGEMM_BK", OPT_INT, "tuning", F(sgemm_bk), "8|16", NULL, 8, "8", "`matmul_sgemm`'s K step (tuning)"},
    {"VKINFER_SGEMM_BLOCKS", OPT_BOOL, "tuning", F(sgemm_blocks), NULL, NULL, 1, "1",
     "0: `matmul_sgemm` keeps 16 x 16 invocations on every tile instead of 8 x 8 sums an invocation where its tiles "
     "fill the GPU (measuring)"},
    {"VKINFER_SGEMM_EXACT", OPT_BOOL, "tuning", F(sgemm_exact), NULL, NULL, 1, "1",
     "0: `matmul_sgemm` keeps the bounds on its loads where blocks are whole (measuring)"},
    {"VKINFER_TILED_TILE", OPT_INT, "tuning", F(tiled_tile), "32|64|128", NULL, OPT_AUTO, "",
     "the scalar MatMul's (`matmul_tiled`) tile (tuning on a new device). Default: 128 for large unbatched float32 "
     "products that fill a discrete GPU, else 64"},
    {"VKINFER_MM_GEMV_ROWS", OPT_INT, "tuning", F(mm_gemv_rows), "1-32", NULL, 16, "16",
     "products of at most N rows run on `matmul_gemv` on GPUs (tuning on a new device)"},
    {"VKINFER_MM_GEMV_WIDE", OPT_BOOL, "tuning", F(mm_gemv_wide), NULL, NULL, 1, "1",
     "0: products of at most 8 rows keep `matmul_gemv` instead of `matmul_gemv_wide` (16-byte loads of the weight, K "
     "split across workgroups) (measuring)"},
    {"VKINFER_MM_BUSY_GROUPS", OPT_INT, "tuning", F(mm_busy_groups), "1-1048576", NULL, 256, "256",
     "the workgroup count taken to fill the GPU in the scalar kernels' tile choices (`matmul_sgemm`'s and "
     "`matmul_tiled`'s 128 tiles) and split K's slice count (tuning; `bench/tuning/gpu_tune.sh`)"},
    {"VKINFER_MM_SPLIT_BELOW", OPT_INT, "tuning", F(mm_split_below), ">=0", NULL, OPT_AUTO, "",
     "split a product's K when it has fewer than N workgroups (tuning on a new device; "
     "`bench/tuning/tile_sweep.py --env`, `bench/tuning/env_sweep.sh`). Default: 200 on the scalar kernels, 128 on "
     "the tensor-core kernels"},
    {"VKINFER_MM_MIN_K_SLICE", OPT_INT, "tuning", F(mm_min_k_slice), ">=16", NULL, OPT_AUTO, "",
     "split K's slices are at least N long (tuning). Default: 32 on GPUs, 256 on CPU devices"},
    {"VKINFER_MM_MIN_SPLIT_K", OPT_INT, "tuning", F(mm_min_split_k), ">=0", NULL, OPT_AUTO, "",
     "split K only from K = N on (values under twice the slice length are ignored) (tuning). Default: 128 on the "
     "scalar kernels on GPUs, twice the slice length elsewhere"},
    {"VKINFER_SPLITK_FINISH", OPT_BOOL, "tuning", F(splitk_finish), NULL, NULL, 0, "0",
     "1: split K ends in the product's own dispatch (`matmul_sgemm_fin`: each tile's last workgroup sums the slices) "
     "instead of a reduce pass; measured slower on the H200 (tests)"},
    {"VKINFER_SPLITK_LN", OPT_BOOL, "tuning", F(splitk_ln), NULL, NULL, 1, "1",
     "0: a LayerNormalization after a split-K product stays apart from the reduce pass (`matmul_splitk_ln` joins "
     "them on GPUs with subgroup arithmetic) (measuring)"},
    {"VKINFER_SPLITK_CHAIN", OPT_BOOL, "tuning", F(splitk_chain), NULL, NULL, 1, "1",
     "0: ConvNeXt's layer scale and residual Add stay a `binary_chain` pass after the split-K reduce instead of being "
     "applied by the reduce through the permute back (measuring)"},
    {"VKINFER_COOPMAT_MIN_FLOPS", OPT_INT, "tuning", F(coopmat_min_flops), ">=0", NULL, 0, "0",
     "products of fewer than N flops stay off the tensor cores (tuning)"},
    {"VKINFER_COOPMAT_TILE", OPT_DIMS, "tuning", F(coopmat_tile), "BMxBNxWMxWNxBK", NULL, 0, "",
     "the VK_NV/KHR_cooperative_matrix kernel's block (BM x BN), warp tile (WM x WN) and K step (BK); a tile the "
     "kernel cannot take is ignored (tuning). Default: from the product's size (src/ops/matmul_coopmat.c)"},
    {"VKINFER_COOPMAT2_TILE", OPT_DIMS, "tuning", F(coopmat2_tile), "BMxBNxBKxLOCAL", NULL, 0, "",
     "the VK_NV_cooperative_matrix2 kernel's blocks and workgroup size; one the device does not offer is ignored "
     "(tuning; `bench/tuning/tile_sweep.py`). Default: from the product's size (src/ops/matmul_coopmat.c)"},
    {"VKINFER_COOPMAT2_GROUP_M", OPT_INT, "tuning", F(coopmat2_group_m), ">=0", NULL, 0, "0",
     "the VK_NV_cooperative_matrix2 kernel takes its blocks in columns N tall (0: row by row) (tuning)"},
    {"VKINFER_COOPMAT2_UNROLL", OPT_INT, "tuning", F(coopmat2_unroll), "1-32", NULL, 16, "16",
     "the K steps of 16 the VK_NV_cooperative_matrix2 kernel's loop unrolls (tuning)"},
    {"VKINFER_COOPMAT2_EXP", OPT_LIST, "tuning", F(coopmat2_exp), "dims", NULL, 0, "",
     "issue 37's candidate VK_NV_cooperative_matrix2 kernel (`bench/tuning/coopmat2_experiment.sh`): dims (M, N, K "
     "and the operand strides as specialization constants, a pipeline per shape). Default: none, the default kernels"},

    /* ---- tuning and A/B checks: fusion and element-wise kernels ---- */
    {"VKINFER_ATTENTION_ROWS", OPT_ENUM, "tuning", F(attention_rows), "0|1|tile", NULL, OPT_AUTO, "",
     "MatMul -> Softmax -> MatMul as one dispatch: 0 never, 1 `attention_rows` wherever the pattern is (CPU devices "
     "and long sequences too), tile: `attention_tile` (blocks of 16 or 32 queries, keys in chunks with an online "
     "softmax, fp32 sums; heads of up to 128, of 256 on 16-bit words, additive masks, the NaN guard after the "
     "softmax) wherever it applies. Default: on GPUs `attention_rows` for up to 64 keys, `attention_tile` for more "
     "(16-bit words: for more than 256); a masked attention is one dispatch only on `attention_tile`"},
    {"VKINFER_ATTENTION_TILE_ROWS", OPT_INT, "tuning", F(attention_tile_rows), "16|32", NULL, OPT_AUTO, "",
     "`attention_tile`'s block of queries (32 needs 31 KiB of shared memory, else 16 runs; heads over 64 always "
     "take 16) (tests, measuring). "
     "Default: 32 unless that gives under 96 blocks"},
    {"VKINFER_TRANSPOSED_STORES", OPT_BOOL, "tuning", F(transposed_stores), NULL, NULL, 1, "1",
     "0: a Transpose after the attention kernels (the heads moved back beside the sequence), after the CPU "
     "devices' P V product, after the GPU depthwise convolution before a channels-last permute, or after a split-K "
     "reduce before ConvNeXt's permute back stays a copy of its own instead of being stored through by the kernel "
     "before it (measuring)"},
    {"VKINFER_CHANNEL_LN", OPT_BOOL, "tuning", F(channel_ln), NULL, NULL, 1, "1",
     "0: a LayerNorm between a permute and its inverse stays two copies around a row LayerNorm instead of one "
     "strided `norm_rows` pass over the channels (measuring)"},
    {"VKINFER_SPLIT_VIEWS", OPT_BOOL, "tuning", F(split_views), NULL, NULL, 1, "1",
     "0: a Reshape that splits a strided view's axis, and Gathers of one constant index that only feed products "
     "(PyTorch 2's packed q/k/v), are copies instead of views (comparisons, tests)"},
    {"VKINFER_ELEMENTWISE_GROUPS", OPT_INT, "tuning", F(elementwise_groups), "0-4294967295", NULL, OPT_AUTO, "",
     "at most N workgroups for the element-wise kernels (binary, unary, copy), each invocation taking every "
     "grid-stride-th element; 0: one element per invocation (tests of the loop on lavapipe, tuning). Default: 4096 "
     "on GPUs, 0 on CPU devices"},
};

enum { N_OPTIONS = sizeof options / sizeof options[0] };

static const opt_def *find(const char *name)
{
    for (int i = 0; i < N_OPTIONS; i++)
        if (!strcmp(options[i].name, name)) return &options[i];
    return NULL;
}

/* The index of the |-separated item of `list` equal to s[0..len), -1 if none. */
static int item_index(const char *list, const char *s, size_t len)
{
    int i = 0;
    for (const char *p = list; *p; i++) {
        const char *end = strchr(p, '|');
        size_t n = end ? (size_t)(end - p) : strlen(p);
        if (n == len && !strncmp(p, s, len)) return i;
        if (!end) break;
        p = end + 1;
    }
    return -1;
}

/* A whole number, or a number in exponent form whose value is whole ("1e9"). */
static bool parse_int(const char *s, int64_t *out)
{
    char *end;
    errno = 0;
    long long v = strtoll(s, &end, 10);
    if (!errno && end != s && !*end) {
        *out = v;
        return true;
    }
    errno = 0;
    double d = strtod(s, &end);
    if (errno || end == s || *end || d != d || d < -9.2e18 || d > 9.2e18 || d != (double)(int64_t)d) return false;
    *out = (int64_t)d;
    return true;
}

/* Whether v is one of an int option's values ("A|B|C", "LO-HI", ">=LO"). */
static bool int_allowed(const char *values, int64_t v)
{
    if (!strncmp(values, ">=", 2)) return v >= strtoll(values + 2, NULL, 10);
    if (strchr(values, '|')) {
        char buf[32];
        snprintf(buf, sizeof buf, "%lld", (long long)v);
        return item_index(values, buf, strlen(buf)) >= 0;
    }
    char *end;
    long long lo = strtoll(values, &end, 10), hi = strtoll(end + 1, NULL, 10);
    return v >= lo && v <= hi;
}

/* How many numbers a dims option takes: those before '[', or all. */
static void dims_counts(const char *format, int *lo, int *hi)
{
    const char *bracket = strchr(format, '[');
    *lo = *hi = 1;
    for (const char *p = format; *p; p++)
        if (*p == 'x') {
            ++*hi;
            if (!bracket || p < bracket) ++*lo;
        }
}

static vki_status invalid(const opt_def *d, const char *value, const char *source, const char *why)
{
    return vki_fail(VKI_ERROR_INVALID_ARGUMENT, "%s=%s (%s) is not a valid value: %s", d->name, value, source, why);
}

/* The size of a field of type t: a row whose field is not refuses every value. */
static size_t type_size(opt_type t)
{
    static const size_t sizes[] = {sizeof(int), sizeof(int64_t), sizeof(int), sizeof(opt_text), sizeof(unsigned),
                                   sizeof(opt_dims)};
    return sizes[t];
}

/* value into d's field of o. An empty value leaves a bool, int, enum, list or dims option as it
 * was (an empty variable is an unset one); a string takes it. */
static vki_status set_value(vki_options *o, const opt_def *d, const char *value, const char *source)
{
    void *field = (char *)o + d->offset;
    if (d->size != type_size(d->type))
        return vki_fail(VKI_ERROR_INVALID_ARGUMENT, "%s: its field in vki_options is not of its type", d->name);
    char why[192];
    if (!*value && d->type != OPT_STRING) return VKI_OK;
    switch (d->type) {
    case OPT_BOOL: {
        static const char *const yes[] = {"1", "true", "yes", "on"}, *const no[] = {"0", "false", "no", "off"};
        for (int i = 0; i < 4; i++) {
            if (!strcasecmp(value, yes[i])) return *(int *)field = 1, VKI_OK;
            if (!strcasecmp(value, no[i])) return *(int *)field = 0, VKI_OK;
        }
        return invalid(d, value, source, "0 or 1 expected");
    }
    case OPT_INT: {
        int64_t v;
        if (!parse_int(value, &v) || !int_allowed(d->values, v)) {
            snprintf(why, sizeof why, "an integer %s%s expected", strchr(d->values, '|') ? "of " : "", d->values);
            return invalid(d, value, source, why);
        }
        *(int64_t *)field = v;
        return VKI_OK;
    }
    case OPT_ENUM: {
        int i = item_index(d->values, value, strlen(value));
        if (i < 0) {
            snprintf(why, sizeof why, "one of %s expected", d->values);
            return invalid(d, value, source, why);
        }
        *(int *)field = d->names ? item_index(d->names, value, strlen(value)) : i;
        return VKI_OK;
    }
    case OPT_LIST: {
        unsigned bits = 0;
        for (const char *p = value; *p;) {
            const char *end = strpbrk(p, ",+");
            size_t n = end ? (size_t)(end - p) : strlen(p);
            int i = item_index(d->values, p, n);
            if (n && i < 0) {
                snprintf(why, sizeof why, "'%.*s' is none of %s", (int)(n > 64 ? 64 : n), p, d->values);
                return invalid(d, value, source, why);
            }
            if (n) bits |= 1u << i;
            if (!end) break;
            p = end + 1;
        }
        *(unsigned *)field = bits;
        return VKI_OK;
    }
    case OPT_DIMS: {
        opt_dims v = {0};
        int lo, hi;
        dims_counts(d->values, &lo, &hi);
        const char *p = value;
        bool ok = true;
        while (ok) {
            char *end;
            errno = 0;
            long long x = strtoll(p, &end, 10);
            ok = !errno && end != p && *p != '-' && *p != '+' && x >= 1 && x <= 1 << 20 && v.n < hi &&
                 (*end == 'x' || !*end);
            if (!ok) break;
            v.v[v.n++] = (uint32_t)x;
            if (!*end) break;
            p = end + 1;
        }
        ok = ok && (v.n == lo || v.n == hi);
        const char *rule = ok && d->check ? d->check(&v) : NULL;
        if (!ok || rule) {
            snprintf(why, sizeof why, "%s expected (positive numbers)%s%s", d->values, rule ? ", and " : "",
                     rule ? rule : "");
            return invalid(d, value, source, why);
        }
        *(opt_dims *)field = v;
        return VKI_OK;
    }
    case OPT_STRING: {
        opt_text *t = field;
        size_t n = strlen(value);
        if (n >= sizeof t->s) return invalid(d, "...", source, "longer than 1023 bytes");
        t->set = true;
        memcpy(t->s, value, n + 1);
        return VKI_OK;
    }
    }
    return VKI_OK;
}

static void set_default(vki_options *o, const opt_def *d)
{
    void *field = (char *)o + d->offset;
    if (d->size != type_size(d->type)) return;
    switch (d->type) {
    case OPT_BOOL:
    case OPT_ENUM: *(int *)field = (int)d->init; break;
    case OPT_INT: *(int64_t *)field = d->init; break;
    case OPT_LIST: *(unsigned *)field = 0; break;
    case OPT_DIMS: memset(field, 0, sizeof(opt_dims)); break;
    case OPT_STRING: memset(field, 0, sizeof(opt_text)); break;
    }
}

void options_defaults(vki_options *o)
{
    memset(o, 0, sizeof *o);
    for (int i = 0; i < N_OPTIONS; i++) set_default(o, &options[i]);
}

vki_status options_from_env(vki_options *o, const char *const *except, size_t n_except)
{
    const char *lp = getenv("LP_NUM_THREADS");
    o->lavapipe_inline = lp && !strcmp(lp, "0");
    /* the pipeline cache's folder where VKINFER_CACHE_DIR and the program leave it */
    const char *xdg = getenv("XDG_CACHE_HOME"), *home = getenv("HOME");
    if (xdg && *xdg)
        snprintf(o->home_cache_dir, sizeof o->home_cache_dir, "%s/vkinfer", xdg);
    else if (home)
        snprintf(o->home_cache_dir, sizeof o->home_cache_dir, "%s/.cache/vkinfer", home);
    vki_status first = VKI_OK;
    char message[512] = "";
    for (int i = 0; i < N_OPTIONS; i++) {
        bool excepted = false;
        for (size_t k = 0; k < n_except && !excepted; k++) excepted = except[k] && !strcmp(except[k], options[i].name);
        const char *v = excepted ? NULL : getenv(options[i].name);
        if (v && set_value(o, &options[i], v, "in the environment") != VKI_OK && first == VKI_OK) {
            first = VKI_ERROR_INVALID_ARGUMENT;
            snprintf(message, sizeof message, "%s", vki_last_error());
        }
    }
    return first == VKI_OK ? VKI_OK : vki_fail(first, "%s", message);
}

vki_status options_set(vki_options *o, const char *name, const char *value)
{
    const opt_def *d = name ? find(name) : NULL;
    if (!d)
        return vki_fail(VKI_ERROR_INVALID_ARGUMENT, "'%s' is not an option of vkinfer (`vkinfer options` lists them)",
                        name ? name : "(null)");
    if (!value || (!*value && d->type != OPT_STRING)) {
        set_default(o, d);
        return VKI_OK;
    }
    return set_value(o, d, value, "set by the program");
}

const char *options_enum_name(const char *option, int value)
{
    const opt_def *d = find(option);
    const char *list = d ? (d->names ? d->names : d->values) : NULL;
    for (int i = 0; list && *list; i++) {
        const char *end = strchr(list, '|');
        if (i == value) {
            static _Thread_local char name[64];
            size_t n = end ? (size_t)(end - list) : strlen(list);
            snprintf(name, sizeof name, "%.*s", (int)n, list);
            return name;
        }
        if (!end) break;
        list = end + 1;
    }
    return "";
}

uint32_t vki_option_count(void)
{
    return N_OPTIONS;
}

vki_status vki_option_get(uint32_t index, vki_option_info *out)
{
    if (index >= N_OPTIONS || !out)
        return vki_fail(VKI_ERROR_INVALID_ARGUMENT, "vki_option_get: index %u out of range", index);
    const opt_def *d = &options[index];
    out->name = d->name;
    out->type = type_names[d->type];
    out->values = d->type == OPT_BOOL ? "0|1" : d->values;
    out->default_value = d->def;
    out->category = d->category;
    out->doc = d->doc;
    return VKI_OK;
}
