/* libFuzzer target: bytes as a serialized TensorProto (ONNX test data files, initializers). */
#include "onnx/onnx_reader.h"

#include <stdint.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    vki_arena arena = {0};
    ir_tensor t;
    onnx_tensor_parse(data, size, &t, &arena);
    arena_free(&arena);
    return 0;
}
