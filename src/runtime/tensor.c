/* Device tensors (vki_tensor): data that stays in device memory between runs, bound to
 * sessions' inputs and outputs so that a loop of runs never copies through the host. */
#include "runtime.h"

#include <stdlib.h>
#include <string.h>

gpu_storage tensor_storage(vki_dtype t) { return storage_native(t); }

vki_status vki_tensor_create(vki_context *ctx, vki_dtype dtype, const int64_t *dims, int32_t rank, vki_tensor **out)
{
    if (!ctx || !out || (rank > 0 && !dims)) return vki_fail(VKI_ERROR_INVALID_ARGUMENT, "vki_tensor_create: NULL argument");
    *out = NULL;
    VKI_TRY(vk_check_lost(&ctx->vk));
    if (!dtype_gpu_supported(dtype))
        return vki_fail(VKI_ERROR_UNSUPPORTED, "vki_tensor_create: dtype %s is not held on the GPU", vki_dtype_name(dtype));
    if (rank < 0 || rank > VKI_MAX_RANK)
        return vki_fail(VKI_ERROR_SHAPE, "vki_tensor_create: rank %d; vkinfer supports 0..%d", rank, VKI_MAX_RANK);
    int64_t numel = 1;
    for (int d = 0; d < rank; d++) {
        if (dims[d] < 0) return vki_fail(VKI_ERROR_SHAPE, "vki_tensor_create: negative dimension %lld", (long long)dims[d]);
        if (dims[d] > 0 && numel > ((int64_t)1 << 40) / dims[d])
            return vki_fail(VKI_ERROR_SHAPE, "vki_tensor_create: more than 2^40 elements");
        numel *= dims[d];
    }
    vki_tensor *t = calloc(1, sizeof *t);
    if (!t) return vki_fail(VKI_ERROR_OUT_OF_MEMORY, "out of host memory");
    t->ctx = ctx;
    t->dtype = dtype;
    t->rank = rank;
    if (rank) memcpy(t->dims, dims, (size_t)rank * sizeof *dims);
    t->storage = tensor_storage(dtype);
    t->bytes = (uint64_t)numel * storage_size(t->storage);
    vki_status st = vk_buffer_create(&ctx->vk, (t->bytes + 3) / 4 * 4, VK_BUFFER_DEVICE, &t->buffer);
    if (st != VKI_OK) {
        unsigned long long bytes = t->bytes;
        free(t);
        return vki_fail_prefix(st, "a device tensor of %llu bytes: ", bytes);
    }
    *out = t;
    return VKI_OK;
}

void vki_tensor_destroy(vki_tensor *t)
{
    if (!t) return;
    vk_buffer_destroy(&t->ctx->vk, &t->buffer);
    free(t);
}

vki_status vki_tensor_get_info(const vki_tensor *t, vki_tensor_info *out)
{
    if (!t || !out) return vki_fail(VKI_ERROR_INVALID_ARGUMENT, "vki_tensor_get_info: NULL argument");
    memset(out, 0, sizeof *out);
    out->dtype = t->dtype;
    out->rank = t->rank;
    memcpy(out->dims, t->dims, sizeof out->dims);
    return VKI_OK;
}

static vki_status check_bytes(const vki_tensor *t, size_t bytes, const char *fn)
{
    size_t need = (size_t)shape_numel(t->dims, t->rank) * vki_dtype_size(t->dtype);
    char shape[256];
    if (bytes != need)
        return vki_fail(VKI_ERROR_SHAPE, "%s: a %s tensor of shape %s holds %zu bytes, %zu given", fn, vki_dtype_name(t->dtype),
                        shape_str(t->dims, t->rank, shape, sizeof shape), need, bytes);
    return VKI_OK;
}

vki_status vki_tensor_write(vki_tensor *t, const void *data, size_t bytes)
{
    if (!t || (bytes && !data)) return vki_fail(VKI_ERROR_INVALID_ARGUMENT, "vki_tensor_write: NULL argument");
    VKI_TRY(check_bytes(t, bytes, "vki_tensor_write"));
    vk_context *vk = &t->ctx->vk;
    VKI_TRY(vk_check_lost(vk));
    if (!t->bytes) return VKI_OK;
    vk_buffer staging;
    VKI_TRY(vk_buffer_create(vk, t->bytes, VK_BUFFER_UPLOAD, &staging));
    size_t bad = 0, count = (size_t)shape_numel(t->dims, t->rank);
    vki_status st = VKI_OK;
    if (!host_to_storage(t->dtype, data, t->storage, staging.mapped, count, &bad)) {
        char why[256];
        dtype_range_message(t->dtype, data, bad, why, sizeof why);
        st = vki_fail(VKI_ERROR_UNSUPPORTED, "vki_tensor_write: the data %s", why);
    }
    if (st == VKI_OK) {
        vk_buffer_flush(vk, &staging);
        st = vk_copy_and_wait(vk, staging.buffer, 0, t->buffer.buffer, 0, t->bytes);
    }
    vk_buffer_destroy(vk, &staging);
    return st;
}

vki_status vki_tensor_read(const vki_tensor *t, void *data, size_t bytes)
{
    if (!t || (bytes && !data)) return vki_fail(VKI_ERROR_INVALID_ARGUMENT, "vki_tensor_read: NULL argument");
    VKI_TRY(check_bytes(t, bytes, "vki_tensor_read"));
    vk_context *vk = &t->ctx->vk;
    VKI_TRY(vk_check_lost(vk));
    if (!t->bytes) return VKI_OK;
    vk_buffer staging;
    VKI_TRY(vk_buffer_create(vk, t->bytes, VK_BUFFER_DOWNLOAD, &staging));
    vki_status st = vk_copy_and_wait(vk, t->buffer.buffer, 0, staging.buffer, 0, t->bytes);
    if (st == VKI_OK) {
        vk_buffer_invalidate(vk, &staging);
        storage_to_host(t->dtype, t->storage, staging.mapped, data, (size_t)shape_numel(t->dims, t->rank));
    }
    vk_buffer_destroy(vk, &staging);
    return st;
}
