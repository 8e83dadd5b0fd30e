/* Shared helpers: error messages, a bump allocator, dtype facts, timing. */
#ifndef VKI_UTIL_H
#define VKI_UTIL_H

#include "vkinfer.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Records the message returned by vki_last_error() and returns `status`. */
vki_status vki_fail(vki_status status, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Prepends context ("node 'conv1' (Conv): ") to the current message; returns `status`. */
vki_status vki_fail_prefix(vki_status status, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
void vki_clear_error(void);

#define VKI_TRY(expr)                                                                      \
    do {                                                                                   \
        vki_status try_status_ = (expr);                                                   \
        if (try_status_ != VKI_OK) return try_status_;                                     \
    } while (0)

/* A bump allocator: many small allocations, one free. Out of memory returns NULL. */
typedef struct vki_arena_chunk vki_arena_chunk;
typedef struct vki_arena {
    vki_arena_chunk *head;
} vki_arena;
void *arena_alloc(vki_arena *arena, size_t bytes); /* zeroed, 16-byte aligned */
char *arena_strndup(vki_arena *arena, const char *s, size_t n);
/* The arena's newest chunk: arena_release frees only what was allocated after this mark. */
const void *arena_mark(const vki_arena *arena);
/* Gives back an allocation of more than 64 KiB (each has a chunk of its own) made after `mark`,
 * before the arena goes; false, with nothing freed, where `p` is not such an allocation. */
bool arena_release(vki_arena *arena, const void *mark, void *p, size_t bytes);
void arena_free(vki_arena *arena);
size_t arena_held(const vki_arena *arena); /* bytes of its chunks */

/* Dtype facts. On the GPU a value is held in a storage (docs/architecture.md, "Dtypes on the
 * GPU"): its own width for 8- and 16-bit dtypes, or one 32-bit word per element. */
bool dtype_is_float(vki_dtype t);
bool dtype_is_int(vki_dtype t); /* integers and bool */
bool dtype_gpu_supported(vki_dtype t);
bool dtype_is_minifloat(vki_dtype t); /* float8 (five kinds, e8m0 included) and float4e2m1 */
/* The float8/float4 formats: code -> value (exact); value -> nearest representable value
 * (ties to even; saturate clamps to the largest finite value, else overflow is inf where the
 * format has it, NaN where not; fnuz has no -0); value -> code. */
double minifloat_decode(vki_dtype t, uint8_t code);
double minifloat_round(vki_dtype t, double v, bool saturate);
uint8_t minifloat_encode(vki_dtype t, double v, bool saturate);
/* float8e8m0 (a power of two; code 255 NaN): Cast's rounding of float32 v, as ONNX's reference
 * (onnx.numpy_helper.to_float8e8m0) on float32's bits: the exponent field, raised by one when
 * rounding up (any mantissa bit) or to nearest; saturate keeps 2^127 from becoming NaN.
 * minifloat_round/encode use E8M0_UP (Cast's default) and pack values of the format exactly. */
enum { E8M0_UP = 0, E8M0_DOWN = 1, E8M0_NEAREST = 2 };
uint8_t e8m0_round(float v, bool saturate, int round_mode);
/* Why element i of host data of dtype t does not fit its GPU form: "(uint64) holds ... at
 * index i, outside ..." (for the messages naming the tensor). */
void dtype_range_message(vki_dtype t, const void *data, size_t i, char *buf, size_t size);
int64_t shape_numel(const int64_t *dims, int rank);
/* "[1,3,224,224]" into buf. */
const char *shape_str(const int64_t *dims, int rank, char *buf, size_t size);

/* How a value's elements lie in device memory. GPU_W32 is the form every kernel can read: one
 * 32-bit word per element, floats as fp32 bits, integers and bool as int32 (int64 narrowed).
 * The others are a dtype's own bytes, packed (two halves or four bytes to a word); GPU_F64
 * holds float64 as its 8 bytes (two words, low word first). */
typedef enum gpu_storage {
    GPU_W32 = 0,
    GPU_F16,
    GPU_BF16,
    GPU_I16,
    GPU_U16,
    GPU_I8,
    GPU_U8,
    GPU_BOOL,
    GPU_F64,
    GPU_STORAGE_COUNT
} gpu_storage;
/* The storage that holds dtype t in its own width (GPU_F64 for float64); GPU_W32 for 32-bit
 * dtypes, the 64-bit integers (narrowed), the float8/float4 formats and 4-/2-bit integers
 * (widened, see convert_to_gpu). */
gpu_storage storage_native(vki_dtype t);
uint32_t storage_size(gpu_storage s); /* bytes per element */
const char *storage_name(gpu_storage s);
/* Host bytes of dtype t (count elements) into storage s. Fails (false, *bad_index set) for
 * int64 values outside int32, uint32/uint64 values above 2^31-1 and for dtypes the GPU does
 * not hold. float32 into GPU_F16 (the
 * fp16 execution mode) rounds to nearest even. */
bool host_to_storage(vki_dtype t, const void *src, gpu_storage s, void *dst, size_t count, size_t *bad_index);
/* Storage s back into host bytes of dtype t (count elements). */
void storage_to_host(vki_dtype t, gpu_storage s, const void *src, void *dst, size_t count);
/* The same, split over a few threads when the tensor is large (src/util/copy.c): a run's
 * inputs and outputs. */
bool host_to_storage_parallel(vki_dtype t, const void *src, gpu_storage s, void *dst, size_t count, size_t *bad_index);
void storage_to_host_parallel(vki_dtype t, gpu_storage s, const void *src, void *dst, size_t count);

/* Host conversions between a dtype's host bytes and the GPU's 4-byte form. count elements.
 * to_gpu fails (returns false, *bad_index set) for int64 values outside int32 and uint32/
 * uint64 values above 2^31-1; float64 beyond float32's range becomes +-inf. from_gpu packs
 * the float8/float4 formats exactly (the words hold values of the format). */
bool convert_to_gpu(vki_dtype t, const void *src, uint32_t *dst, size_t count, size_t *bad_index);
void convert_from_gpu(vki_dtype t, const uint32_t *src, void *dst, size_t count);
float half_to_float(uint16_t h);
uint16_t float_to_half(float f);
float bf16_to_float(uint16_t h);
uint16_t float_to_bf16(float f);

/* Reads element i of host data of dtype t as double / int64 (for host folding). */
double host_read_f64(vki_dtype t, const void *data, size_t i);
int64_t host_read_i64(vki_dtype t, const void *data, size_t i);
void host_write_f64(vki_dtype t, void *data, size_t i, double v);
void host_write_i64(vki_dtype t, void *data, size_t i, int64_t v);

double now_ms(void);

#endif
