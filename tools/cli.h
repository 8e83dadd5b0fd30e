/* Shared between the vkinfer program's files: help texts, error lines, the commands' entry
 * points (each in tools/cli_<command>.c). */
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
/* "vkinfer: WHAT: " and the library's last error on stderr; returns 1. */
int cli_lib_error(const char *what);
/* CLOCK_MONOTONIC in milliseconds. */
double cli_now_ms(void);

/* A JSON string literal with quotes and escapes. */
void cli_fprint_json_string(FILE *f, const char *s);

/* s as one Markdown table cell: '|' escaped, line breaks as spaces. */
void cli_print_md_cell(const char *s);

/* The commands: each returns the program's exit status. */
int cmd_devices(void);
int cmd_ops(int argc, char **argv);
int cmd_options(int argc, char **argv);
int cmd_info(int argc, char **argv);
int cmd_run(int argc, char **argv);
int cmd_bench(int argc, char **argv);

#endif
