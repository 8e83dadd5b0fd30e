/* Runs one ONNX backend test folder (model.onnx + test_data_set_N/{input,output}_K.pb)
 * through vkinfer and compares every output with ONNX's tolerances (rtol 1e-3, atol 1e-7,
 * NaN equals NaN; integers and bool exactly).
 *
 *   conformance_runner DIR [--listed 0|1] [--name SUITE/TEST] [--results DIR] [--list FILE]
 *
 * Exit 0: pass. Exit 1: a failure of a test on the must-pass list (or any test with
 * --listed 1). Exit 77: a test not on the list that does not pass yet: ctest shows it as
 * skipped, with the reason printed. --results writes one line per test for the summary
 * (RESULTS/SUITE.TEST), and the reason of a failure to RESULTS-reasons/SUITE.TEST. --list
 * names the must-pass list in messages (default tests/conformance/passing.txt). --listed 2: a
 * test on no list, which must pass (and then belongs on the must-pass list). */
#include "vkinfer.h"

#include "../../src/onnx/onnx_reader.h"

#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

static int compare(const ir_tensor *want, vki_dtype dtype, const int64_t *dims, int rank, const void *got, char *why, size_t why_size)
{
    char a[256], b[256];
    if (want->dtype != dtype) {
        snprintf(why, why_size, "dtype %s, expected %s", vki_dtype_name(dtype), vki_dtype_name(want->dtype));
        return 0;
    }
    bool same = want->rank == rank;
    for (int d = 0; same && d < rank; d++) same = want->dims[d] == dims[d];
    if (!same) {
        snprintf(why, why_size, "shape %s, expected %s", shape_str(dims, rank, a, sizeof a), shape_str(want->dims, want->rank, b, sizeof b));
        return 0;
    }
    size_t n = (size_t)shape_numel(dims, rank);
    for (size_t i = 0; i < n; i++) {
        if (dtype_is_float(dtype) || dtype == VKI_DTYPE_DOUBLE) {
            double w = host_read_f64(dtype, want->data, i), g = host_read_f64(dtype, got, i);
            if (isnan(w) && isnan(g)) continue;
            if (w == g) continue;
            if (!(fabs(w - g) <= 1e-7 + 1e-3 * fabs(w))) {
                snprintf(why, why_size, "element %zu is %.9g, expected %.9g", i, g, w);
                return 0;
            }
        } else if (host_read_i64(dtype, want->data, i) != host_read_i64(dtype, got, i)) {
            snprintf(why, why_size, "element %zu is %lld, expected %lld", i, (long long)host_read_i64(dtype, got, i),
                     (long long)host_read_i64(dtype, want->data, i));
            return 0;
        }
    }
    return 1;
}

/* Runs every test_data_set of dir. Returns 1 on pass; else writes why. */
static int run_test(vki_context *ctx, const char *dir, char *why, size_t why_size)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/model.onnx", dir);
    vki_model *model;
    if (vki_model_load(ctx, path, &model) != VKI_OK) {
        snprintf(why, why_size, "load: %s", vki_last_error());
        return 0;
    }
    vki_session *s;
    if (vki_session_create(model, &s) != VKI_OK) {
        snprintf(why, why_size, "session: %s", vki_last_error());
        vki_model_destroy(model);
        return 0;
    }
    int ok = 1, sets = 0;
    for (int set = 0; ok; set++) {
        vki_arena arena = {0};
        snprintf(path, sizeof path, "%s/test_data_set_%d/input_0.pb", dir, set);
        FILE *probe = fopen(path, "rb");
        snprintf(path, sizeof path, "%s/test_data_set_%d/output_0.pb", dir, set);
        FILE *probe2 = fopen(path, "rb");
        if (probe) fclose(probe);
        if (probe2) fclose(probe2);
        if (!probe && !probe2) break;
        sets++;
        for (uint32_t i = 0; ok && i < vki_model_input_count(model); i++) {
            vki_tensor_info info;
            vki_model_input_info(model, i, &info);
            snprintf(path, sizeof path, "%s/test_data_set_%d/input_%u.pb", dir, set, i);
            ir_tensor *ts;
            int count;
            if (onnx_value_file_load(path, info.kind, &ts, &count, &arena) != VKI_OK) {
                snprintf(why, why_size, "reading %s: %s", path, vki_last_error());
                ok = 0;
                break;
            }
            /* ONNX 1.12's test data stores bfloat16 tensors as uint16 bit patterns */
            for (int k = 0; k < count; k++)
                if (ts[k].dtype == VKI_DTYPE_UINT16 && info.dtype == VKI_DTYPE_BFLOAT16) ts[k].dtype = VKI_DTYPE_BFLOAT16;
            vki_status st;
            if (count < 0) {
                st = vki_session_set_input_none(s, info.name);
            } else if (info.kind == VKI_VALUE_SEQUENCE || info.kind == VKI_VALUE_OPTIONAL_SEQUENCE) {
                int32_t *ranks = calloc((size_t)count + 1, sizeof *ranks);
                int64_t *dims = calloc((size_t)count * VKI_MAX_RANK + 1, sizeof *dims);
                const void **data = calloc((size_t)count + 1, sizeof *data);
                size_t *bytes = calloc((size_t)count + 1, sizeof *bytes);
                for (int k = 0; ranks && dims && data && bytes && k < count; k++) {
                    ranks[k] = ts[k].rank;
                    memcpy(dims + (size_t)k * VKI_MAX_RANK, ts[k].dims, sizeof ts[k].dims);
                    data[k] = ts[k].data;
                    bytes[k] = ts[k].bytes;
                }
                /* an empty sequence's element dtype is the model's */
                vki_dtype dtype = count ? ts[0].dtype : info.dtype;
                st = ranks && dims && data && bytes
                         ? vki_session_set_sequence_input(s, info.name, (uint32_t)count, dtype, ranks, dims, data, bytes)
                         : VKI_ERROR_OUT_OF_MEMORY;
                free(ranks);
                free(dims);
                free(data);
                free(bytes);
            } else {
                st = vki_session_set_input(s, info.name, ts[0].dtype, ts[0].dims, ts[0].rank, ts[0].data, ts[0].bytes);
            }
            if (st != VKI_OK) {
                snprintf(why, why_size, "input %s: %s", info.name, vki_last_error());
                ok = 0;
            }
        }
        if (ok && vki_session_run(s) != VKI_OK) {
            snprintf(why, why_size, "run: %s", vki_last_error());
            ok = 0;
        }
        for (uint32_t i = 0; ok && i < vki_model_output_count(model); i++) {
            snprintf(path, sizeof path, "%s/test_data_set_%d/output_%u.pb", dir, set, i);
            vki_tensor_info info;
            vki_model_output_info(model, i, &info);
            const char *name = info.name;
            ir_tensor *ts;
            int want, got;
            if (onnx_value_file_load(path, info.kind, &ts, &want, &arena) != VKI_OK) {
                snprintf(why, why_size, "reading %s: %s", path, vki_last_error());
                ok = 0;
            } else if (vki_session_get_output_count(s, i, &got) != VKI_OK) {
                snprintf(why, why_size, "output %u: %s", i, vki_last_error());
                ok = 0;
            } else if (got != want) { /* element by element below; here the counts (-1: none) */
                snprintf(why, why_size, "set %d output '%s' holds %d tensor(s) (-1: none), expected %d", set, name, got, want);
                ok = 0;
            }
            for (int k = 0; ok && k < want; k++) {
                const void *data;
                size_t bytes;
                if (vki_session_get_output_element(s, i, (uint32_t)k, &info, &data, &bytes) != VKI_OK) {
                    snprintf(why, why_size, "output %u: %s", i, vki_last_error());
                    ok = 0;
                    break;
                }
                char detail[1024];
                /* ONNX 1.12's test data stores bfloat16 tensors as uint16 bit patterns */
                if (ts[k].dtype == VKI_DTYPE_UINT16 && info.dtype == VKI_DTYPE_BFLOAT16) ts[k].dtype = VKI_DTYPE_BFLOAT16;
                if (!compare(&ts[k], info.dtype, info.dims, info.rank, data, detail, sizeof detail)) {
                    if (want == 1 && info.kind == VKI_VALUE_TENSOR)
                        snprintf(why, why_size, "set %d output '%s': %s", set, name, detail);
                    else
                        snprintf(why, why_size, "set %d output '%s' element %d: %s", set, name, k, detail);
                    ok = 0;
                }
            }
        }
        arena_free(&arena);
    }
    if (ok && !sets) {
        snprintf(why, why_size, "no test_data_set in %s", dir);
        ok = 0;
    }
    vki_session_destroy(s);
    vki_model_destroy(model);
    return ok;
}

int main(int argc, char **argv)
{
    const char *dir = NULL, *results = NULL, *name = NULL, *list = "tests/conformance/passing.txt";
    int listed = 1;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--listed") && i + 1 < argc) listed = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--results") && i + 1 < argc) results = argv[++i];
        else if (!strcmp(argv[i], "--name") && i + 1 < argc) name = argv[++i];
        else if (!strcmp(argv[i], "--list") && i + 1 < argc) list = argv[++i];
        else dir = argv[i];
    }
    if (!dir) {
        fprintf(stderr, "usage: conformance_runner DIR [--listed 0|1|2] [--name SUITE/TEST] [--results DIR] [--list FILE]\n");
        return 2;
    }
    if (!name) name = dir;
    vki_context *ctx;
    char why[4096] = "";
    int pass = 0;
    if (vki_context_create(NULL, &ctx) != VKI_OK) {
        snprintf(why, sizeof why, "no device: %s", vki_last_error());
    } else {
        pass = run_test(ctx, dir, why, sizeof why);
        vki_context_destroy(ctx);
    }
    if (results) {
        char path[4096], file[512];
        snprintf(file, sizeof file, "%s", name);
        for (char *p = file; *p; p++) if (*p == '/') *p = '.';
        snprintf(path, sizeof path, "%s/%s", results, file);
        FILE *f = fopen(path, "w");
        if (f) {
            fprintf(f, "%s %s %s\n", name, pass ? "pass" : "fail", listed == 1 ? "listed" : listed == 2 ? "new" : "unlisted");
            fclose(f);
        }
        snprintf(path, sizeof path, "%s-reasons", results);
        (void)mkdir(path, 0777);
        snprintf(path, sizeof path, "%s-reasons/%s", results, file);
        if (pass) {
            (void)remove(path);
        } else if ((f = fopen(path, "w"))) {
            for (char *p = why; *p; p++) if (*p == '\n') *p = ' ';
            fprintf(f, "%s %s\n", name, why);
            fclose(f);
        }
    }
    if (pass) {
        if (listed == 1) printf("PASS %s\n", name);
        else printf("PASS %s (passes but is not on %s yet)\n", name, list);
        return 0;
    }
    if (listed == 2) printf("FAIL %s (on no list: fix it, or list it as failing with a reason): %s\n", name, why);
    else printf("%s %s: %s\n", listed ? "FAIL" : "NOT YET", name, why);
    return listed ? 1 : 77;
}
