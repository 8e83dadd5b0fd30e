/* libFuzzer target: bytes as an ONNX model, through the reader, graph building and planning
 * (shape inference, folding, kernel choice, memory, recording) on the default device; no run.
 * Any crash, leak, hang or sanitizer report is a bug: hostile files must give an error. */
#include "runtime/runtime.h"

#include <stdint.h>
#include <stdlib.h>

static vki_context *ctx;

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (!ctx && vki_context_create(NULL, &ctx) != VKI_OK) abort(); /* the harness needs a device */
    vki_model model = {ctx, {0}};
    if (onnx_model_parse(data, size, &model.onnx) != VKI_OK) return 0;
    vki_session *s = NULL;
    if (vki_session_create(&model, &s) == VKI_OK) vki_session_destroy(s); /* plans when shapes are declared */
    onnx_model_free(&model.onnx);
    return 0;
}
