#version 450
// Converts a tensor between two storages of the same dtype (src/plan/op_dispatch.c,
// plan_record_convert): the 32-bit word form every kernel can read, and the packed 16- and 8-bit
// storages, and float64's 8 bytes (GPU_F64). Both sides are read and written as 32-bit words,
// one destination word per invocation, so no 8- or 16-bit storage feature is needed and no two
// invocations share a word; float64 is converted with integer operations, so neither is
// shaderFloat64.
layout(local_size_x_id = 0) in;
layout(constant_id = 1) const uint FROM = 0u;
layout(constant_id = 2) const uint TO = 0u;
#include "common.glsl"
#include "f64_bits.glsl"

// keep in step with gpu_storage in src/util/util.h
#define ST_W32 0u
#define ST_F16 1u
#define ST_BF16 2u
#define ST_I16 3u
#define ST_U16 4u
#define ST_I8 5u
#define ST_U8 6u
#define ST_BOOL 7u
#define ST_F64 8u

layout(std430, binding = 0) readonly buffer Src { uint src[]; };
layout(std430, binding = 1) writeonly buffer Dst { uint dst[]; };
layout(push_constant) uniform Push { uint count; } pc;

uint elem_bits(uint st) { return st == ST_F64 ? 64u : st == ST_W32 ? 32u : st <= ST_U16 ? 16u : 8u; }

// Element i of the source in the word form (fp32 bits for floats, int32 for integers).
uint load_word(uint i)
{
    if (FROM == ST_F64) return f64_to_f32_bits(src[2u * i], src[2u * i + 1u]);
    uint bits = elem_bits(FROM);
    if (bits == 32u) return src[i];
    uint per = 32u / bits, shift = (i % per) * bits;
    uint raw = (src[i / per] >> shift) & ((1u << bits) - 1u);
    switch (FROM) {
    case ST_F16: return floatBitsToUint(unpackHalf2x16(raw).x);
    case ST_BF16: return raw << 16;
    case ST_I16: return uint(int(raw << 16) >> 16);
    case ST_I8: return uint(int(raw << 24) >> 24);
    case ST_BOOL: return raw != 0u ? 1u : 0u;
    default: return raw; // U16, U8
    }
}

// A word-form element in the destination storage's bits.
uint store_bits(uint w)
{
    switch (TO) {
    case ST_F16: {
        float v = uintBitsToFloat(w);
        return isnan(v) ? 0x7e00u | ((w >> 16) & 0x8000u) : packHalf2x16(vec2(v, 0.0)) & 0xffffu;
    }
    case ST_BF16: return floatBitsToUint(round_to_dtype(DT_BF16, uintBitsToFloat(w))) >> 16;
    case ST_BOOL: return w != 0u ? 1u : 0u;
    default: return w & ((1u << elem_bits(TO)) - 1u); // integers wrap, as the dtype does
    }
}

void main()
{
    uint word = linear_id();
    if (TO == ST_F64) { // two destination words per element: this one's half
        if (word / 2u >= pc.count) return;
        uvec2 d = f32_to_f64_bits(load_word(word / 2u));
        dst[word] = (word & 1u) == 0u ? d.x : d.y;
        return;
    }
    uint bits = elem_bits(TO), per = 32u / bits;
    if (word * per >= pc.count) return;
    if (bits == 32u) {
        dst[word] = load_word(word);
        return;
    }
    uint out_word = 0u;
    for (uint k = 0u; k < per; k++) {
        uint i = word * per + k;
        if (i < pc.count) out_word |= store_bits(load_word(i)) << (k * bits);
    }
    dst[word] = out_word;
}
