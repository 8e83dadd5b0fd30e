/* Shared between the vkinfer program's files: help texts, error lines, `info`. */
#ifndef VKINFER_CLI_H
#define VKINFER_CLI_H

#include <stdbool.h>
#include <stdio.h>

#define EXIT_USAGE 2

/* The full help of one command ("run", "bench"...), or NULL for an unknown one. */
const char *cli_command_help(const char *cmd);
/* The overview: every command in one line each. */
extern const char cli_overview[];
/* One line on stderr, then a pointer to `vkinfer CMD --help`; returns EXIT_USAGE. */
int cli_usage_error(const char *cmd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Whether argv holds --help or -h (before a lone "--"). */
bool cli_wants_help(int argc, char **argv);

/* A JSON string literal with quotes and escapes. */
void cli_fprint_json_string(FILE *f, const char *s);

/* s as one Markdown table cell: '|' escaped, line breaks as spaces. */
void cli_print_md_cell(const char *s);

int cmd_info(int argc, char **argv);
int cmd_options(int argc, char **argv);

#endif
