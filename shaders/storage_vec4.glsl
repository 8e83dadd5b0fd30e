// Four consecutive elements at a time, for kernels whose loads are vec4s (conv2d_cpu_packed,
// conv2d_cpu_1x1): an `ELEM4 name[]` buffer is read with LOAD4 (a vec4) and written with STORE4,
// in the storage that storage.glsl's STORAGE_F16 / STORAGE_BF16 picked (32-bit words otherwise).
#if defined(STORAGE_F16)
#define ELEM4 f16vec4
#define LOAD4(buf, i) vec4(buf[i])
#define STORE4(buf, i, v) buf[i] = f16vec4(v)
#elif defined(STORAGE_BF16)
#define ELEM4 u16vec4
#define LOAD4(buf, i) uintBitsToFloat(uvec4(buf[i]) << 16)
#define STORE4(buf, i, v) buf[i] = u16vec4(floatBitsToUint(round_bf16_vec4(v)) >> 16)
vec4 round_bf16_vec4(vec4 v)
{
    for (int l = 0; l < 4; l++) v[l] = round_to_dtype(DT_BF16, v[l]);
    return v;
}
#else
#define ELEM4 uvec4
#define LOAD4(buf, i) uintBitsToFloat(buf[i])
#define STORE4(buf, i, v) buf[i] = floatBitsToUint(v)
#endif
