/* `vkinfer info MODEL` (alias inspect): what a model file holds, from vki_model_inspect, which
 * needs no device and accepts ops vkinfer does not run so that it can name them. */
#include "cli.h"
#include "vkinfer.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void cli_fprint_json_string(FILE *f, const char *s)
{
    fputc('"', f);
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        if (c == '"' || c == '\\') fprintf(f, "\\%c", c);
        else if (c < 0x20) fprintf(f, "\\u%04x", c);
        else fputc(c, f);
    }
    fputc('"', f);
}

static void print_shape_text(const vki_tensor_info *t)
{
    if (t->rank < 0) {
        printf("(shape not declared)");
        return;
    }
    printf("[");
    for (int d = 0; d < t->rank; d++) {
        if (d) printf(",");
        if (t->dims[d] >= 0) printf("%lld", (long long)t->dims[d]);
        else printf("%s", t->dim_names[d] ? t->dim_names[d] : "?");
    }
    printf("]");
}

/* JSON: numbers for fixed dims, the symbol's name as a string, null for an unnamed one. */
static void print_shape_json(const vki_tensor_info *t)
{
    if (t->rank < 0) {
        printf("null");
        return;
    }
    printf("[");
    for (int d = 0; d < t->rank; d++) {
        if (d) printf(", ");
        if (t->dims[d] >= 0) printf("%lld", (long long)t->dims[d]);
        else if (t->dim_names[d]) cli_fprint_json_string(stdout, t->dim_names[d]);
        else printf("null");
    }
    printf("]");
}

typedef vki_status (*tensor_getter)(const vki_model_report *, uint32_t, vki_tensor_info *);

/* vki_value_kind */
static const char *const KINDS[4] = {"tensor", "sequence", "optional", "optional_sequence"};
static const char *const KIND_PREFIX[4] = {"", "sequence of ", "optional ", "optional sequence of "};

static int print_tensors(const vki_model_report *r, uint32_t n, tensor_getter get, bool json)
{
    for (uint32_t i = 0; i < n; i++) {
        vki_tensor_info t;
        if (get(r, i, &t) != VKI_OK) return -1;
        if (json) {
            printf("%s{\"name\": ", i ? ", " : "");
            cli_fprint_json_string(stdout, t.name);
            printf(", \"dtype\": ");
            cli_fprint_json_string(stdout, vki_dtype_name(t.dtype));
            printf(", \"shape\": ");
            print_shape_json(&t);
            if (t.kind) printf(", \"kind\": \"%s\"", KINDS[t.kind & 3]); /* only for sequences and optionals */
            printf("}");
        } else {
            printf("  %s: %s%s ", t.name, KIND_PREFIX[t.kind & 3], vki_dtype_name(t.dtype));
            print_shape_text(&t);
            printf("\n");
        }
    }
    return 0;
}

int cmd_info(int argc, char **argv)
{
    const char *model = NULL;
    bool json = false;
    for (int i = 0; i < argc; i++) {
        if (!strcmp(argv[i], "--json")) json = true;
        else if (!strncmp(argv[i], "--", 2)) return cli_usage_error("info", "unknown option '%s'", argv[i]);
        else if (model) return cli_usage_error("info", "unexpected argument '%s' (one model only)", argv[i]);
        else model = argv[i];
    }
    if (!model) return cli_usage_error("info", "no model given");
    vki_model_report *r;
    if (vki_model_inspect(model, &r) != VKI_OK) {
        fprintf(stderr, "vkinfer: reading the model: %s\n", vki_last_error());
        return 1;
    }
    vki_model_summary s;
    int rc = vki_model_report_summary(r, &s) == VKI_OK ? 0 : 1;
    if (!rc && json) {
        printf("{\"model\": ");
        cli_fprint_json_string(stdout, model);
        printf(", \"ir_version\": %lld, \"opset\": %lld, \"node_count\": %u, \"initializer_count\": %u, "
               "\"weight_bytes\": %llu, \"unsupported_node_count\": %u, \"inputs\": [",
               (long long)s.ir_version, (long long)s.opset, s.node_count, s.initializer_count,
               (unsigned long long)s.weight_bytes, s.unsupported_node_count);
        rc = print_tensors(r, s.input_count, vki_model_report_input, true);
        printf("], \"outputs\": [");
        if (!rc) rc = print_tensors(r, s.output_count, vki_model_report_output, true);
        printf("], \"ops\": [");
        for (uint32_t i = 0; !rc && i < s.op_type_count; i++) {
            vki_model_op_use u;
            if (vki_model_report_op(r, i, &u) != VKI_OK) rc = -1;
            else {
                printf("%s{\"op\": ", i ? ", " : "");
                cli_fprint_json_string(stdout, u.op);
                printf(", \"domain\": ");
                cli_fprint_json_string(stdout, u.domain);
                printf(", \"nodes\": %u, \"supported\": %s}", u.node_count, u.supported ? "true" : "false");
            }
        }
        printf("]}\n");
    } else if (!rc) {
        printf("model:   %s\n", model);
        printf("format:  ONNX IR version %lld, opset %lld\n", (long long)s.ir_version, (long long)s.opset);
        printf("graph:   %u nodes, %u initializers, weights %.2f MiB (%llu bytes)\n", s.node_count, s.initializer_count,
               (double)s.weight_bytes / 1048576.0, (unsigned long long)s.weight_bytes);
        printf("inputs:\n");
        rc = print_tensors(r, s.input_count, vki_model_report_input, false);
        printf("outputs:\n");
        if (!rc) rc = print_tensors(r, s.output_count, vki_model_report_output, false);
        if (s.unsupported_node_count) printf("ops: %u types; %u nodes use ops vkinfer does not run (marked NO)\n",
                                             s.op_type_count, s.unsupported_node_count);
        else printf("ops: %u types, all supported\n", s.op_type_count);
        for (uint32_t i = 0; !rc && i < s.op_type_count; i++) {
            vki_model_op_use u;
            char name[256];
            if (vki_model_report_op(r, i, &u) != VKI_OK) {
                rc = -1;
                break;
            }
            snprintf(name, sizeof name, "%s%s%s", u.domain, *u.domain ? "." : "", u.op);
            printf("  %-28s %5u node%s  %s\n", name, u.node_count, u.node_count == 1 ? " " : "s",
                   u.supported ? "supported" : "NO");
        }
    }
    if (rc) fprintf(stderr, "vkinfer: reading the model: %s\n", vki_last_error());
    vki_model_report_destroy(r);
    return rc ? 1 : 0;
}
