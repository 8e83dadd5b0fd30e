// Where a matrix-product kernel's workgroup works (matmul_tiled, matmul_sgemm,
// matmul_coopmat_f16): its batch z and, under SPLIT_K, its slice of K (gl_WorkGroupID.z counts
// z_count batches a slice), and A's and B's first elements for that batch. Include after the
// kernel's SPLIT_K constant and its Push block (pc: batch_base, z_count, k_slice, bd1, bd2,
// sa0..sa2, sb0..sb2, a_base, b_base; src/ops/matmul_record.c's mm_push).
void mm_workgroup_slice(uint K, out uint z, out uint k_begin, out uint k_end, out uint a_off, out uint b_off)
{
    z = gl_WorkGroupID.z + pc.batch_base;
    k_begin = 0u;
    k_end = K;
    if (SPLIT_K) {
        uint slice = gl_WorkGroupID.z / pc.z_count;
        z = gl_WorkGroupID.z % pc.z_count;
        k_begin = slice * pc.k_slice;
        k_end = min(K, k_begin + pc.k_slice);
    }
    uint i2 = z % pc.bd2, i1 = (z / pc.bd2) % pc.bd1, i0 = z / (pc.bd2 * pc.bd1);
    a_off = pc.a_base + i0 * pc.sa0 + i1 * pc.sa1 + i2 * pc.sa2;
    b_off = pc.b_base + i0 * pc.sb0 + i1 * pc.sb1 + i2 * pc.sb2;
}
