/* Helpers shared by the subcommands: argument scanning, loading the target, JSON
 * output, error reporting. */
#ifndef HF_CLI_COMMON_H
#define HF_CLI_COMMON_H

#include <stdio.h>
#include <jansson.h>
#include <mpi.h>

#include "headfuse/agree.h"
#include "headfuse/campaign.h"
#include "headfuse/target.h"

/* What an option takes, and where its checked value goes (dest):
 *   FLAG   no value; int, set to 1 when present
 *   STR    any text; const char * (the argument itself)
 *   PATH   a file name, not empty; const char *
 *   INT    a decimal integer in [lo, hi]; long
 *   REAL   a positive finite number; double
 *   U64    a nonnegative decimal integer below 2^64; uint64_t
 *   RANGE  "A..B" or "A" with lo <= A <= B <= hi; long[2] (A and B)
 *   SIZE   a size in bytes, "4G", "512M" (hf_parse_bytes); const char * (the text) */
typedef enum {
    CLI_FLAG,
    CLI_STR,
    CLI_PATH,
    CLI_INT,
    CLI_REAL,
    CLI_U64,
    CLI_RANGE,
    CLI_SIZE
} cli_kind_t;

/* One option a subcommand accepts. required, when not NULL, makes the option
 * mandatory and names its value in the message ("--out RESULT.h5 is required"). */
typedef struct {
    const char *name; /* "--keys" */
    cli_kind_t kind;
    void *dest;
    long lo, hi;          /* INT, RANGE */
    const char *required; /* NULL: optional */
} cli_opt_t;

#define CLI_OPT_FLAG(n, p)                                                                         \
    {                                                                                              \
        (n), CLI_FLAG, (p), 0, 0, NULL                                                             \
    }
#define CLI_OPT_STR(n, p)                                                                          \
    {                                                                                              \
        (n), CLI_STR, (p), 0, 0, NULL                                                              \
    }
#define CLI_OPT_PATH(n, p, req)                                                                    \
    {                                                                                              \
        (n), CLI_PATH, (p), 0, 0, (req)                                                            \
    }
#define CLI_OPT_INT(n, p, lo, hi, req)                                                             \
    {                                                                                              \
        (n), CLI_INT, (p), (lo), (hi), (req)                                                       \
    }
#define CLI_OPT_REAL(n, p)                                                                         \
    {                                                                                              \
        (n), CLI_REAL, (p), 0, 0, NULL                                                             \
    }
#define CLI_OPT_U64(n, p)                                                                          \
    {                                                                                              \
        (n), CLI_U64, (p), 0, 0, NULL                                                              \
    }
#define CLI_OPT_RANGE(n, p, lo, hi, req)                                                           \
    {                                                                                              \
        (n), CLI_RANGE, (p), (lo), (hi), (req)                                                     \
    }
#define CLI_OPT_SIZE(n, p)                                                                         \
    {                                                                                              \
        (n), CLI_SIZE, (p), 0, 0, NULL                                                             \
    }
#define CLI_OPT_END                                                                                \
    {                                                                                              \
        NULL, CLI_FLAG, NULL, 0, 0, NULL                                                           \
    }

/* What cli_parse returns when the command goes on (else its exit status). */
#define CLI_GO (-1)

/* Scan argv[1..]: options from the table, positionals into pos[] (at most maxpos).
 * Every value is checked against its kind here, with one message format: "headfuse
 * CMD: OPTION VALUE: must be ..." (and "headfuse CMD: OPTION VALUE is required"). An
 * unknown option, a missing value, a bad value, a missing required option, or an option
 * with a value given twice (`--span 2 --span 3` would otherwise keep only the last)
 * prints one line and returns 2. A repeated flag changes nothing. Options not given leave
 * dest as it was (the default). Every command takes --help: then values are not checked,
 * required options may be missing, usage is printed on stdout and 0 returned. Otherwise
 * CLI_GO. */
int cli_parse(const char *cmd, const char *usage, int argc, char **argv, const cli_opt_t *opts,
              const char **pos, int maxpos, int *npos);

/* Load the target named by a JSON path or a --family spec (exactly one must be given). */
hf_err_t cli_load_target(const char *path, const char *family, hf_target_t *t);

/* A head as text, one atom per line: "<indent>(k1,k2) -> weight, value..." (exact). */
void cli_print_head(FILE *f, const hf_head_t *h, const char *indent);
/* Print one JSON value on stdout (compact, key order preserved, integers of any size:
 * hf_json_dumps) and release it. */
void cli_json_print(json_t *j);

/* Report an error from the library ("headfuse CMD: message") and return the exit
 * status for it. */
int cli_fail(const char *cmd, hf_err_t err);

/* cli_fail for an error every rank of comm agreed on (collective): the rank that
 * hf_agree_reporter names prints it, naming itself when it is not rank 0. Returns the
 * exit status. */
int cli_fail_mpi(MPI_Comm comm, const char *cmd, hf_err_t err);

#endif
