// The activation fused into a kernel's result chosen when the pipeline is made: the matrix
// product and convolution kernels (those made for CPU devices, matmul_sgemm, matmul_tiled,
// matmul_gemv, conv2d_gemm, the depthwise and reference convolutions, the split-K reduces,
// the tensor-core kernels) take its code as a specialization constant, ACT (the code
// op_act_code gives: 0 none, 1 min(max(v, lo), hi) for Relu and Clip, 2 SiLU, 3 Sigmoid, 4
// ELU, 5 Mish, 6 Tanh, 7 erf GELU, 8 tanh GELU), so that only that activation is compiled.
// common.glsl's fused_clamp decodes it from the push constants lo and hi at run time, and:
// - llvmpipe runs both sides of a branch under a lane mask wherever it cannot prove the
//   condition uniform (inside a store loop that stops at N it never can), so every element
//   computed every activation: a 1x1 convolution with a fused ReLU6, 16 -> 96 channels at
//   112x112, 17-27 -> 6 ms;
// - on the H200 matmul_sgemm's 128 x 128 tiles with a bias and a Relu ran the 4096 cube in
//   59 ms (its code and registers for every activation at 64 sums an invocation), 3.73 ms
//   with the activation compiled in.
// fused_clamp is called with constants (lo = +inf, hi the code it reads), which the compilers
// fold, so the formulas stay in one place. Include after common.glsl.
#ifndef FUSED_ACT_GLSL
#define FUSED_ACT_GLSL

float fused_act(uint act, float v, float lo, float hi)
{
    if (act == 0u) return v;
    if (act == 1u) return min(max(v, lo), hi);
    // fused_clamp's codes: 0 erf GELU, 1 tanh GELU, 2 SiLU ... 6 Tanh
    float code = act == 7u ? 0.0 : act == 8u ? 1.0 : float(act);
    return fused_clamp(true, v, uintBitsToFloat(0x7f800000u), code);
}

#endif
