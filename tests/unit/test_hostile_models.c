/* Hostile models end to end: real ONNX test models with one to four bytes changed (seeded)
 * go through load, session creation (which plans) and a run on zero inputs. Each step may
 * fail with a status and a message; none may crash, hang or make the Vulkan validation layer
 * speak (VKI_ERROR_VALIDATION counts as a failure: it means a bad command was recorded).
 *
 *   test_hostile_models TESTDATA_DIR TRIALS_PER_MODEL */
#include "vkinfer.h"
#include "check.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char *models[] = {
    "node/test_conv_with_strides_padding", "node/test_gemm_all_attributes", "node/test_reshape_negative_dim",
    "node/test_slice", "node/test_maxpool_2d_pads", "node/test_gather_0", "node/test_softmax_axis_1",
    "node/test_reduce_mean_keepdims_random", "node/test_concat_3d_axis_1", "node/test_resize_upsample_scales_linear",
    "node/test_top_k", "node/test_layer_normalization_4d_axis1", "node/test_convtranspose_pads", "node/test_matmul_4d",
    "node/test_add_bcast", "node/test_transpose_all_permutations_3", "pytorch-converted/test_Conv2d_depthwise_strided",
    "pytorch-operator/test_operator_index",
};

static unsigned char *read_all(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    unsigned char *buf = malloc(n > 0 ? (size_t)n : 1);
    if (buf && n > 0 && fread(buf, 1, (size_t)n, f) != (size_t)n) {
        free(buf);
        buf = NULL;
    }
    fclose(f);
    *len = n > 0 ? (size_t)n : 0;
    return buf;
}

/* Zero inputs of the declared shapes (symbolic dims = 1), if they are small. */
static void run_on_zeros(vki_model *m, vki_session *s, int *validation_errors, int *ran)
{
    for (uint32_t i = 0; i < vki_model_input_count(m); i++) {
        vki_tensor_info t;
        if (vki_model_input_info(m, i, &t) != VKI_OK || t.rank < 0) return;
        int64_t dims[VKI_MAX_RANK], n = 1;
        for (int d = 0; d < t.rank; d++) {
            dims[d] = t.dims[d] < 0 ? 1 : t.dims[d];
            if (dims[d] > 4096) return;
            n *= dims[d];
            if (n > (1 << 22)) return;
        }
        size_t bytes = (size_t)n * vki_dtype_size(t.dtype);
        void *zeros = calloc(bytes ? bytes : 1, 1);
        vki_status st = zeros ? vki_session_set_input(s, t.name, t.dtype, dims, t.rank, zeros, bytes) : VKI_ERROR_OUT_OF_MEMORY;
        free(zeros);
        if (st == VKI_ERROR_VALIDATION) (*validation_errors)++;
        if (st != VKI_OK) return;
    }
    vki_status st = vki_session_run(s);
    if (st == VKI_ERROR_VALIDATION) {
        (*validation_errors)++;
        printf("validation: %s\n", vki_last_error());
    }
    if (st == VKI_OK) (*ran)++;
}

int main(int argc, char **argv)
{
    if (argc < 3) {
        fprintf(stderr, "usage: test_hostile_models TESTDATA_DIR TRIALS_PER_MODEL\n");
        return 2;
    }
    int trials = atoi(argv[2]);
    vki_context *ctx;
    if (vki_context_create(NULL, &ctx) != VKI_OK) {
        printf("no device: %s\n0 passed, 1 failed\n", vki_last_error());
        return 1;
    }
    char tmp[] = "/tmp/vkinfer-hostile-XXXXXX";
    if (!mkdtemp(tmp)) return 1;
    char path[4096], out[4200];
    snprintf(out, sizeof out, "%s/model.onnx", tmp);
    uint32_t seed = 20261129;
    int loaded = 0, planned = 0, ran = 0, validation_errors = 0, total = 0;
    for (size_t k = 0; k < sizeof models / sizeof *models; k++) {
        snprintf(path, sizeof path, "%s/%s/model.onnx", argv[1], models[k]);
        size_t len;
        unsigned char *orig = read_all(path, &len);
        CHECK(orig && len > 0, "read %s", path);
        if (!orig || !len) continue;
        unsigned char *copy = malloc(len);
        for (int t = 0; t < trials; t++) {
            memcpy(copy, orig, len);
            for (int f = 0; f <= t % 4; f++) {
                seed = seed * 1664525u + 1013904223u;
                copy[(seed >> 8) % len] = (unsigned char)(seed >> 24);
            }
            FILE *fp = fopen(out, "wb");
            fwrite(copy, 1, len, fp);
            fclose(fp);
            total++;
            vki_model *m;
            if (vki_model_load(ctx, out, &m) != VKI_OK) continue;
            loaded++;
            vki_session *s;
            vki_status st = vki_session_create(m, &s);
            if (st == VKI_ERROR_VALIDATION) {
                validation_errors++;
                printf("validation (%s, trial %d): %s\n", models[k], t, vki_last_error());
            }
            if (st == VKI_OK) {
                planned++;
                run_on_zeros(m, s, &validation_errors, &ran);
                vki_session_destroy(s);
            }
            vki_model_destroy(m);
        }
        free(copy);
        free(orig);
    }
    unlink(out);
    rmdir(tmp);
    vki_context_destroy(ctx);
    printf("%d corrupted models: %d loaded, %d planned, %d ran; none crashed\n", total, loaded, planned, ran);
    CHECK(validation_errors == 0, "%d validation-layer errors on corrupted models", validation_errors);
    CHECK(total > 0 && loaded > 0 && ran > 0, "the corruptions exercise every stage");
    printf("%d passed, %d failed\n", passes, failures);
    return failures ? 1 : 0;
}
