/* A bounds-checked reader of the protobuf wire format, enough for ONNX files. */
#ifndef VKI_PROTOBUF_H
#define VKI_PROTOBUF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum pb_wire { PB_VARINT = 0, PB_FIXED64 = 1, PB_LEN = 2, PB_FIXED32 = 5 };

typedef struct pb_reader {
    const uint8_t *p, *end;
    bool error; /* set on truncation or a malformed field; reading stops */
} pb_reader;

typedef struct pb_field {
    uint32_t number;
    enum pb_wire wire;
    uint64_t u;          /* VARINT, FIXED32, FIXED64 */
    const uint8_t *data; /* LEN */
    size_t len;
} pb_field;

static inline pb_reader pb_init(const uint8_t *p, size_t len)
{
    pb_reader r = {p, p ? p + len : p, false}; /* an empty field may have no data pointer: NULL + 0 is undefined */
    return r;
}

/* Next field; false at the end or on error (check r->error). */
bool pb_next(pb_reader *r, pb_field *f);
bool pb_read_varint(pb_reader *r, uint64_t *out);
/* Counts the elements of a repeated scalar field given packed (LEN) or as one element.
 * elem_size 0 means varint. */
size_t pb_packed_count(const pb_field *f, size_t elem_size, bool *ok);

#endif
