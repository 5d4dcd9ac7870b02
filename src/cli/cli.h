/* Subcommands of the headfuse executable. Each returns the process exit status. */
#ifndef HF_CLI_H
#define HF_CLI_H

#include <stddef.h>
#include <stdio.h>

#include "headfuse/store.h"

int cli_cmd_target(int argc, char **argv);
int cli_cmd_check(int argc, char **argv);
int cli_cmd_search(int argc, char **argv);
int cli_cmd_table(int argc, char **argv);
int cli_cmd_verify(int argc, char **argv);
int cli_cmd_run(int argc, char **argv);
int cli_cmd_approx(int argc, char **argv);

/* Print an APPROX.h5 file (cmd_approx.c): fmt 0 text, 1 JSON, 2 CSV, 3 Markdown. Returns
 * the exit status. `headfuse table` sends files whose root attribute format is
 * "headfuse-approx-1" here (hf_approx_file_detect). */
int cli_table_approx(const char *path, int fmt);

/* Shared by the commands that write result files (src/cli/cli_result.c). */
/* Start MPI for a collective command: rank, size, the stop-signal handlers and the
 * start time (ISO 8601, UTC) for the provenance. */
void cli_mpi_start(int *argc, char ***argv, int *rank, int *size, char *start, size_t n);
/* End an MPI command: a barrier, MPI_Finalize, and status (SIGTERM ignored when it is
 * nonzero, so that mpirun's stop of the last ranks does not replace it). */
int cli_mpi_end(int status);
/* A row in words: one line ("wd:d=3 span 2: m* = 8  [certified] ..."; out, if not NULL,
 * is the file it was written to), then what the row proves: over all integer keys
 * (certified m*, or LB <= m* <= the smaller of UB and the span's m*) and within the span
 * (docs/math.md §1.4). */
void cli_print_row(FILE *f, const hf_row_t *row, const char *out);

#endif
