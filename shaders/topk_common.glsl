// TopK's ordering, shared by topk_bitonic.comp and topk_select.comp: every element becomes an
// unsigned key whose ascending order puts the wanted elements first (largest or smallest);
// ties go to the lower index, so (key, index) pairs are unique and totally ordered.

uint order_key(uint dt, bool largest, uint bits)
{
    uint k;
    if (dt_is_float(dt)) {
        if (bits == 0x80000000u) bits = 0u; // -0.0 ties with +0.0
        k = (bits & 0x80000000u) != 0u ? ~bits : bits | 0x80000000u;
    } else {
        k = bits ^ 0x80000000u;
    }
    return largest ? ~k : k;
}

bool pair_less(uint ka, uint ia, uint kb, uint ib)
{
    return ka < kb || (ka == kb && ia < ib);
}
