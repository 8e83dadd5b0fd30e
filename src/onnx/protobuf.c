/* Protobuf wire-format decoding with every length checked against the buffer. */
#include "protobuf.h"

bool pb_read_varint(pb_reader *r, uint64_t *out)
{
    uint64_t v = 0;
    for (int shift = 0; shift < 64; shift += 7) {
        if (r->p >= r->end) {
            r->error = true;
            return false;
        }
        uint8_t b = *r->p++;
        v |= (uint64_t)(b & 0x7f) << shift;
        if (!(b & 0x80)) {
            *out = v;
            return true;
        }
    }
    r->error = true;
    return false;
}

bool pb_next(pb_reader *r, pb_field *f)
{
    if (r->error || r->p >= r->end) return false;
    uint64_t key;
    if (!pb_read_varint(r, &key)) return false;
    f->number = (uint32_t)(key >> 3);
    f->wire = (enum pb_wire)(key & 7);
    f->data = NULL;
    f->len = 0;
    f->u = 0;
    if (f->number == 0) {
        r->error = true;
        return false;
    }
    switch (f->wire) {
    case PB_VARINT: return pb_read_varint(r, &f->u);
    case PB_FIXED64:
        if (r->end - r->p < 8) break;
        for (int i = 0; i < 8; i++) f->u |= (uint64_t)r->p[i] << (8 * i);
        r->p += 8;
        return true;
    case PB_FIXED32:
        if (r->end - r->p < 4) break;
        for (int i = 0; i < 4; i++) f->u |= (uint64_t)r->p[i] << (8 * i);
        r->p += 4;
        return true;
    case PB_LEN: {
        uint64_t len;
        if (!pb_read_varint(r, &len)) return false;
        if (len > (uint64_t)(r->end - r->p)) break;
        f->data = r->p;
        f->len = (size_t)len;
        r->p += len;
        return true;
    }
    default: break;
    }
    r->error = true;
    return false;
}

size_t pb_packed_count(const pb_field *f, size_t elem_size, bool *ok)
{
    *ok = true;
    if (f->wire != PB_LEN) return 1;
    if (elem_size) {
        if (f->len % elem_size) *ok = false;
        return f->len / elem_size;
    }
    size_t n = 0;
    for (size_t i = 0; i < f->len; i++)
        if (!(f->data[i] & 0x80)) n++;
    if (f->len && (f->data[f->len - 1] & 0x80)) *ok = false;
    return n;
}
