/* Helpers shared by the subcommands: argument scanning, loading the target, JSON
 * output, error reporting. */
#ifndef HF_CLI_COMMON_H
#define HF_CLI_COMMON_H

#include <stdio.h>
#include <jansson.h>
#include <flint/fmpz.h>
#include <mpi.h>

#include "headfuse/agree.h"
#include "headfuse/campaign.h"
#include "headfuse/target.h"

/* One option a subcommand accepts. has_value: takes the next argument (or =VALUE). */
typedef struct {
    const char *name; /* "--keys" */
    int has_value;
    const char **value; /* where the value goes (has_value) */
    int *flag;          /* set to 1 when present (!has_value) */
} cli_opt_t;

/* Scan argv[1..]: options from the table, positionals into pos[] (at most maxpos).
 * Prints a message naming the command and returns 2 on a bad argument (an unknown
 * option, a missing value, or an option with a value given twice: `--span 2 --span 3`
 * would otherwise keep only the last), else 0. A repeated flag (`--quiet --quiet`)
 * changes nothing and is accepted. */
int cli_parse(const char *cmd, int argc, char **argv, const cli_opt_t *opts, const char **pos,
              int maxpos, int *npos);

/* Load the target named by a JSON path or a --family spec (exactly one must be given). */
hf_err_t cli_load_target(const char *path, const char *family, hf_target_t *t);

/* JSON integer when |x| < 2^53, else a decimal string. New reference. */
json_t *cli_json_bigint(const fmpz_t x);
/* JSON string of a rational. New reference. */
json_t *cli_json_rational(const fmpq_t x);
/* Witness head as {"keys": [[..]], "weights": [..], "values": [..] or [[..]]}. */
json_t *cli_json_head(const hf_head_t *h);
/* A head as text, one atom per line: "<indent>(k1,k2) -> weight, value..." (exact). */
void cli_print_head(FILE *f, const hf_head_t *h, const char *indent);
/* Print one JSON object on stdout (compact keys order preserved) and release it. */
void cli_json_print(json_t *j);

/* Report an error from the library ("headfuse CMD: message") and return the exit
 * status for it. */
int cli_fail(const char *cmd, hf_err_t err);

/* cli_fail for an error every rank of comm agreed on (collective): the rank that
 * hf_agree_reporter names prints it, naming itself when it is not rank 0. Returns the
 * exit status. */
int cli_fail_mpi(MPI_Comm comm, const char *cmd, hf_err_t err);

#endif
