/* Lookup of the embedded SPIR-V (table generated at build time from shaders/). */
#include "vk.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

extern vk_shader vk_shader_table[];
extern const unsigned vk_shader_table_count;

/* Bindings a shader declares: 1 + the largest Binding decoration in its SPIR-V. */
static uint32_t count_bindings(const vk_shader *s)
{
    const uint32_t *w = s->code;
    size_t n = s->size / 4;
    uint32_t count = 0;
    for (size_t i = 5; i < n;) {
        uint32_t op = w[i] & 0xffff, len = w[i] >> 16;
        if (len == 0) break;
        if (op == 71 /* OpDecorate */ && len >= 4 && w[i + 2] == 33 /* Binding */ && w[i + 3] + 1 > count) count = w[i + 3] + 1;
        i += len;
    }
    return count;
}

/* Bindings whose variable is a buffer image read with a sampler or without one (a uniform
 * texel buffer: textureBuffer with GL_EXT_samplerless_texture_functions, as the kernels declare
 * them since session 25, or samplerBuffer): OpVariable -> OpTypePointer -> [OpTypeSampledImage
 * ->] OpTypeImage with Dim Buffer and Sampled 1 (a storage texel buffer has Sampled 2); in *r32
 * those whose image's sampled type is an integer (utextureBuffer: R32_UINT words). Bindings
 * past 31 are not looked at (no kernel has that many). */
static uint32_t find_texel_bindings(const vk_shader *s, uint32_t *r32)
{
    *r32 = 0;
    const uint32_t *w = s->code;
    size_t n = s->size / 4;
    uint32_t bound = n > 3 ? w[3] : 0, mask = 0;
    if (!bound) return 0;
    uint32_t *binding = calloc(bound, sizeof *binding), *link = calloc(bound, sizeof *link);
    uint8_t *kind = calloc(bound, 1); /* 1 variable, 2 pointer, 3 sampled image, 4 buffer image, 5 int type */
    if (!binding || !link || !kind) {
        free(binding), free(link), free(kind);
        return 0;
    }
    for (size_t i = 5; i < n;) {
        uint32_t op = w[i] & 0xffff, len = w[i] >> 16;
        if (len == 0 || i + len > n) break;
        const uint32_t *a = w + i + 1;
        if (op == 71 && len >= 4 && a[1] == 33 && a[0] < bound) binding[a[0]] = a[2] + 1; /* OpDecorate Binding */
        if (op == 59 && len >= 4 && a[1] < bound) kind[a[1]] = 1, link[a[1]] = a[0];    /* OpVariable */
        if (op == 32 && len >= 4 && a[0] < bound) kind[a[0]] = 2, link[a[0]] = a[2];    /* OpTypePointer */
        if (op == 27 && len >= 3 && a[0] < bound) kind[a[0]] = 3, link[a[0]] = a[1];    /* OpTypeSampledImage */
        if (op == 25 && len >= 8 && a[0] < bound && a[2] == 5 && a[6] == 1)                   /* OpTypeImage, Dim Buffer, */
            kind[a[0]] = 4, link[a[0]] = a[1];                                                /* read through a sampler */
        if (op == 21 && len >= 2 && a[0] < bound) kind[a[0]] = 5;                    /* OpTypeInt */
        i += len;
    }
    for (uint32_t id = 0; id < bound; id++) {
        if (kind[id] != 1 || !binding[id] || binding[id] > 32) continue;
        uint32_t t = link[id];
        if (t < bound && kind[t] == 2) t = link[t];
        if (t < bound && kind[t] == 3) t = link[t];
        if (t < bound && kind[t] == 4) {
            mask |= 1u << (binding[id] - 1);
            if (link[t] < bound && kind[link[t]] == 5) *r32 |= 1u << (binding[id] - 1);
        }
    }
    free(binding), free(link), free(kind);
    return mask;
}

const vk_shader *vk_shader_find(const char *name)
{
    for (unsigned i = 0; i < vk_shader_table_count; i++)
        if (!strcmp(vk_shader_table[i].name, name)) {
            vk_shader *s = &vk_shader_table[i];
            if (!s->bindings) {
                s->texel_bindings = find_texel_bindings(s, &s->texel_r32_bindings);
                s->bindings = count_bindings(s);
            }
            return s;
        }
    return NULL;
}

/* What a pipeline of shader s with these specialization constants asks of the device, read
 * from its SPIR-V: the workgroup size (the WorkgroupSize built-in, else the LocalSize mode)
 * and the bytes of its Workgroup (shared) variables. The constant expressions glslang emits
 * for spec-sized arrays (OpSpecConstantOp) are evaluated for the usual integer operations;
 * an array whose length is anything else counts as unknown (*shared_known false). */
typedef struct spv_footprint {
    uint32_t local[3];
    uint64_t shared_bytes;
    bool shared_known;
} spv_footprint;

static bool spv_eval(uint32_t op, uint64_t a, uint64_t b, uint64_t c, uint64_t *out)
{
    switch (op) {
    case 128: *out = a + b; return true;                         /* IAdd */
    case 130: *out = a - b; return true;                         /* ISub */
    case 132: *out = a * b; return true;                         /* IMul */
    case 134: case 135: if (!b) return false; *out = a / b; return true; /* UDiv, SDiv */
    case 137: case 139: if (!b) return false; *out = a % b; return true; /* UMod, SMod */
    case 194: case 195: *out = a >> b; return true;              /* ShiftRight */
    case 196: *out = a << b; return true;                        /* ShiftLeftLogical */
    case 197: *out = a | b; return true;                         /* BitwiseOr */
    case 199: *out = a & b; return true;                         /* BitwiseAnd */
    case 169: *out = a ? b : c; return true;                     /* Select */
    case 170: *out = a == b; return true;                        /* IEqual */
    case 171: *out = a != b; return true;                        /* INotEqual */
    case 172: case 173: *out = a > b; return true;               /* UGreaterThan, SGreaterThan */
    case 174: case 175: *out = a >= b; return true;
    case 176: case 177: *out = a < b; return true;
    case 178: case 179: *out = a <= b; return true;
    case 113: case 114: *out = a; return true;                   /* UConvert, SConvert */
    default: return false;
    }
}

static bool spv_footprint_read(const vk_shader *s, const uint32_t *spec, uint32_t n_spec, spv_footprint *fp)
{
    const uint32_t *w = s->code;
    size_t n = s->size / 4;
    memset(fp, 0, sizeof *fp);
    fp->local[0] = fp->local[1] = fp->local[2] = 1;
    fp->shared_known = true;
    if (n < 5) return false;
    uint32_t bound = w[3];
    uint64_t *val = calloc(bound, sizeof *val), *size = calloc(bound, sizeof *size);
    int32_t *spec_id = malloc(bound * sizeof *spec_id);
    uint32_t *pointee = calloc(bound, sizeof *pointee);
    uint8_t *known = calloc(bound, 1);
    if (!val || !size || !spec_id || !pointee || !known) {
        free(val), free(size), free(spec_id), free(pointee), free(known);
        return false;
    }
    for (uint32_t i = 0; i < bound; i++) spec_id[i] = -1;
    uint32_t wg_id = 0, local_ids[3] = {0, 0, 0};
    for (size_t i = 5; i < n;) { /* decorations and execution modes come first */
        uint32_t op = w[i] & 0xffff, len = w[i] >> 16;
        if (len == 0 || i + len > n) break;
        if (op == 71 && len >= 4 && w[i + 1] < bound && w[i + 2] == 1 /* SpecId */) spec_id[w[i + 1]] = (int32_t)w[i + 3];
        if (op == 71 && len >= 4 && w[i + 2] == 11 /* BuiltIn */ && w[i + 3] == 25 /* WorkgroupSize */) wg_id = w[i + 1];
        if (op == 16 && len >= 6 && w[i + 2] == 17 /* LocalSize */) memcpy(fp->local, &w[i + 3], 3 * sizeof *w);
        if (op == 331 && len >= 6 && w[i + 2] == 38 /* LocalSizeId */) memcpy(local_ids, &w[i + 3], 3 * sizeof *w);
        i += len;
    }
    for (size_t i = 5; i < n;) {
        uint32_t op = w[i] & 0xffff, len = w[i] >> 16;
        if (len == 0 || i + len > n) break;
        const uint32_t *a = &w[i + 1];
        uint32_t id = len >= 3 ? a[1] : 0; /* the result id of the instructions below but types */
        switch (op) {
        case 20: if (a[0] < bound) size[a[0]] = 4; break;                                  /* OpTypeBool */
        case 21: case 22: if (a[0] < bound) size[a[0]] = a[1] / 8; break;                 /* OpTypeInt, OpTypeFloat */
        case 23: case 24: if (a[0] < bound && a[1] < bound) size[a[0]] = size[a[1]] * a[2]; break; /* vector, matrix */
        case 28: /* OpTypeArray */
            if (a[0] < bound && a[1] < bound && a[2] < bound) {
                size[a[0]] = size[a[1]] * val[a[2]];
                if (!known[a[2]]) known[a[0]] = 2; /* unknown length */
                if (known[a[1]] == 2) known[a[0]] = 2;
            }
            break;
        case 30: /* OpTypeStruct */
            if (a[0] < bound)
                for (uint32_t m = 1; m < len - 1; m++)
                    if (a[m] < bound) {
                        size[a[0]] += size[a[m]];
                        if (known[a[m]] == 2) known[a[0]] = 2;
                    }
            break;
        case 32: if (a[0] < bound && a[2] < bound) pointee[a[0]] = a[2]; break;          /* OpTypePointer */
        case 41: if (id < bound) val[id] = 1, known[id] = 1; break;                       /* OpConstantTrue */
        case 42: if (id < bound) val[id] = 0, known[id] = 1; break;                       /* OpConstantFalse */
        case 48: case 49: /* OpSpecConstantTrue/False: the pipeline's value where it sets one */
            if (id < bound) {
                val[id] = spec_id[id] >= 0 && (uint32_t)spec_id[id] < n_spec ? spec[spec_id[id]] != 0 : op == 48;
                known[id] = 1;
            }
            break;
        case 43: if (id < bound) val[id] = a[2], known[id] = 1; break;                    /* OpConstant */
        case 50: /* OpSpecConstant */
            if (id < bound) {
                val[id] = spec_id[id] >= 0 && (uint32_t)spec_id[id] < n_spec ? spec[spec_id[id]] : a[2];
                known[id] = 1;
            }
            break;
        case 52: /* OpSpecConstantOp */
            if (id < bound && len >= 5) {
                uint64_t x[3] = {0, 0, 0};
                bool ok = true;
                for (uint32_t k = 0; k < 3 && k + 3 < len - 1; k++) {
                    uint32_t o = a[3 + k];
                    ok &= o < bound && known[o] == 1;
                    if (ok) x[k] = val[o];
                }
                uint64_t r;
                if (ok && spv_eval(a[2], x[0], x[1], x[2], &r)) val[id] = (uint32_t)r, known[id] = 1;
            }
            break;
        case 44: case 51: /* OpConstantComposite, OpSpecConstantComposite */
            if (id == wg_id && wg_id && len >= 6)
                for (int k = 0; k < 3; k++)
                    if (a[2 + k] < bound) fp->local[k] = (uint32_t)val[a[2 + k]];
            break;
        case 59: /* OpVariable */
            if (len >= 4 && a[2] == 4 /* Workgroup */ && a[0] < bound && pointee[a[0]] < bound) {
                fp->shared_bytes += size[pointee[a[0]]];
                if (known[pointee[a[0]]] == 2) fp->shared_known = false;
            }
            break;
        }
        i += len;
    }
    if (!wg_id && local_ids[0])
        for (int k = 0; k < 3; k++)
            if (local_ids[k] < bound) fp->local[k] = (uint32_t)val[local_ids[k]];
    free(val), free(size), free(spec_id), free(pointee), free(known);
    return true;
}

vki_status vk_shader_check_limits(const vk_context *vk, const vk_shader *s, const uint32_t *spec, uint32_t n_spec)
{
    const VkPhysicalDeviceLimits *l = &vk->caps.props.limits;
    char where[96] = "";
    if (vk->opts.limits != OPT_AUTO)
        snprintf(where, sizeof where, " under VKINFER_LIMITS=%s", options_enum_name("VKINFER_LIMITS", vk->opts.limits));
    uint32_t texels = (uint32_t)__builtin_popcount(s->texel_bindings), storage = s->bindings - texels;
    if (storage > l->maxPerStageDescriptorStorageBuffers)
        return vki_fail(VKI_ERROR_UNSUPPORTED, "kernel %s binds %u storage buffers; this device allows %u per stage%s "
                        "(maxPerStageDescriptorStorageBuffers)", s->name, storage, l->maxPerStageDescriptorStorageBuffers, where);
    if (texels > l->maxPerStageDescriptorSampledImages)
        return vki_fail(VKI_ERROR_UNSUPPORTED, "kernel %s binds %u texel buffers; this device allows %u per stage%s "
                        "(maxPerStageDescriptorSampledImages)", s->name, texels, l->maxPerStageDescriptorSampledImages, where);
    if (VK_PUSH_BYTES > l->maxPushConstantsSize)
        return vki_fail(VKI_ERROR_UNSUPPORTED, "kernels take %u bytes of push constants; this device allows %u%s (maxPushConstantsSize)",
                        VK_PUSH_BYTES, l->maxPushConstantsSize, where);
    spv_footprint fp;
    if (!spv_footprint_read(s, spec, n_spec, &fp)) return VKI_OK; /* out of host memory: the driver decides */
    uint64_t inv = (uint64_t)fp.local[0] * fp.local[1] * fp.local[2];
    if (inv > l->maxComputeWorkGroupInvocations || fp.local[0] > l->maxComputeWorkGroupSize[0] ||
        fp.local[1] > l->maxComputeWorkGroupSize[1] || fp.local[2] > l->maxComputeWorkGroupSize[2])
        return vki_fail(VKI_ERROR_UNSUPPORTED, "kernel %s runs workgroups of %ux%ux%u invocations; this device allows %u%s "
                        "(maxComputeWorkGroupInvocations, sizes %ux%ux%u)", s->name, fp.local[0], fp.local[1], fp.local[2],
                        l->maxComputeWorkGroupInvocations, where, l->maxComputeWorkGroupSize[0], l->maxComputeWorkGroupSize[1],
                        l->maxComputeWorkGroupSize[2]);
    if (fp.shared_known && fp.shared_bytes > l->maxComputeSharedMemorySize)
        return vki_fail(VKI_ERROR_UNSUPPORTED, "kernel %s uses %llu bytes of shared memory; this device allows %u%s "
                        "(maxComputeSharedMemorySize)", s->name, (unsigned long long)fp.shared_bytes, l->maxComputeSharedMemorySize, where);
    return VKI_OK;
}
