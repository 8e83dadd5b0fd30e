// One step of binary_chain (binary_chain.glsl, binary_chain_cpu.comp): Add, Sub, Mul or Div of
// floats by its code (src/ops/binary.c's B_ADD..B_DIV, counted from B_ADD).
#ifndef BINARY_COMBINE_GLSL
#define BINARY_COMBINE_GLSL

float combine(uint op, float a, float b)
{
    switch (op) {
    case 0u: return a + b;
    case 1u: return a - b;
    case 2u: return a * b;
    default: return div_rounded(a, b); // as binary.glsl's Div
    }
}

#endif
