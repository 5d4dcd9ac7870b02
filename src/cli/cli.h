/* Subcommands of the headfuse executable. Each returns the process exit status. */
#ifndef HF_CLI_H
#define HF_CLI_H

#include <stddef.h>
#include <jansson.h>

#include "headfuse/store.h"

int cli_cmd_target(int argc, char **argv);
int cli_cmd_check(int argc, char **argv);
int cli_cmd_search(int argc, char **argv);
int cli_cmd_table(int argc, char **argv);
int cli_cmd_verify(int argc, char **argv);
int cli_cmd_approx(int argc, char **argv);

/* Print an APPROX.h5 file (cmd_approx.c): fmt 0 text, 1 JSON, 2 CSV, 3 Markdown. Returns
 * the exit status. `headfuse table` sends files whose root attribute format is
 * "headfuse-approx-1" here (hf_approx_file_detect). */
int cli_table_approx(const char *path, int fmt);

/* Shared by the commands that write result files. */
void cli_iso_time(char *buf, size_t n);
char *cli_join_argv(int argc, char **argv);
void cli_remove_shards(const char *dir);
/* A table row as a JSON object with the documented field names. */
json_t *cli_row_json(const hf_row_t *r);

#endif
