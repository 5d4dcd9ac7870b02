/* headfuse verify: re-check every witness stored in a result file with the
 * independent verifier (exact integer identity, positive weights), against the
 * target stored with its row, and report the numeric cross-check. */
#include <stdio.h>
#include <stdlib.h>

#include "cli/cli.h"
#include "cli/cli_common.h"
#include "headfuse/agree.h"
#include "headfuse/verify.h"

static const char *usage_text =
    "usage: [mpirun -n N] headfuse verify RESULT.h5 [MORE.h5 ...] [--quiet]\n"
    "  Rebuilds each stored minimal support's witness head and checks it exactly against\n"
    "  the row's target. A large witness (stored in pieces) is checked slice by slice,\n"
    "  each rank its share; one rank gives the same verdict. Exit 0 when all are verified,\n"
    "  1 when any fails (named by file, row and support index); the status of the first\n"
    "  unreadable file otherwise (every file is still checked). --quiet: print failures\n"
    "  only.\n";

#define NUMERIC_QUERIES 64

/* One witness held in memory: the whole identity and the numeric check (rank 0 only). */
static hf_err_t verify_small(const hf_target_t *t, const hf_supports_t *s, long j, int *ok,
                             const char **why, double *err_num)
{
    hf_head_t h;
    hf_head_init(&h, s->d, s->dv);
    hf_err_t e = hf_supports_head(s, j, &h, why); /* a bad weight fails the witness */
    *ok = !*why;
    if (e == HF_OK && *ok)
        e = hf_verify_head(t, &h, ok, why);
    *err_num = e == HF_OK && *ok ? hf_verify_numeric(t, &h, NUMERIC_QUERIES, 1.0, 1) : 0;
    hf_head_clear(&h);
    return e;
}

/* Verify the witnesses of row i (collective: a large witness is checked by every rank).
 * Counts failures into *failed; rank 0 prints the lines, each starting with `lead` ("" for
 * one file, "FILE: " for several). */
static hf_err_t verify_row(const char *path, const char *lead, const hf_result_t *r, long i,
                           int quiet, long *failed)
{
    int rank;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    const hf_row_t *row = &r->rows[i];
    const hf_supports_t *s = &r->supports[i];
    char origin[512];
    hf_target_t t;
    hf_target_init_empty(&t);
    snprintf(origin, sizeof origin, "%s: /rows/%ld/target_json", path, i);
    hf_err_t e = hf_target_from_json_text(&t, r->target_json[i], origin);
    if (e == HF_ERR_INPUT)
        e = HF_ERR_CORRUPT; /* the file is bad, not the user */
    if (e == HF_OK && (t.d != s->d || t.dv != s->dv))
        e = hf_error(HF_ERR_CORRUPT,
                     "%s: /rows/%ld: supports have d=%d, dv=%d but the target d=%d, dv=%d", path, i,
                     s->d, s->dv, t.d, t.dv);
    if ((e = hf_agree_all(MPI_COMM_WORLD, e)) != HF_OK) {
        hf_target_clear(&t);
        return e;
    }
    long bad = 0;
    double maxerr = 0;
    for (long j = 0; j < s->n && e == HF_OK; j++) {
        int ok = 0;
        const char *why = NULL;
        double err = 0;
        if (s->file)
            e = hf_campaign_verify_large(MPI_COMM_WORLD, &t, s, j, &ok, &why, &err);
        else if (rank == 0)
            e = verify_small(&t, s, j, &ok, &why, &err);
        if (!s->file)
            e = hf_agree_root(MPI_COMM_WORLD, e);
        if (e == HF_OK && rank == 0 && ok && !(err <= maxerr))
            maxerr = err; /* NaN wins: it must show */
        if (e == HF_OK && rank == 0 && !ok) {
            bad++;
            printf("%srow %ld %s: support %ld: FAILED: %s\n", lead, i, row->name, j,
                   why ? why : "not equal to the target");
        }
    }
    hf_target_clear(&t);
    if (e != HF_OK)
        return e;
    *failed += bad;
    if (rank != 0)
        return HF_OK;
    if (bad)
        printf("%srow %ld %s: %ld of %ld witnesses FAILED\n", lead, i, row->name, bad, s->n);
    else if (!quiet && s->n == 0)
        printf("%srow %ld %s: no witnesses stored\n", lead, i, row->name);
    else if (!quiet)
        printf("%srow %ld %s: %ld witness%s verified exactly (max numeric error %.1e)\n", lead, i,
               row->name, s->n, s->n == 1 ? "" : "es", maxerr);
    return HF_OK;
}

/* Verify one file (collective): 0, 1 (a witness failed) or the exit status of its error. */
static int verify_file(const char *path, int several, int quiet)
{
    int rank;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    char lead[4200] = "";
    if (several)
        snprintf(lead, sizeof lead, "%s: ", path);
    hf_result_t r;
    hf_result_init(&r);
    /* every rank reads the table; a large witness stays in the file, read in pieces */
    hf_err_t e = hf_agree_all(MPI_COMM_WORLD, hf_campaign_result_read(path, &r));
    long failed = 0;
    for (long i = 0; i < r.nrows && e == HF_OK; i++)
        e = verify_row(path, lead, &r, i, quiet, &failed);
    fflush(stdout);
    hf_result_clear(&r);
    if (e != HF_OK)
        return cli_fail_mpi(MPI_COMM_WORLD, "verify", e);
    MPI_Bcast(&failed, 1, MPI_LONG, 0, MPI_COMM_WORLD);
    if (failed) {
        if (rank == 0)
            fprintf(stderr, "headfuse verify: %s: %ld witness%s FAILED\n", path, failed,
                    failed == 1 ? "" : "es");
        return 1;
    }
    return 0;
}

int cli_cmd_verify(int argc, char **argv)
{
    int quiet = 0, help = 0, npos = 0, status;
    const char **pos = hf_calloc((size_t)(argc > 1 ? argc : 1), sizeof *pos);
    if (!pos)
        return cli_fail("verify", HF_ERR_NOMEM);
    cli_opt_t opts[] = {CLI_OPT_FLAG("--quiet", &quiet), CLI_OPT_FLAG("--help", &help),
                        CLI_OPT_END};
    if ((status = cli_parse("verify", argc, argv, opts, pos, argc, &npos)) == 0 && help)
        fputs(usage_text, stdout);
    else if (status == 0 && npos == 0) {
        fprintf(stderr, "headfuse verify: no result file given\n%s", usage_text);
        status = 2;
    }
    if (status || help) {
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
