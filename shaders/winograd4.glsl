// Winograd F(4x4, 3x3)'s transforms at the points 0, 1, -1, 2, -2 and infinity, shared by
// winograd4_*_cpu.comp and winograd4t_*_cpu.comp (src/ops/conv_winograd.c): bt6 applies B^T
// (the input transform, to a column or row of a 6x6 patch), at6 applies A^T (the output
// transform, to 6 values of each of 4 tiles or channels).
#ifndef WINOGRAD4_GLSL
#define WINOGRAD4_GLSL

// B^T applied to 6 values: rows 4 d0 - 5 d2 + d4, -4 (d1 + d2) + d3 + d4, 4 (d1 - d2) - d3 + d4,
// 2 (d3 - d1) - d2 + d4, 2 (d1 - d3) - d2 + d4, 4 d1 - 5 d3 + d5
void bt6(float d0, float d1, float d2, float d3, float d4, float d5, out float r[6])
{
    r[0] = 4.0 * d0 - 5.0 * d2 + d4;
    r[1] = d3 + d4 - 4.0 * (d1 + d2);
    r[2] = d4 - d3 + 4.0 * (d1 - d2);
    r[3] = d4 - d2 + 2.0 * (d3 - d1);
    r[4] = d4 - d2 + 2.0 * (d1 - d3);
    r[5] = 4.0 * d1 - 5.0 * d3 + d5;
}

// A^T applied to 6 values: m0 + m1 + m2 + m3 + m4, m1 - m2 + 2 (m3 - m4), m1 + m2 + 4 (m3 + m4),
// m1 - m2 + 8 (m3 - m4) + m5
void at6(vec4 m0, vec4 m1, vec4 m2, vec4 m3, vec4 m4, vec4 m5, out vec4 r[4])
{
    vec4 p12 = m1 + m2, d12 = m1 - m2, p34 = m3 + m4, d34 = m3 - m4;
    r[0] = m0 + p12 + p34;
    r[1] = d12 + 2.0 * d34;
    r[2] = p12 + 4.0 * p34;
    r[3] = d12 + 8.0 * d34 + m5;
}

#endif
