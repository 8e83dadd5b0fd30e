#define _GNU_SOURCE
/* Public entry points for devices and contexts. */
#include "runtime.h"

#include <stdlib.h>
#include <string.h>

int vki_vulkan_available(void)
{
    vk_context vk = {0};
    VkPhysicalDevice *devs = NULL;
    uint32_t n = 0, best;
    options_defaults(&vk.opts);
    (void)options_from_env(&vk.opts, NULL, 0); /* an invalid option leaves the others read */
    vk.opts.validation = OPT_VALIDATION_OFF;
    bool ok = vk_instance_create(&vk) == VKI_OK && vk_list_devices(&vk, &devs, &n, &best) == VKI_OK && n > 0;
    free(devs);
    vk_context_destroy(&vk);
    return ok;
}

vki_status vki_device_list(vki_device_info *infos, uint32_t capacity, uint32_t *count)
{
    if (!count || (capacity && !infos)) return vki_fail(VKI_ERROR_INVALID_ARGUMENT, "vki_device_list: NULL argument");
    vk_context vk = {0};
    VkPhysicalDevice *devs = NULL;
    uint32_t n = 0, best = 0;
    options_defaults(&vk.opts);
    VKI_TRY(options_from_env(&vk.opts, NULL, 0));
    vk.opts.validation = OPT_VALIDATION_OFF;
    vki_status st = vk_instance_create(&vk);
    if (st == VKI_OK) st = vk_list_devices(&vk, &devs, &n, &best);
    if (st == VKI_OK) {
        /* VKINFER_DEVICE changes which one is the default */
        const char *spec = vk.opts.device.s;
        uint32_t def = best;
        if (*spec) {
            char *end;
            unsigned long idx = strtoul(spec, &end, 10);
            if (!*end && idx < n) def = (uint32_t)idx;
            else if (*end)
                for (uint32_t i = 0; i < n; i++) {
                    VkPhysicalDeviceProperties p;
                    vk.f.vkGetPhysicalDeviceProperties(devs[i], &p);
                    if (strcasestr(p.deviceName, spec)) { def = i; break; }
                }
        }
        for (uint32_t i = 0; i < n && i < capacity; i++) {
            vk_describe_device(&vk, devs[i], i, &infos[i]);
            infos[i].is_default = i == def;
        }
        *count = n;
    }
    free(devs);
    vk_context_destroy(&vk);
    return st;
}

/* The context's options: the defaults, the environment's (but those names/values set), opts'
 * fields, then names/values. */
static vki_status context_options(const vki_context_options *opts, const char *const *names, const char *const *values,
                                  size_t count, vki_options *o)
{
    if (count && (!names || !values))
        return vki_fail(VKI_ERROR_INVALID_ARGUMENT, "vki_context_create_with_options: NULL names or values");
    options_defaults(o);
    VKI_TRY(options_from_env(o, names, count));
    if (opts && opts->device) VKI_TRY(options_set(o, "VKINFER_DEVICE", opts->device));
    if (opts && opts->validation == 0) o->validation = OPT_VALIDATION_OFF;
    if (opts && opts->validation > 0 && o->validation != OPT_VALIDATION_SYNC) o->validation = OPT_VALIDATION_ON;
    if (opts && opts->cache_dir) VKI_TRY(options_set(o, "VKINFER_CACHE_DIR", opts->cache_dir));
    for (size_t i = 0; i < count; i++) VKI_TRY(options_set(o, names[i], values[i]));
    return VKI_OK;
}

vki_status vki_context_create_with_options(const vki_context_options *opts, const char *const *names,
                                           const char *const *values, size_t count, vki_context **out)
{
    if (!out) return vki_fail(VKI_ERROR_INVALID_ARGUMENT, "vki_context_create: NULL out");
    *out = NULL;
    vki_context *ctx = calloc(1, sizeof *ctx);
    if (!ctx) return vki_fail(VKI_ERROR_OUT_OF_MEMORY, "out of host memory");
    vki_status st = context_options(opts, names, values, count, &ctx->vk.opts);
    if (st != VKI_OK) {
        free(ctx);
        return st;
    }
    st = vk_context_init_locks(&ctx->vk);
    if (st != VKI_OK) {
        free(ctx);
        return st;
    }
    st = vk_instance_create(&ctx->vk);
    if (st == VKI_OK) st = vk_device_open(&ctx->vk);
    if (st == VKI_OK) st = vk_check_validation(&ctx->vk);
    if (st != VKI_OK) {
        vk_context_destroy(&ctx->vk);
        free(ctx);
        return st;
    }
    *out = ctx;
    return VKI_OK;
}

vki_status vki_context_create(const vki_context_options *opts, vki_context **out)
{
    return vki_context_create_with_options(opts, NULL, NULL, 0, out);
}

void vki_context_destroy(vki_context *ctx)
{
    if (!ctx) return;
    vk_context_destroy(&ctx->vk);
    free(ctx);
}

vki_status vki_context_device_info(const vki_context *ctx, vki_device_info *out)
{
    if (!ctx || !out) return vki_fail(VKI_ERROR_INVALID_ARGUMENT, "vki_context_device_info: NULL argument");
    vk_context *vk = (vk_context *)&ctx->vk;
    vk_describe_device(vk, vk->phys, vk->device_index, out);
    out->is_default = 1;
    out->shader_float64 = vk->caps.shader_float64; /* as VKINFER_DISABLE_FEATURES left it */
    return VKI_OK;
}

uint32_t vki_op_count(void) { return op_registry_count(); }

vki_status vki_op_get(uint32_t index, vki_op_info *out)
{
    const op_def *d = op_registry_get(index);
    if (!d || !out) return vki_fail(VKI_ERROR_INVALID_ARGUMENT, "vki_op_get: index %u out of range", index);
    out->name = d->name;
    out->domain = d->domain;
    out->dtypes = d->dtypes;
    out->notes = d->notes ? d->notes : "";
    return VKI_OK;
}
