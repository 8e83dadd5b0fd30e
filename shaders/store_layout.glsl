// Where element (z, m, n) of a kernel's output lies through src/ops/matmul.h's mm_store_layout
// (a Transpose after the kernel stored through, mm_store_transposed; dense: y_a = M N, y_zb = Z,
// y_a2 = 0, y_b = N, y_nb = N, y_c = 0). Include after the push constants, which hold
// y_a, y_zb, y_a2, y_b, y_nb, y_c as `pc`.
uint y_at(uint z, uint m, uint n)
{
    return (z % pc.y_zb) * pc.y_a + (z / pc.y_zb) * pc.y_a2 + m * pc.y_b + (n / pc.y_nb) * pc.y_c + n % pc.y_nb;
}
