// Where the row kernels (norm_rows.glsl, norm_rows_cpu.comp, norm_rows_cpu_vec4.comp) find a row
// and its elements, from STRIDED and the push constants' keep_* and red_* strides; included
// after the push constants.

// row r at (r / keep_inner) * keep_stride_outer + (r % keep_inner) * keep_stride_inner
uint kept_row_start(uint row)
{
    return (row / pc.keep_inner) * pc.keep_stride_outer + (row % pc.keep_inner) * pc.keep_stride_inner;
}

// where Y's and R's row starts (X's too, unless STRIDED is 2)
uint row_start(uint row)
{
    return STRIDED == 1u ? kept_row_start(row) : row * pc.len;
}

// where X's row starts
uint x_row_start(uint row)
{
    return STRIDED == 0u ? row * pc.len : kept_row_start(row);
}

uint element(uint j)
{
    if (STRIDED != 1u) return j;
    return (j / pc.red_inner) * pc.red_stride_outer + (j % pc.red_inner) * pc.red_stride_inner;
}
