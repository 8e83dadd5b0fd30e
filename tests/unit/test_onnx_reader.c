/* ONNX reader: a valid model parses; every truncation and thousands of corruptions of it
 * give an error or a parse, never a crash; bad lengths, offsets and external paths are
 * rejected with a message. */
#include "../../src/onnx/onnx_reader.h"
#include "check.h"
#include "pbwrite.h"

#include <stdio.h>
#include <unistd.h>


static void make_model(pbw *model, const char *init_location, size_t raw_bytes)
{
    pbw graph = {0}, init = {0};
    int64_t dims[2] = {-1, 4}, wdims[1] = {4};
    pbw_node(&graph, "Relu", "x", "h");
    pbw node = {0};
    pbw_str(&node, 1, "h");
    pbw_str(&node, 1, "w");
    pbw_str(&node, 2, "y");
    pbw_str(&node, 4, "Add");
    pbw_str(&node, 3, "add0");
    pbw attr = {0};
    pbw_str(&attr, 1, "note");
    pbw_int(&attr, 20, 2);
    pbw_int(&attr, 3, 7);
    pbw_msg(&node, 5, &attr);
    pbw_msg(&graph, 1, &node);
    pbw_int(&init, 1, (uint64_t)wdims[0]);
    pbw_int(&init, 2, 1);
    pbw_str(&init, 8, "w");
    if (init_location) {
        pbw entry = {0};
        pbw_str(&entry, 1, "location");
        pbw_str(&entry, 2, init_location);
        pbw_msg(&init, 13, &entry);
        pbw_int(&init, 14, 1);
    } else {
        float w[8] = {1, 2, 3, 4, 5, 6, 7, 8};
        pbw_len(&init, 9, w, raw_bytes);
    }
    pbw_msg(&graph, 5, &init);
    pbw_value_info(&graph, 11, "x", 1, dims, 2);
    pbw_value_info(&graph, 12, "y", 1, dims, 2);
    pbw_model(model, &graph);
}

int main(void)
{
    pbw model = {0};
    make_model(&model, NULL, 16);
    onnx_model m;
    vki_status st = onnx_model_parse(model.data, model.len, &m);
    CHECK(st == VKI_OK, "valid model: %s", vki_last_error());
    if (st == VKI_OK) {
        const ir_graph *g = &m.graph;
        CHECK(g->n_nodes == 2 && g->n_inputs == 1 && g->n_outputs == 1, "counts %d %d %d", g->n_nodes, g->n_inputs, g->n_outputs);
        CHECK(g->opset == 13, "opset %lld", (long long)g->opset);
        const ir_value *x = &g->values[g->inputs[0]];
        CHECK(x->rank == 2 && x->dims[0] == -1 && x->dim_names[0] && !strcmp(x->dim_names[0], "N") && x->dims[1] == 4,
              "input x shape");
        CHECK(ir_attr_int(&g->nodes[1], "note", 0) == 7, "attribute");
        CHECK(!strcmp(g->nodes[0].name, "Relu_0"), "unnamed node named %s", g->nodes[0].name);
        /* zero copy: the initializer points into the buffer we gave */
        int w = g->nodes[1].inputs[1];
        const uint8_t *p = g->values[w].init.data;
        CHECK(p >= model.data && p < model.data + model.len, "initializer data is not copied");
        onnx_model_free(&m);
    }

    /* every truncation */
    int truncated_errors = 0;
    for (size_t n = 0; n < model.len; n++) {
        if (onnx_model_parse(model.data, n, &m) == VKI_OK) onnx_model_free(&m);
        else truncated_errors++;
    }
    CHECK(truncated_errors > (int)model.len / 2, "most truncations are errors (%d of %zu)", truncated_errors, model.len);

    /* seeded corruptions: one to four random bytes changed */
    uint8_t *copy = malloc(model.len);
    uint32_t seed = 12345;
    for (int trial = 0; trial < 20000; trial++) {
        memcpy(copy, model.data, model.len);
        int flips = 1 + trial % 4;
        for (int f = 0; f < flips; f++) {
            seed = seed * 1664525u + 1013904223u;
            copy[(seed >> 8) % model.len] = (uint8_t)(seed >> 24);
        }
        if (onnx_model_parse(copy, model.len, &m) == VKI_OK) onnx_model_free(&m);
    }
    free(copy);
    passes++; /* reaching here means no corruption crashed the reader */

    /* raw_data whose size disagrees with the dims */
    pbw bad = {0};
    make_model(&bad, NULL, 12);
    st = onnx_model_parse(bad.data, bad.len, &m);
    CHECK(st == VKI_ERROR_MODEL && strstr(vki_last_error(), "raw_data"), "short raw_data: %s", vki_last_error());
    free(bad.data);

    /* external data that leaves the model's folder, and external data done right */
    char dir[] = "/tmp/vkinfer-reader-XXXXXX";
    if (mkdtemp(dir)) {
        char path[512];
        pbw ext = {0};
        make_model(&ext, "../secret.bin", 0);
        snprintf(path, sizeof path, "%s/escape.onnx", dir);
        pbw_save(&ext, path);
        st = onnx_model_load(path, &m);
        CHECK(st == VKI_ERROR_MODEL && strstr(vki_last_error(), "leaves the model's folder"), "escape: %s", vki_last_error());

        pbw good = {0};
        make_model(&good, "weights.bin", 0);
        snprintf(path, sizeof path, "%s/good.onnx", dir);
        pbw_save(&good, path);
        snprintf(path, sizeof path, "%s/weights.bin", dir);
        FILE *f = fopen(path, "wb");
        float wv[4] = {1, 2, 3, 4};
        fwrite(wv, 4, 3, f); /* 12 bytes: too short */
        fclose(f);
        snprintf(path, sizeof path, "%s/good.onnx", dir);
        st = onnx_model_load(path, &m);
        CHECK(st == VKI_ERROR_MODEL, "short external file: %s", vki_last_error());
        snprintf(path, sizeof path, "%s/weights.bin", dir);
        f = fopen(path, "wb");
        fwrite(wv, 4, 4, f);
        fclose(f);
        snprintf(path, sizeof path, "%s/good.onnx", dir);
        st = onnx_model_load(path, &m);
        CHECK(st == VKI_OK, "external data: %s", vki_last_error());
        if (st == VKI_OK) {
            const ir_value *w = &m.graph.values[m.graph.nodes[1].inputs[1]];
            float got[4];
            memcpy(got, w->init.data, 16);
            CHECK(got[3] == 4.0f, "external data values");
            onnx_model_free(&m);
        }
        st = onnx_model_load("/nonexistent/model.onnx", &m);
        CHECK(st == VKI_ERROR_IO, "missing file: %s", vki_last_error());
        snprintf(path, sizeof path, "rm -rf %s", dir);
        if (system(path) != 0) printf("note: could not remove %s\n", dir);
    }
    free(model.data);

    /* found by fuzzing: a TensorProto whose dims promise 2^40 floats but which holds one must be
     * refused before anything is allocated for it (it used to ask for gigabytes) */
    {
        pbw t = {0};
        float one = 1.0f;
        pbw_int(&t, 1, (uint64_t)1 << 20);
        pbw_int(&t, 1, (uint64_t)1 << 20);
        pbw_int(&t, 2, 1);
        pbw_len(&t, 4, &one, sizeof one); /* float_data, packed */
        vki_arena arena = {0};
        ir_tensor tensor;
        st = onnx_tensor_parse(t.data, t.len, &tensor, &arena);
        CHECK(st == VKI_ERROR_MODEL && strstr(vki_last_error(), "fewer data elements"),
              "a tensor with fewer data elements than its dims: %s", vki_last_error());
        arena_free(&arena);
        free(t.data);
    }
    printf("%d passed, %d failed\n", passes, failures);
    return failures ? 1 : 0;
}
