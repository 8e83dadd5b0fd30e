/* Sequence and optional values through the public API: model input/output kinds, a sequence
 * input through SequenceAt and ConcatFromSequence, an optional input none and set, sequence
 * and optional outputs read back element by element, and the errors (wrong setter, wrong
 * element dtype or shape, a position out of range, a tensor op given
 * a sequence, outputs read the wrong way); a position computed on the GPU, read back. */
#include "vkinfer.h"
#include "check.h"
#include "pbwrite.h"

#include <stdbool.h>
#include <stdio.h>
#include <unistd.h>

/* TypeProto of a float tensor of rank 1 ([N]) wrapped in `wrap`: 0 none, 4 sequence, 9
 * optional, 94 optional sequence. */
static void value_info(pbw *graph, int field, const char *name, int wrap)
{
    pbw vi = {0}, tensor = {0}, shape = {0}, dim = {0}, t = {0};
    pbw_str(&dim, 2, "N");
    pbw_msg(&shape, 1, &dim);
    pbw_int(&tensor, 1, 1);
    pbw_msg(&tensor, 2, &shape);
    pbw_msg(&t, 1, &tensor);
    int layers[2] = {wrap == 94 ? 4 : wrap, wrap == 94 ? 9 : 0};
    for (int k = 0; k < 2; k++) {
        if (!layers[k]) continue;
        pbw inner = {0}, outer = {0};
        pbw_msg(&inner, 1, &t); /* elem_type */
        pbw_msg(&outer, layers[k], &inner);
        t = outer;
    }
    pbw_str(&vi, 1, name);
    pbw_msg(&vi, 2, &t);
    pbw_msg(graph, field, &vi);
}

/* A node with up to two inputs ("" omits one) and an optional INT attribute. */
static void node(pbw *graph, const char *op, const char *a, const char *b, const char *out, const char *attr, int64_t v)
{
    pbw n = {0};
    pbw_str(&n, 1, a);
    if (b) pbw_str(&n, 1, b);
    pbw_str(&n, 2, out);
    pbw_str(&n, 4, op);
    if (attr) {
        pbw at = {0};
        pbw_str(&at, 1, attr);
        pbw_int(&at, 3, (uint64_t)v);
        pbw_int(&at, 20, 2);
        pbw_msg(&n, 5, &at);
    }
    pbw_msg(graph, 1, &n);
}

static void save(pbw *graph, const char *path)
{
    pbw model = {0}, opset = {0};
    pbw_int(&model, 1, 8);
    pbw_int(&opset, 2, 18);
    pbw_msg(&model, 8, &opset);
    pbw_msg(&model, 7, graph);
    pbw_save(&model, path);
}

/* s: sequence of float[N]; o: optional float[N]; pos = 1 (an initializer).
 * at = SequenceAt(s, pos), cat = ConcatFromSequence(s, axis 0), has = OptionalHasElement(o),
 * s2 = Identity(s), o2 = Identity(o), n = SequenceLength(s). */
static void write_main(const char *path)
{
    pbw g = {0};
    int64_t one = 1;
    pbw_initializer(&g, "pos", 7, 1, &one, sizeof one); /* shape [1]: one element, as positions may be */
    node(&g, "SequenceAt", "s", "pos", "at", NULL, 0);
    node(&g, "ConcatFromSequence", "s", NULL, "cat", "axis", 0);
    node(&g, "OptionalHasElement", "o", NULL, "has", NULL, 0);
    node(&g, "Identity", "s", NULL, "s2", NULL, 0);
    node(&g, "Identity", "o", NULL, "o2", NULL, 0);
    node(&g, "SequenceLength", "s", NULL, "n", NULL, 0);
    value_info(&g, 11, "s", 4);
    value_info(&g, 11, "o", 9);
    value_info(&g, 12, "at", 0);
    value_info(&g, 12, "cat", 0);
    int64_t scalar = 0;
    pbw_value_info(&g, 12, "has", 9, &scalar, 0);
    value_info(&g, 12, "s2", 4);
    value_info(&g, 12, "o2", 9);
    pbw_value_info(&g, 12, "n", 7, &scalar, 0);
    save(&g, path);
}

/* at = SequenceAt(s, ArgMax(x)): a position computed on the GPU from x[16], read back. */
static void write_gpu_position(const char *path)
{
    pbw g = {0};
    int64_t dims[1] = {16};
    node(&g, "ArgMax", "x", NULL, "p", "keepdims", 0);
    node(&g, "SequenceAt", "s", "p", "at", NULL, 0);
    value_info(&g, 11, "s", 4);
    pbw_value_info(&g, 11, "x", 1, dims, 1);
    value_info(&g, 12, "at", 0);
    save(&g, path);
}

/* n = SequenceLength(SplitToSequence(x, ArgMax(x))): a length computed on the GPU from data. */
static void write_gpu_length(const char *path)
{
    pbw g = {0};
    int64_t dims[1] = {16}, scalar = 0;
    node(&g, "ArgMax", "x", NULL, "p", "keepdims", 0);
    node(&g, "SplitToSequence", "x", "p", "parts", NULL, 0);
    node(&g, "SequenceLength", "parts", NULL, "n", NULL, 0);
    pbw_value_info(&g, 11, "x", 1, dims, 1);
    pbw_value_info(&g, 12, "n", 7, &scalar, 0);
    save(&g, path);
}

/* y = Relu(s): a tensor op given a sequence. */
static void write_relu_of_sequence(const char *path)
{
    pbw g = {0};
    node(&g, "Relu", "s", NULL, "y", NULL, 0);
    value_info(&g, 11, "s", 4);
    value_info(&g, 12, "y", 0);
    save(&g, path);
}

static bool set_seq(vki_session *s, const char *name, int count, const float *const *elems, const int64_t *lens)
{
    int32_t ranks[8];
    int64_t dims[8 * VKI_MAX_RANK] = {0};
    size_t bytes[8];
    const void *data[8];
    for (int k = 0; k < count; k++) {
        ranks[k] = 1;
        dims[k * VKI_MAX_RANK] = lens[k];
        bytes[k] = (size_t)lens[k] * sizeof(float);
        data[k] = elems[k];
    }
    return vki_session_set_sequence_input(s, name, (uint32_t)count, VKI_DTYPE_FLOAT, ranks, dims, data, bytes) == VKI_OK;
}

static bool same(const float *a, const float *b, int n)
{
    for (int i = 0; i < n; i++)
        if (a[i] != b[i]) return false;
    return true;
}

int main(void)
{
    char dir[] = "/tmp/vkinfer-sequences-XXXXXX";
    if (!mkdtemp(dir)) return 1;
    char main_path[512], gpu_path[512], relu_path[512], len_path[512];
    snprintf(main_path, sizeof main_path, "%s/main.onnx", dir);
    snprintf(gpu_path, sizeof gpu_path, "%s/gpu.onnx", dir);
    snprintf(relu_path, sizeof relu_path, "%s/relu.onnx", dir);
    snprintf(len_path, sizeof len_path, "%s/len.onnx", dir);
    write_gpu_length(len_path);
    write_main(main_path);
    write_gpu_position(gpu_path);
    write_relu_of_sequence(relu_path);

    vki_context *ctx = NULL;
    CHECK(vki_context_create(NULL, &ctx) == VKI_OK, "context: %s", vki_last_error());
    vki_model *m = NULL;
    CHECK(vki_model_load(ctx, main_path, &m) == VKI_OK, "load: %s", vki_last_error());
    vki_tensor_info info;
    const char *names[2] = {"s", "o"};
    int kinds[2] = {VKI_VALUE_SEQUENCE, VKI_VALUE_OPTIONAL};
    for (uint32_t i = 0; i < 2; i++) {
        CHECK(vki_model_input_info(m, i, &info) == VKI_OK && !strcmp(info.name, names[i]) && info.kind == kinds[i] &&
                  info.dtype == VKI_DTYPE_FLOAT && info.rank == 1 && info.dims[0] == -1,
              "input %u: %s kind %d", i, info.name, info.kind);
    }
    int out_kinds[6] = {VKI_VALUE_TENSOR, VKI_VALUE_TENSOR, VKI_VALUE_TENSOR, VKI_VALUE_SEQUENCE, VKI_VALUE_OPTIONAL,
                        VKI_VALUE_TENSOR};
    for (uint32_t i = 0; i < 6; i++)
        CHECK(vki_model_output_info(m, i, &info) == VKI_OK && info.kind == out_kinds[i], "output %u kind %d", i, info.kind);

    vki_session *s = NULL;
    CHECK(vki_session_create(m, &s) == VKI_OK, "session: %s", vki_last_error());
    /* a sequence input must be set; an optional one is none until set */
    CHECK(vki_session_run(s) == VKI_ERROR_INVALID_ARGUMENT && strstr(vki_last_error(), "'s'"), "unset sequence: %s",
          vki_last_error());

    float e0[2] = {1, 2}, e1[3] = {3, 4, 5}, e2[1] = {6};
    const float *elems[3] = {e0, e1, e2};
    int64_t lens[3] = {2, 3, 1};
    CHECK(set_seq(s, "s", 3, elems, lens), "set sequence: %s", vki_last_error());
    CHECK(vki_session_run(s) == VKI_OK, "run: %s", vki_last_error());
    const float *y;
    size_t bytes;
    CHECK(vki_session_get_output(s, 0, &info, (const void **)&y, &bytes) == VKI_OK && info.rank == 1 && info.dims[0] == 3 &&
              bytes == 12 && same(y, e1, 3),
          "SequenceAt(s, 1): %s", vki_last_error());
    float cat[6] = {1, 2, 3, 4, 5, 6};
    CHECK(vki_session_get_output(s, 1, &info, (const void **)&y, &bytes) == VKI_OK && info.dims[0] == 6 && same(y, cat, 6),
          "ConcatFromSequence: %s", vki_last_error());
    const uint8_t *has;
    CHECK(vki_session_get_output(s, 2, &info, (const void **)&has, &bytes) == VKI_OK && bytes == 1 && *has == 0,
          "an unset optional is none: %s", vki_last_error());
    int32_t count = 0;
    CHECK(vki_session_get_output_count(s, 3, &count) == VKI_OK && count == 3, "sequence output count %d", count);
    for (int k = 0; k < 3; k++)
        CHECK(vki_session_get_output_element(s, 3, (uint32_t)k, &info, (const void **)&y, &bytes) == VKI_OK &&
                  info.kind == VKI_VALUE_SEQUENCE && info.rank == 1 && info.dims[0] == lens[k] && same(y, elems[k], (int)lens[k]),
              "sequence output element %d: %s", k, vki_last_error());
    CHECK(vki_session_get_output_element(s, 3, 3, &info, (const void **)&y, &bytes) == VKI_ERROR_INVALID_ARGUMENT,
          "element 3 of 3: %s", vki_last_error());
    CHECK(vki_session_get_output(s, 3, &info, (const void **)&y, &bytes) == VKI_ERROR_INVALID_ARGUMENT &&
              strstr(vki_last_error(), "vki_session_get_output_element"),
          "get_output of a sequence: %s", vki_last_error());
    CHECK(vki_session_get_output_count(s, 4, &count) == VKI_OK && count == -1, "none optional output count %d", count);
    CHECK(vki_session_get_output(s, 4, &info, (const void **)&y, &bytes) == VKI_ERROR_INVALID_ARGUMENT &&
              strstr(vki_last_error(), "none"),
          "get_output of a none: %s", vki_last_error());
    const int64_t *n64;
    CHECK(vki_session_get_output(s, 5, &info, (const void **)&n64, &bytes) == VKI_OK && info.dtype == VKI_DTYPE_INT64 &&
              *n64 == 3,
          "SequenceLength: %s", vki_last_error());

    /* the optional set: present; and none again */
    float o[4] = {7, 8, 9, 10};
    int64_t odims[1] = {4};
    CHECK(vki_session_set_input(s, "o", VKI_DTYPE_FLOAT, odims, 1, o, sizeof o) == VKI_OK, "set optional: %s", vki_last_error());
    CHECK(vki_session_run(s) == VKI_OK, "run: %s", vki_last_error());
    CHECK(vki_session_get_output(s, 2, &info, (const void **)&has, &bytes) == VKI_OK && *has == 1, "optional set: has");
    CHECK(vki_session_get_output_count(s, 4, &count) == VKI_OK && count == 1, "optional output count %d", count);
    CHECK(vki_session_get_output(s, 4, &info, (const void **)&y, &bytes) == VKI_OK && info.kind == VKI_VALUE_OPTIONAL &&
              info.dims[0] == 4 && same(y, o, 4),
          "optional output: %s", vki_last_error());
    CHECK(vki_session_set_input_none(s, "o") == VKI_OK && vki_session_run(s) == VKI_OK, "none again: %s", vki_last_error());
    CHECK(vki_session_get_output(s, 2, &info, (const void **)&has, &bytes) == VKI_OK && *has == 0, "none again: has");

    /* an empty sequence: SequenceAt and ConcatFromSequence cannot plan; the message names them */
    CHECK(set_seq(s, "s", 0, NULL, NULL), "empty sequence: %s", vki_last_error());
    CHECK(vki_session_run(s) == VKI_ERROR_SHAPE && strstr(vki_last_error(), "SequenceAt") &&
              strstr(vki_last_error(), "position 1"),
          "position out of range: %s", vki_last_error());
    const float *one_elem[1] = {e0};
    CHECK(set_seq(s, "s", 1, one_elem, lens), "one element: %s", vki_last_error());
    CHECK(vki_session_run(s) == VKI_ERROR_SHAPE && strstr(vki_last_error(), "outside [-1, 0]"),
          "position 1 of 1: %s", vki_last_error());

    /* setters that do not fit the input */
    CHECK(vki_session_set_input(s, "s", VKI_DTYPE_FLOAT, odims, 1, o, sizeof o) == VKI_ERROR_INVALID_ARGUMENT &&
              strstr(vki_last_error(), "vki_session_set_sequence_input"),
          "set_input on a sequence: %s", vki_last_error());
    CHECK(!set_seq(s, "o", 1, one_elem, lens) && strstr(vki_last_error(), "not a sequence"), "a sequence for an optional tensor: %s",
          vki_last_error());
    CHECK(vki_session_set_input_none(s, "s") == VKI_ERROR_INVALID_ARGUMENT && strstr(vki_last_error(), "not optional"),
          "none for a sequence: %s", vki_last_error());
    int32_t r2[1] = {2};
    int64_t d2[VKI_MAX_RANK] = {1, 2};
    const void *dp[1] = {e0};
    size_t b2[1] = {8};
    CHECK(vki_session_set_sequence_input(s, "s", 1, VKI_DTYPE_FLOAT, r2, d2, dp, b2) == VKI_ERROR_SHAPE,
          "element of rank 2 for [N]: %s", vki_last_error());
    int32_t r1[1] = {1};
    int64_t d1[VKI_MAX_RANK] = {2};
    CHECK(vki_session_set_sequence_input(s, "s", 1, VKI_DTYPE_INT32, r1, d1, dp, b2) == VKI_ERROR_SHAPE,
          "int32 elements for float: %s", vki_last_error());
    size_t b3[1] = {12};
    CHECK(vki_session_set_sequence_input(s, "s", 1, VKI_DTYPE_FLOAT, r1, d1, dp, b3) == VKI_ERROR_SHAPE &&
              strstr(vki_last_error(), "element 0"),
          "wrong byte count: %s", vki_last_error());
    vki_session_destroy(s);
    vki_model_destroy(m);

    /* a position computed on the GPU from data: read back, the plan made for the position
     * found (planned again when it changes); one past the end is a clear error */
    CHECK(vki_model_load(ctx, gpu_path, &m) == VKI_OK, "load: %s", vki_last_error());
    CHECK(vki_session_create(m, &s) == VKI_OK, "session: %s", vki_last_error());
    float x[16] = {0};
    int64_t xd[1] = {16};
    const int picks[4] = {1, 2, 0, 1};
    for (int r = 0; r < 4; r++) {
        memset(x, 0, sizeof x);
        x[picks[r]] = 1; /* ArgMax(x) = picks[r] */
        CHECK(set_seq(s, "s", 3, elems, lens) && vki_session_set_input(s, "x", VKI_DTYPE_FLOAT, xd, 1, x, sizeof x) == VKI_OK,
              "inputs: %s", vki_last_error());
        CHECK(vki_session_run(s) == VKI_OK && vki_session_get_output(s, 0, &info, (const void **)&y, &bytes) == VKI_OK &&
                  info.rank == 1 && info.dims[0] == lens[picks[r]] && same(y, elems[picks[r]], (int)lens[picks[r]]),
              "SequenceAt(s, ArgMax(x) = %d): %s", picks[r], vki_last_error());
    }
    memset(x, 0, sizeof x);
    x[5] = 1; /* position 5 of a sequence of 3 */
    CHECK(vki_session_set_input(s, "x", VKI_DTYPE_FLOAT, xd, 1, x, sizeof x) == VKI_OK, "inputs: %s", vki_last_error());
    CHECK(vki_session_run(s) == VKI_ERROR_UNSUPPORTED && strstr(vki_last_error(), "SequenceAt") &&
              strstr(vki_last_error(), "outside the range"),
          "GPU position out of range: %s", vki_last_error());
    vki_session_destroy(s);
    vki_model_destroy(m);

    /* a sequence whose length depends on data: x's shape is declared, so the session plans
     * when it is created and fails there */
    CHECK(vki_model_load(ctx, len_path, &m) == VKI_OK, "load: %s", vki_last_error());
    s = NULL;
    CHECK(vki_session_create(m, &s) == VKI_ERROR_UNSUPPORTED && !s && strstr(vki_last_error(), "SplitToSequence") &&
              strstr(vki_last_error(), "known at plan time"),
          "GPU split: %s", vki_last_error());
    vki_model_destroy(m);

    /* a tensor op given a sequence */
    CHECK(vki_model_load(ctx, relu_path, &m) == VKI_OK, "load: %s", vki_last_error());
    CHECK(vki_session_create(m, &s) == VKI_OK, "session: %s", vki_last_error());
    CHECK(set_seq(s, "s", 3, elems, lens), "inputs: %s", vki_last_error());
    CHECK(vki_session_run(s) == VKI_ERROR_UNSUPPORTED && strstr(vki_last_error(), "Relu takes tensors"),
          "Relu of a sequence: %s", vki_last_error());
    vki_session_destroy(s);
    vki_model_destroy(m);
    vki_context_destroy(ctx);
    unlink(main_path);
    unlink(gpu_path);
    unlink(relu_path);
    unlink(len_path);
    rmdir(dir);
    printf("%d passed, %d failed\n", passes, failures);
    return failures ? 1 : 0;
}
