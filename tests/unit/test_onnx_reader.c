/* ONNX reader: a valid model parses; every truncation and thousands of corruptions of it
 * give an error or a parse, never a crash; bad lengths, offsets and external paths (by name
 * or through symbolic links) are rejected with a message. */
#include "../../src/onnx/onnx_reader.h"
#include "check.h"
#include "pbwrite.h"

#include <stdio.h>
#include <sys/stat.h>
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

/* Writes `name` in folder `dir`, its initializer 'w' in external file `location`, and loads it. */
static vki_status load_external_model(const char *dir, const char *name, const char *location, onnx_model *m)
{
    char path[512];
    pbw model = {0};
    make_model(&model, location, 0);
    snprintf(path, sizeof path, "%s/%s", dir, name);
    pbw_save(&model, path);
    return onnx_model_load(path, m);
}

static void write_floats(const char *path, float a, float b, float c, float d)
{
    float v[4] = {a, b, c, d};
    FILE *f = fopen(path, "wb");
    if (f) {
        fwrite(v, 4, 4, f);
        fclose(f);
    }
}

/* 'w' as loaded equals {first, ...}: the file that was meant, not another. */
static bool initializer_starts_with(const onnx_model *m, float first)
{
    const ir_value *w = &m->graph.values[m->graph.nodes[1].inputs[1]];
    float got[4];
    memcpy(got, w->init.data, 16);
    return got[0] == first && got[3] == first + 3;
}

/* External data reached through symbolic links: a link out of the model's folder, of the file or
 * of a folder on the way, is refused naming the tensor and the location; links that stay inside
 * load. The model file itself may be a link: its folder is the folder of the path given. */
static void check_symlinks(void)
{
    char top[] = "/tmp/vkinfer-symlink-XXXXXX";
    if (!mkdtemp(top)) {
        CHECK(0, "mkdtemp: cannot make a folder for the symlink cases");
        return;
    }
    char model_dir[512], outside[512], path[512], target[512];
    snprintf(model_dir, sizeof model_dir, "%s/model", top);
    snprintf(outside, sizeof outside, "%s/outside", top);
    mkdir(model_dir, 0700);
    mkdir(outside, 0700);
    snprintf(path, sizeof path, "%s/secret.bin", outside);
    write_floats(path, 100, 101, 102, 103); /* the right size: only the link can make it fail */
    snprintf(path, sizeof path, "%s/weights.bin", model_dir);
    write_floats(path, 1, 2, 3, 4);
    onnx_model m;

    /* (1) the data file is a link to a file outside (absolute target) */
    snprintf(target, sizeof target, "%s/secret.bin", outside);
    snprintf(path, sizeof path, "%s/file-link.bin", model_dir);
    CHECK(symlink(target, path) == 0, "symlink %s", path);
    vki_status st = load_external_model(model_dir, "file_link.onnx", "file-link.bin", &m);
    CHECK(st == VKI_ERROR_MODEL && strstr(vki_last_error(), "tensor 'w'") &&
              strstr(vki_last_error(), "'file-link.bin' leaves the model's folder"),
          "a data file linked outside the folder: %d %s", (int)st, vki_last_error());
    if (st == VKI_OK) onnx_model_free(&m);

    /* (2) a folder on the way is a link out of the folder (relative target) */
    snprintf(path, sizeof path, "%s/shared", model_dir);
    CHECK(symlink("../outside", path) == 0, "symlink %s", path);
    st = load_external_model(model_dir, "dir_link.onnx", "shared/secret.bin", &m);
    CHECK(st == VKI_ERROR_MODEL && strstr(vki_last_error(), "tensor 'w'") &&
              strstr(vki_last_error(), "'shared/secret.bin' leaves the model's folder"),
          "a linked folder that leaves the model's folder: %d %s", (int)st, vki_last_error());
    if (st == VKI_OK) onnx_model_free(&m);

    /* (3) links that stay inside: a file link, and a folder link to a subfolder */
    snprintf(path, sizeof path, "%s/alias.bin", model_dir);
    CHECK(symlink("weights.bin", path) == 0, "symlink %s", path);
    st = load_external_model(model_dir, "inside.onnx", "alias.bin", &m);
    CHECK(st == VKI_OK, "a data file linked inside the folder: %s", vki_last_error());
    if (st == VKI_OK) {
        CHECK(initializer_starts_with(&m, 1), "values through a link inside the folder");
        onnx_model_free(&m);
    }
    snprintf(path, sizeof path, "%s/data", model_dir);
    mkdir(path, 0700);
    snprintf(path, sizeof path, "%s/data/w.bin", model_dir);
    write_floats(path, 5, 6, 7, 8);
    snprintf(path, sizeof path, "%s/current", model_dir);
    CHECK(symlink("data", path) == 0, "symlink %s", path);
    st = load_external_model(model_dir, "inside_dir.onnx", "current/w.bin", &m);
    CHECK(st == VKI_OK, "a folder linked inside the folder: %s", vki_last_error());
    if (st == VKI_OK) {
        CHECK(initializer_starts_with(&m, 5), "values through a folder link inside the folder");
        onnx_model_free(&m);
    }

    /* (4) the model file is a link from another folder: its data is looked up next to the link,
     * and the model's folder may itself be reached through a link */
    st = load_external_model(model_dir, "plain.onnx", "weights.bin", &m);
    CHECK(st == VKI_OK, "external data without links: %s", vki_last_error());
    if (st == VKI_OK) onnx_model_free(&m);
    snprintf(path, sizeof path, "%s/weights.bin", outside);
    write_floats(path, 9, 10, 11, 12);
    snprintf(target, sizeof target, "%s/plain.onnx", model_dir);
    snprintf(path, sizeof path, "%s/model.onnx", outside);
    CHECK(symlink(target, path) == 0, "symlink %s", path);
    st = onnx_model_load(path, &m);
    CHECK(st == VKI_OK, "a model file linked from another folder: %s", vki_last_error());
    if (st == VKI_OK) {
        CHECK(initializer_starts_with(&m, 9), "data next to the model link, not next to its target");
        onnx_model_free(&m);
    }
    snprintf(path, sizeof path, "%s/model-link", top);
    CHECK(symlink("model", path) == 0, "symlink %s", path);
    snprintf(path, sizeof path, "%s/model-link/plain.onnx", top);
    st = onnx_model_load(path, &m);
    CHECK(st == VKI_OK, "a model folder reached through a link: %s", vki_last_error());
    if (st == VKI_OK) {
        CHECK(initializer_starts_with(&m, 1), "values in a model folder reached through a link");
        onnx_model_free(&m);
    }

    snprintf(path, sizeof path, "rm -rf %s", top);
    if (system(path) != 0) printf("note: could not remove %s\n", top);
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
    check_symlinks();

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
