/* `vkinfer ops`: the ops vkinfer runs with their dtypes and notes, as text or as the Markdown
 * table of docs/ops.md. */
#include "cli.h"
#include "vkinfer.h"

#include <stdbool.h>
#include <stdio.h>
#include <string.h>

int cmd_ops(int argc, char **argv)
{
    bool markdown = false;
    for (int i = 0; i < argc; i++) {
        if (!strcmp(argv[i], "--markdown")) markdown = true;
        else return cli_usage_error("ops", "unknown option '%s'", argv[i]);
    }
    uint32_t n = vki_op_count();
    if (markdown) printf("| Op | Dtypes | Notes |\n|---|---|---|\n");
    for (uint32_t i = 0; i < n; i++) {
        vki_op_info op;
        if (vki_op_get(i, &op) != VKI_OK) return cli_lib_error("reading the op table");
        char name[256];
        snprintf(name, sizeof name, "%s%s%s", op.domain ? op.domain : "", op.domain && *op.domain ? "." : "", op.name);
        if (markdown) {
            printf("| ");
            cli_print_md_cell(name);
            printf(" | ");
            cli_print_md_cell(op.dtypes ? op.dtypes : "");
            printf(" | ");
            cli_print_md_cell(op.notes ? op.notes : "");
            printf(" |\n");
        } else {
            if (op.notes && *op.notes) printf("%-22s %-44s %s\n", name, op.dtypes ? op.dtypes : "", op.notes);
            else printf("%-22s %s\n", name, op.dtypes ? op.dtypes : "");
        }
    }
    if (!markdown) printf("%u ops\n", n);
    return 0;
}
