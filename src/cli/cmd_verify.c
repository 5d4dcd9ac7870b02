/* headfuse verify: re-check every witness stored in a result file with the
 * independent verifier (exact integer identity, positive weights), against the
 * target stored with its row, and report the numeric cross-check. */
#include <stdio.h>
#include <stdlib.h>

#include "cli/cli.h"
#include "cli/cli_common.h"
#include "headfuse/agree.h"
#include "headfuse/report.h"

static const char *usage_text =
    "usage: [mpirun -n N] headfuse verify RESULT.h5 [MORE.h5 ...] [--quiet]\n"
    "  Rebuilds each stored minimal support's witness head and checks it exactly against\n"
    "  the row's target. A large witness (stored in pieces) is checked slice by slice,\n"
    "  each rank its share; one rank gives the same verdict. Exit 0 when all are verified,\n"
    "  1 when any fails (named by file, row and support index); the status of the first\n"
    "  unreadable file otherwise (every file is still checked). --quiet: print failures\n"
    "  only.\n";

/* Where the lines go: quiet prints failures only; lead is "" for one file, "FILE: " for
 * several. */
typedef struct {
    int quiet;
    char lead[4200];
} lines_t;

static void print_failed(void *ctx, const hf_result_t *r, long i, long j, const char *why)
{
    const lines_t *c = ctx;
    printf("%srow %ld %s: support %ld: FAILED: %s\n", c->lead, i, r->rows[i].name, j, why);
}

static void print_row(void *ctx, const hf_result_t *r, long i, long bad, double maxerr)
{
    const lines_t *c = ctx;
    const char *name = r->rows[i].name;
    long n = r->supports[i].n;
    if (bad)
        printf("%srow %ld %s: %ld of %ld witnesses FAILED\n", c->lead, i, name, bad, n);
    else if (!c->quiet && n == 0)
        printf("%srow %ld %s: no witnesses stored\n", c->lead, i, name);
    else if (!c->quiet)
        printf("%srow %ld %s: %ld witness%s verified exactly (max numeric error %.1e)\n", c->lead,
               i, name, n, n == 1 ? "" : "es", maxerr);
}

/* Verify one file (collective): 0, 1 (a witness failed) or the exit status of its error. */
static int verify_file(const char *path, int several, int quiet)
{
    int rank;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    lines_t lines = {quiet, ""};
    if (several)
        snprintf(lines.lead, sizeof lines.lead, "%s: ", path);
    hf_report_verify_fns_t fns = {print_failed, print_row, &lines};
    long failed = 0;
    hf_err_t e = hf_report_verify(MPI_COMM_WORLD, path, &fns, &failed);
    fflush(stdout);
    if (e != HF_OK)
        return cli_fail_mpi(MPI_COMM_WORLD, "verify", e);
    if (failed && rank == 0)
        fprintf(stderr, "headfuse verify: %s: %ld witness%s FAILED\n", path, failed,
                failed == 1 ? "" : "es");
    return failed ? 1 : 0;
}

int cli_cmd_verify(int argc, char **argv)
{
    int quiet = 0, npos = 0, status;
    const char **pos = hf_calloc((size_t)(argc > 1 ? argc : 1), sizeof *pos);
    if (!pos)
        return cli_fail("verify", HF_ERR_NOMEM);
    cli_opt_t opts[] = {CLI_OPT_FLAG("--quiet", &quiet), CLI_OPT_END};
    status = cli_parse("verify", usage_text, argc, argv, opts, pos, argc, &npos);
    if (status == CLI_GO && npos == 0) {
        fprintf(stderr, "headfuse verify: no result file given\n%s", usage_text);
        status = 2;
    }
    if (status != CLI_GO) {
        free(pos);
        return status;
    }
    int rank, size;
    char start[32];
    cli_mpi_start(&argc, &argv, &rank, &size, start, sizeof start);
    /* every file is checked; an unreadable file's status wins over a failed witness (1) */
    int worst = 0;
    for (int i = 0; i < npos; i++) {
        int st = verify_file(pos[i], npos > 1, quiet);
        if (st != 0 && (worst == 0 || worst == 1))
            worst = st;
    }
    free(pos);
    return cli_mpi_end(worst);
}
