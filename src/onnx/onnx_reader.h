/* Reads an ONNX ModelProto (memory-mapped, zero-copy for raw weights) into the graph IR. */
#ifndef VKI_ONNX_READER_H
#define VKI_ONNX_READER_H

#include "../graph/ir.h"

typedef struct onnx_mapping {
    void *addr;
    size_t len;
    struct onnx_mapping *next;
} onnx_mapping;

typedef struct onnx_model {
    ir_graph graph;
    onnx_mapping *maps; /* the model file and external data files; unmapped on free */
    char *dir;          /* the model's folder: external data must stay inside it */
} onnx_model;

vki_status onnx_model_load(const char *path, onnx_model *out);
/* Same, from bytes in memory (the fuzz target; external data is refused). */
vki_status onnx_model_parse(const uint8_t *data, size_t len, onnx_model *out);
void onnx_model_free(onnx_model *m);

/* Parses a serialized TensorProto (as in ONNX test data files). Data is copied into arena. */
vki_status onnx_tensor_parse(const uint8_t *p, size_t len, ir_tensor *t, vki_arena *arena);
vki_status onnx_tensor_file_load(const char *path, ir_tensor *t, vki_arena *arena);
/* Reads a test data file holding a value of `kind` (enum ir_type_kind): a TensorProto, a
 * SequenceProto of tensors or an OptionalProto of a tensor or sequence. *tensors[0..*count)
 * (in arena); *count -1 for an optional that is none. */
vki_status onnx_value_file_load(const char *path, int kind, ir_tensor **tensors, int *count, vki_arena *arena);

#endif
