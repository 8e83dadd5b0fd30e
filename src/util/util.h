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
void arena_free(vki_arena *arena);

/* Dtype facts. The GPU holds every element in 4 bytes: floats (fp32, fp16, bf16) as fp32,
 * integers and bool as int32 (see docs/architecture.md, "Dtypes on the GPU"). */
bool dtype_is_float(vki_dtype t);
bool dtype_is_int(vki_dtype t); /* integers and bool */
bool dtype_gpu_supported(vki_dtype t);
int64_t shape_numel(const int64_t *dims, int rank);
/* "[1,3,224,224]" into buf. */
const char *shape_str(const int64_t *dims, int rank, char *buf, size_t size);

/* Host conversions between a dtype's host bytes and the GPU's 4-byte form. count elements.
 * to_gpu fails (returns false, *bad_index set) for int64 values outside int32. */
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
