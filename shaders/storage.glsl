// Element access for kernels built in several storages. A variant (a row of shaders/variants.txt,
// e.g. unary_f16) enables GL_EXT_shader_16bit_storage, defines STORAGE_F16 or STORAGE_BF16 and
// includes the kernel's body; the plain kernel defines neither. A kernel declares its tensor
// buffers as `ELEM name[]` and reads and writes them through LOAD and STORE, which give and take
// the 32-bit word form of common.glsl (fp32 bits for floats), so one body serves every storage.
// Arithmetic stays fp32: halves are widened on load and rounded to nearest even on store.
// STORAGE_F64 (float64's bytes) serves only kernels that move elements without computing.
#if defined(STORAGE_F16)
#define ELEM float16_t
#define LOAD(buf, i) floatBitsToUint(float(buf[i]))
#define STORE(buf, i, w) buf[i] = float16_t(uintBitsToFloat(w))
#define STORAGE_DT DT_F16
#elif defined(STORAGE_BF16)
#define ELEM uint16_t
#define LOAD(buf, i) (uint(buf[i]) << 16)
#define STORE(buf, i, w) buf[i] = uint16_t(floatBitsToUint(round_to_dtype(DT_BF16, uintBitsToFloat(w))) >> 16)
#define STORAGE_DT DT_BF16
#elif defined(STORAGE_F64)
// float64's 8 bytes as they lie (GPU_F64), for data-movement kernels only: LOAD gives the raw
// bits (not the word form), which the kernel hands to STORE unchanged. Integer vectors, so no
// shaderFloat64 is needed.
#define ELEM uvec2
#define LOAD(buf, i) (buf[i])
#define STORE(buf, i, w) buf[i] = (w)
#else
#define ELEM uint
#define LOAD(buf, i) (buf[i])
#define STORE(buf, i, w) buf[i] = (w)
#define STORAGE_DT DT_F32
#endif
