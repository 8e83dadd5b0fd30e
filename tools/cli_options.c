/* `vkinfer options`: the library's options (vki_option_get), as text or as the Markdown tables
 * of docs/environment.md (scripts/environment-doc.sh writes them there). */
#include "cli.h"
#include "vkinfer.h"

#include <stdio.h>
#include <string.h>

void cli_print_md_cell(const char *s)
{
    for (; *s; s++) {
        if (*s == '|')
            fputs("\\|", stdout);
        else if (*s == '\n')
            putchar(' ');
        else
            putchar(*s);
    }
}

static void print_markdown(void)
{
    static const struct {
        const char *category, *title;
    } sections[] = {
        {"user", "For users"},
        {"test", "For tests: another device's behaviour, kernel families forced, faults"},
        {"tuning", "Tuning and A/B checks: tiles, thresholds, paths turned off for comparisons"},
    };
    for (size_t k = 0; k < sizeof sections / sizeof *sections; k++) {
        printf("%s### %s\n\n| variable | type | values | default | effect |\n| --- | --- | --- | --- | --- |\n",
               k ? "\n" : "", sections[k].title);
        for (uint32_t i = 0; i < vki_option_count(); i++) {
            vki_option_info o;
            if (vki_option_get(i, &o) != VKI_OK || strcmp(o.category, sections[k].category)) continue;
            const char *quote = strcmp(o.type, "string") ? "`" : ""; /* a string's values are words */
            printf("| `%s` | %s | %s", o.name, o.type, quote);
            cli_print_md_cell(o.values);
            printf("%s | ", quote);
            if (*o.default_value) {
                printf("`");
                cli_print_md_cell(o.default_value);
                printf("`");
            }
            printf(" | ");
            cli_print_md_cell(o.doc);
            printf(" |\n");
        }
    }
}

int cmd_options(int argc, char **argv)
{
    bool markdown = false;
    for (int i = 0; i < argc; i++) {
        if (!strcmp(argv[i], "--markdown"))
            markdown = true;
        else
            return cli_usage_error("options", "unknown option '%s'", argv[i]);
    }
    if (markdown) {
        print_markdown();
        return 0;
    }
    for (uint32_t i = 0; i < vki_option_count(); i++) {
        vki_option_info o;
        if (vki_option_get(i, &o) != VKI_OK) continue;
        printf("%s (%s, %s): %s%s%s\n    %s\n", o.name, o.category, o.type, o.values,
               *o.default_value ? ", default " : "", o.default_value, o.doc);
    }
    printf("%u options\n", vki_option_count());
    return 0;
}
