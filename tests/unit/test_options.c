/* The library's options (src/util/options.c): the table is well formed (unique VKINFER_ names,
 * known types and categories, each fixed default a value the option takes and equal to the
 * struct's default); an option set by the program and the same in the environment take effect
 * (VKINFER_NO_FUSION: a MatMul + Relu plans as one dispatch with fusion, two without), the
 * program's value wins over the environment's, NULL restores the default; VKINFER_MAX_MEMORY
 * reaches the context's cap and VKINFER_MAX_ALLOCATION its allocation limit; invalid values and
 * unknown names fail context creation with VKI_ERROR_INVALID_ARGUMENT naming the variable. */
#include "vkinfer.h"
#include "runtime/runtime.h"
#include "check.h"
#include "pbwrite.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* a[4,8] x b[8,4] -> Relu -> y: one dispatch where the Relu is fused into the product */
static void write_model(const char *path)
{
    pbw graph = {0}, model = {0};
    int64_t da[2] = {4, 8}, db[2] = {8, 4}, dy[2] = {4, 4};
    pbw_node2(&graph, "MatMul", "a", "b", "p");
    pbw_node(&graph, "Relu", "p", "y");
    pbw_value_info(&graph, 11, "a", 1, da, 2);
    pbw_value_info(&graph, 11, "b", 1, db, 2);
    pbw_value_info(&graph, 12, "y", 1, dy, 2);
    pbw_model(&model, &graph);
    pbw_save(&model, path);
}

/* The dispatches of the model's plan on a context made with these options; -1 on failure. */
static int dispatches(const char *path, const char *const *names, const char *const *values, size_t n)
{
    vki_context *ctx = NULL;
    vki_model *m = NULL;
    vki_session *s = NULL;
    float a[32], b[32];
    for (int i = 0; i < 32; i++) a[i] = (float)(i % 5) - 2.0f, b[i] = (float)(i % 3) - 1.0f;
    int64_t da[2] = {4, 8}, db[2] = {8, 4};
    vki_session_stats stats = {0};
    vki_status st = vki_context_create_with_options(NULL, names, values, n, &ctx);
    if (st == VKI_OK) st = vki_model_load(ctx, path, &m);
    if (st == VKI_OK) st = vki_session_create(m, &s);
    if (st == VKI_OK) st = vki_session_set_input(s, "a", VKI_DTYPE_FLOAT, da, 2, a, sizeof a);
    if (st == VKI_OK) st = vki_session_set_input(s, "b", VKI_DTYPE_FLOAT, db, 2, b, sizeof b);
    if (st == VKI_OK) st = vki_session_run(s);
    if (st == VKI_OK) st = vki_session_stats_get(s, &stats);
    if (st != VKI_OK) printf("  (%s)\n", vki_last_error());
    vki_session_destroy(s);
    vki_model_destroy(m);
    vki_context_destroy(ctx);
    return st == VKI_OK ? (int)stats.dispatch_count : -1;
}

/* Context creation with one option set by the program fails, naming `name`. */
static void refused(const char *name, const char *value)
{
    vki_context *ctx = NULL;
    const char *names[1] = {name}, *values[1] = {value};
    vki_status st = vki_context_create_with_options(NULL, names, values, 1, &ctx);
    CHECK(st == VKI_ERROR_INVALID_ARGUMENT && !ctx && strstr(vki_last_error(), name), "%s=%s is refused: %d '%s'", name,
          value, st, vki_last_error());
    vki_context_destroy(ctx);
}

static void check_table(void)
{
    uint32_t n = vki_option_count();
    CHECK(n >= 50, "%u options", n);
    vki_options defaults;
    options_defaults(&defaults);
    for (uint32_t i = 0; i < n; i++) {
        vki_option_info o;
        CHECK(vki_option_get(i, &o) == VKI_OK, "vki_option_get(%u): %s", i, vki_last_error());
        CHECK(!strncmp(o.name, "VKINFER_", 8), "%s is a VKINFER_ name", o.name);
        for (uint32_t j = 0; j < i; j++) {
            vki_option_info p;
            vki_option_get(j, &p);
            CHECK(strcmp(o.name, p.name), "%s is listed twice", o.name);
        }
        CHECK(!strcmp(o.category, "user") || !strcmp(o.category, "test") || !strcmp(o.category, "tuning"),
              "%s: category %s", o.name, o.category);
        bool known = false;
        static const char *const types[] = {"bool", "int", "enum", "string", "list", "dims"};
        for (int t = 0; t < 6; t++) known |= !strcmp(o.type, types[t]);
        CHECK(known, "%s: type %s", o.name, o.type);
        CHECK(*o.values && *o.doc, "%s has values and a doc", o.name);
        /* a documented default is the option's value when unset */
        if (*o.default_value && strcmp(o.type, "string")) {
            vki_options set;
            memcpy(&set, &defaults, sizeof set);
            CHECK(options_set(&set, o.name, o.default_value) == VKI_OK && !memcmp(&set, &defaults, sizeof set),
                  "%s's default '%s' is the struct's", o.name, o.default_value);
        }
        /* a word is no bool, int, enum or dims value */
        if (strcmp(o.type, "string")) {
            vki_options set;
            memcpy(&set, &defaults, sizeof set);
            CHECK(options_set(&set, o.name, "bogus") == VKI_ERROR_INVALID_ARGUMENT && strstr(vki_last_error(), o.name),
                  "%s=bogus is refused: %s", o.name, vki_last_error());
        }
    }
    vki_option_info o;
    CHECK(vki_option_get(n, &o) == VKI_ERROR_INVALID_ARGUMENT, "vki_option_get past the end");
}

int main(void)
{
    check_table();
    char dir[] = "/tmp/vkinfer-options-XXXXXX", path[64];
    CHECK(mkdtemp(dir) != NULL, "mkdtemp");
    snprintf(path, sizeof path, "%s/mm_relu.onnx", dir);
    write_model(path);
    unsetenv("VKINFER_NO_FUSION");

    /* the program's setting, the environment's, and which wins */
    const char *name[1] = {"VKINFER_NO_FUSION"}, *on[1] = {"1"}, *off[1] = {"0"}, *unset[1] = {NULL};
    int fused = dispatches(path, NULL, NULL, 0), unfused = dispatches(path, name, on, 1);
    printf("  dispatches: %d fused, %d with VKINFER_NO_FUSION=1 set by the program\n", fused, unfused);
    CHECK(fused >= 1 && unfused > fused, "VKINFER_NO_FUSION=1 set by the program plans more dispatches: %d, %d", fused,
          unfused);
    setenv("VKINFER_NO_FUSION", "1", 1);
    int from_env = dispatches(path, NULL, NULL, 0);
    CHECK(from_env == unfused, "VKINFER_NO_FUSION=1 in the environment: %d dispatches, %d expected", from_env, unfused);
    int program_wins = dispatches(path, name, off, 1);
    CHECK(program_wins == fused,
          "the program's VKINFER_NO_FUSION=0 over the environment's 1: %d dispatches, %d expected", program_wins,
          fused);
    int reset = dispatches(path, name, unset, 1);
    CHECK(reset == fused, "a NULL value gives the default whatever the environment says: %d dispatches, %d expected",
          reset, fused);
    /* an invalid value in the environment fails, unless the program sets that option */
    setenv("VKINFER_NO_FUSION", "perhaps", 1);
    vki_context *ctx = NULL;
    vki_status st = vki_context_create(NULL, &ctx);
    CHECK(st == VKI_ERROR_INVALID_ARGUMENT && !ctx && strstr(vki_last_error(), "VKINFER_NO_FUSION=perhaps"),
          "VKINFER_NO_FUSION=perhaps in the environment is refused: %d '%s'", st, vki_last_error());
    vki_context_destroy(ctx);
    CHECK(dispatches(path, name, on, 1) == unfused, "the program's value stands in for an invalid environment's");
    unsetenv("VKINFER_NO_FUSION");

    /* an int option reaches the context */
    const char *cap_name[2] = {"VKINFER_MAX_MEMORY", "VKINFER_SPIN_US"}, *cap_value[2] = {"1e9", "0"};
    ctx = NULL;
    st = vki_context_create_with_options(NULL, cap_name, cap_value, 2, &ctx);
    CHECK(st == VKI_OK && ctx->vk.max_memory == 1000000000u && ctx->vk.spin_us == 0, "VKINFER_MAX_MEMORY=1e9: %s",
          vki_last_error());
    vki_context_destroy(ctx);

    /* VKINFER_MAX_ALLOCATION lowers the device's allocation limit; at or above it, leaves it */
    const char *alloc_name[1] = {"VKINFER_MAX_ALLOCATION"}, *alloc_value[1] = {"8192"};
    ctx = NULL;
    st = vki_context_create_with_options(NULL, alloc_name, alloc_value, 1, &ctx);
    CHECK(st == VKI_OK && ctx->vk.caps.max_allocation_bytes == 8192, "VKINFER_MAX_ALLOCATION=8192: %llu (%s)",
          ctx ? (unsigned long long)ctx->vk.caps.max_allocation_bytes : 0ull, vki_last_error());
    vki_context_destroy(ctx);

    /* a list's names separated by ',' or '+' */
    vki_options o;
    options_defaults(&o);
    CHECK(options_set(&o, "VKINFER_COOPMAT2_EXP", "dims") == VKI_OK && o.coopmat2_exp == OPT_CM2_EXP_DIMS,
          "VKINFER_COOPMAT2_EXP=dims: %u", o.coopmat2_exp);
    CHECK(options_set(&o, "VKINFER_DISABLE_FEATURES", "storage16,coopmat2") == VKI_OK &&
              o.disable_features == (OPT_DISABLE_STORAGE16 | OPT_DISABLE_COOPMAT2),
          "VKINFER_DISABLE_FEATURES=storage16,coopmat2: %u", o.disable_features);
    CHECK(options_set(&o, "VKINFER_DISABLE_FEATURES", "fp16+coopmat") == VKI_OK &&
              o.disable_features == (OPT_DISABLE_FP16 | OPT_DISABLE_COOPMAT),
          "VKINFER_DISABLE_FEATURES=fp16+coopmat: %u", o.disable_features);

    refused("VKINFER_MAX_ALLOCATION", "100");
    refused("VKINFER_COOPMAT2_EXP", "dims+fast");
    refused("VKINFER_COOPMAT2_EXP", "dims+vec4"); /* a candidate measured and removed (issue 37) */
    refused("VKINFER_SPIN_US", "soon");
    refused("VKINFER_SPIN_US", "2000000");
    refused("VKINFER_MATMUL_KERNELS", "fast");
    refused("VKINFER_CONV_KERNELS", "tiled"); /* a name of another family's option */
    refused("VKINFER_SGEMM_TILE", "96x64");
    refused("VKINFER_SGEMM_TILE", "64x64x4");
    refused("VKINFER_DISABLE_FEATURES", "storage16,fp64");
    refused("VKINFER_NO_SUCH_OPTION", "1");
    vki_context *bad = NULL;
    const char *names[1] = {"VKINFER_NO_FUSION"};
    CHECK(vki_context_create_with_options(NULL, names, NULL, 1, &bad) == VKI_ERROR_INVALID_ARGUMENT && !bad,
          "NULL values with a count");

    remove(path);
    rmdir(dir);
    printf("%d passed, %d failed\n", passes, failures);
    return failures ? 1 : 0;
}
