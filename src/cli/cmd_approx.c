/* headfuse approx: the best single head with m atoms for every m in a range, fitted
 * numerically with PETSc/TAO, written to APPROX.h5; and the printing of such files for
 * `headfuse table`. Collective: run it under mpirun (restarts are spread over ranks). */
#include <ctype.h>
#include <math.h>
#include <mpi.h>
#include <petscsys.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/cli_common.h"
#include "headfuse/core.h"
#include "headfuse/approx.h"
#include "headfuse/approx_store.h"
#include "headfuse/report.h"

static const char *usage_text =
    "usage: mpirun -n N headfuse approx (FILE.json | --family NAME:d=N[,k=K]) --atoms A..B\n"
    "                --out APPROX.h5 [--samples N] [--test-samples N] [--restarts R]\n"
    "                [--sigma S] [--seed X] [--from RESULT.h5] [--product-max M] [--force]\n"
    "                [--quiet] [--json] [PETSc options, last: -tao_type T -log_view ...]\n"
    "  For every m in A..B fits one softmax head with m atoms (real keys, biases, values)\n"
    "  to the target by least squares on N queries q ~ N(0, S^2 I) (seeded), and reports\n"
    "  the training and held-out mean squared errors. R random restarts per m (default 8)\n"
    "  plus warm starts: the product-construction head (if it has at most M atoms, default\n"
    "  128), the exact head of --from, and the best (m+1)-head minus its least useful atom.\n"
    "  Defaults: --samples 1000, --test-samples = --samples, --sigma 1, --seed 1.\n"
    "  An existing APPROX.h5 is kept unless --force.\n"
    "  Exit status 1 if a budget with a known exact head misses rounding level.\n";

/* PETSc's options start at the first argument of the form -letter... (after ours). */
static int petsc_start(int argc, char **argv)
{
    for (int i = 1; i < argc; i++)
        if (argv[i][0] == '-' && isalpha((unsigned char)argv[i][1]))
            return i;
    return argc;
}

/* ---------------------------------------------------------------- printing */

/* Where the known exact head comes from, in words. */
static const char *exact_source(const hf_approx_result_t *r)
{
    return !strcmp(r->exact_source, "product") ? "product construction" : "--from witness";
}

/* One budget's note for the text table. */
static const char *row_note(const hf_approx_result_t *r, const hf_approx_row_t *row, char *buf,
                            size_t n)
{
    buf[0] = '\0';
    if (!strcmp(row->status, "rounding")) {
        if (r->exact_atoms > 0 && row->m >= r->exact_atoms)
            snprintf(buf, n, "exact head reached (rounding level)");
        else
            snprintf(buf, n, "rounding level: numerical evidence of an exact %d-atom head", row->m);
    } else if (!strcmp(row->status, "missed")) {
        snprintf(buf, n, "MISSED: an exact %ld-atom head is known", r->exact_atoms);
    }
    return buf;
}

/* The summary under the table: what the numbers say about the exact minimum. */
static void print_summary(FILE *out, const hf_approx_result_t *r, const hf_approx_prov_t *p)
{
    int m;
    switch (hf_report_approx_verdict(r, p, &m)) {
    case HF_VERDICT_NONE:
        fprintf(out, "no budget reached rounding level");
        if (r->exact_atoms > 0)
            fprintf(out, " (the known exact head has %ld atoms)", r->exact_atoms);
        fprintf(out, "\n");
        break;
    case HF_VERDICT_CONFIRMED:
        fprintf(out,
                "exact minimum m* = %d confirmed numerically: rounding level first at m = %d, "
                "and LB = UB = %d is certified exactly\n",
                m, m, m);
        break;
    case HF_VERDICT_AT_EXACT:
        fprintf(out, "rounding level first at m = %d, the size of the known exact head (%s)\n", m,
                exact_source(r));
        break;
    case HF_VERDICT_BELOW:
        fprintf(out,
                "rounding level already at m = %d < %ld atoms of the known exact head: a smaller "
                "exact head probably exists (numerical evidence; decide it with headfuse search)\n",
                m, r->exact_atoms);
        break;
    case HF_VERDICT_AT_LB:
        fprintf(out,
                "rounding level first at m = %d, equal to the exact lower bound: numerically "
                "the exact minimum is %d (certify it with headfuse search)\n",
                m, m);
        break;
    default:
        fprintf(out, "rounding level first at m = %d in the range\n", m);
    }
}

/* What TAO's DIVERGED_* reasons of the best restarts mean here (docs/approx.md, "Reading
 * the reason"), once per reason shown. */
static void print_diverged(FILE *out, const hf_approx_result_t *r)
{
    static const char *const why[][2] = {
        {"DIVERGED_LS_FAILURE", "the line search found no step that lowers the error (a flat "
                                "or rounding-level minimum, or a poor direction)"},
        {"DIVERGED_MAXITS", "the iteration limit came first"},
        {"DIVERGED_MAXFCN", "the limit on function evaluations came first"},
        {"DIVERGED_TR_REDUCTION", "the trust region shrank to nothing"},
        {"DIVERGED_NAN", "the error became NaN or infinite (keys too large for exp)"},
    };
    for (size_t k = 0; k < sizeof why / sizeof *why; k++) {
        int seen = 0;
        for (int i = 0; i < r->nrows && !seen; i++)
            seen = !strcmp(r->rows[i].converged_reason, why[k][0]);
        if (seen)
            fprintf(out,
                    "%s: %s. The row shows the best its restarts found; the least error of "
                    "m atoms may be smaller.\n",
                    why[k][0], why[k][1]);
    }
    for (int i = 0; i < r->nrows; i++)
        if (!strncmp(r->rows[i].converged_reason, "DIVERGED_", 9)) {
            fprintf(out, "(a diverged reason is the best restart's stop; more --restarts or "
                         "another -tao_type may lower such a row)\n");
            break;
        }
}

static void print_text(FILE *out, const hf_approx_result_t *r, const hf_approx_prov_t *p)
{
    char note[128];
    fprintf(out,
            "%s  (d = %d, dv = %d)  samples %ld + %ld test  sigma %g  seed %llu  "
            "restarts %ld random + warm  tao %s  ranks %d\n",
            r->name, r->d, r->dv, r->samples, r->test_samples, r->sigma,
            (unsigned long long)r->seed, r->restarts, r->tao_type, (int)p->ranks);
    if (r->exact_atoms > 0)
        fprintf(out, "exact head known: %ld atoms (%s)", r->exact_atoms, exact_source(r));
    else
        fprintf(out, "no exact head known to the run");
    if (p->lower_bound && p->lower_bound[0])
        fprintf(out, ";  lower bound %s", p->lower_bound);
    fprintf(out, ";  target RMS %.3g\n", r->target_rms);
    fprintf(out, "%5s  %-10s %-10s %-9s %8s %5s  %-8s %6s  %-22s %8s\n", "m", "train RMS",
            "test RMS", "rel error", "restarts", "best", "start", "iters", "reason", "seconds");
    for (int i = 0; i < r->nrows; i++) {
        const hf_approx_row_t *row = r->rows + i;
        row_note(r, row, note, sizeof note);
        /* the test RMS relative to the target's own RMS: 1 is no better than the zero head */
        double rel = r->target_rms > 0 ? hf_report_rms(row->test_mse) / r->target_rms
                                       : hf_report_rms(row->test_mse);
        fprintf(out, "%5d  %-10.3e %-10.3e %-9.2e %8ld %5ld  %-8s %6ld  %-22s %8.2f%s%s\n", row->m,
                hf_report_rms(row->train_mse), hf_report_rms(row->test_mse), rel, row->restarts,
                row->best_restart, row->start, row->iterations, row->converged_reason, row->seconds,
                note[0] ? "  " : "", note);
    }
    print_diverged(out, r);
    print_summary(out, r, p);
}

/* An APPROX.h5 file's table in format fmt (cli_table_approx). */
static void print_approx(const char *path, const hf_approx_result_t *r, const hf_approx_prov_t *p,
                         int fmt)
{
    char note[128];
    switch (fmt) {
    case 1: {
        json_t *a = json_array();
        for (int i = 0; i < r->nrows; i++)
            json_array_append_new(a, hf_report_approx_row_json(r, r->rows + i, path));
        cli_json_print(a);
        break;
    }
    case 2:
        printf("name,d,m,train_mse,test_mse,restarts,best_restart,iterations,converged_reason,"
               "seconds,start,status\n");
        for (int i = 0; i < r->nrows; i++) {
            const hf_approx_row_t *row = r->rows + i;
            printf("%s,%d,%d,%.17g,%.17g,%ld,%ld,%ld,%s,%.3f,%s,%s\n", r->name, r->d, row->m,
                   row->train_mse, row->test_mse, row->restarts, row->best_restart, row->iterations,
                   row->converged_reason, row->seconds, row->start, row->status);
        }
        break;
    case 3:
        printf("| target | m | train RMS | test RMS | restarts | best | start | iterations | "
               "reason | seconds | note |\n");
        printf("|---|---:|---:|---:|---:|---:|---|---:|---|---:|---|\n");
        for (int i = 0; i < r->nrows; i++) {
            const hf_approx_row_t *row = r->rows + i;
            printf("| %s | %d | %.3e | %.3e | %ld | %ld | %s | %ld | %s | %.2f | %s |\n", r->name,
                   row->m, hf_report_rms(row->train_mse), hf_report_rms(row->test_mse),
                   row->restarts, row->best_restart, row->start, row->iterations,
                   row->converged_reason, row->seconds, row_note(r, row, note, sizeof note));
        }
        break;
    default:
        printf("%s\n", path);
        print_text(stdout, r, p);
        break;
    }
    fflush(stdout);
}

int cli_table_approx(const char *path, int fmt)
{
    hf_approx_result_t r;
    hf_approx_prov_t p;
    hf_approx_result_init(&r);
    hf_approx_prov_init(&p);
    hf_err_t e = hf_approx_file_read(path, &r, &p);
    if (e == HF_OK)
        print_approx(path, &r, &p, fmt);
    hf_approx_result_clear(&r);
    hf_approx_prov_clear(&p);
    return e == HF_OK ? 0 : cli_fail("table", e);
}

int cli_cmd_approx(int argc, char **argv)
{
    const char *family = NULL, *out = NULL, *from = NULL, *pos[1];
    long atoms[2] = {0, 0}, samples = 0, test_samples = 0, restarts = 0, pmax = -1;
    int quiet = 0, json = 0, force = 0, npos, status;
    hf_approx_opts_t o;
    hf_approx_opts_default(&o);
    cli_opt_t opts[] = {
        CLI_OPT_STR("--family", &family),
        CLI_OPT_RANGE("--atoms", atoms, 1, HF_APPROX_ATOMS_MAX, "A..B"),
        CLI_OPT_INT("--samples", &samples, 1, HF_APPROX_SAMPLES_MAX, NULL),
        CLI_OPT_INT("--test-samples", &test_samples, 1, HF_APPROX_SAMPLES_MAX, NULL),
        CLI_OPT_INT("--restarts", &restarts, 1, HF_APPROX_RESTARTS_MAX, NULL),
        CLI_OPT_REAL("--sigma", &o.sigma),
        CLI_OPT_U64("--seed", &o.seed),
        CLI_OPT_PATH("--out", &out, "APPROX.h5"),
        CLI_OPT_PATH("--from", &from, NULL),
        CLI_OPT_INT("--product-max", &pmax, 0, HF_APPROX_ATOMS_MAX, NULL),
        CLI_OPT_FLAG("--quiet", &quiet),
        CLI_OPT_FLAG("--json", &json),
        CLI_OPT_FLAG("--force", &force),
        CLI_OPT_END};
    int pstart = petsc_start(argc, argv);
    if ((status = cli_parse("approx", usage_text, pstart, argv, opts, pos, 1, &npos)) != CLI_GO)
        return status;
    o.m_lo = (int)atoms[0];
    o.m_hi = (int)atoms[1];
    if (samples)
        o.samples = o.test_samples = samples;
    if (test_samples)
        o.test_samples = test_samples;
    if (restarts)
        o.restarts = restarts;
    if (pmax >= 0)
        o.product_max = pmax;

    /* PETSc sees the program name and its own options only */
    int pargc = 1 + argc - pstart;
    char **pargv = hf_calloc((size_t)pargc + 1, sizeof *pargv);
    if (!pargv) {
        fprintf(stderr, "headfuse approx: %s\n", hf_error_msg());
        return hf_err_exit_status(HF_ERR_NOMEM);
    }
    pargv[0] = argv[0];
    for (int i = pstart; i < argc; i++)
        pargv[1 + i - pstart] = argv[i];

    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    char **pav = pargv;
    if (PetscInitialize(&pargc, &pav, NULL, NULL) != 0) {
        fprintf(stderr, "headfuse approx: PETSc failed to initialise\n");
        free(pargv);
        MPI_Abort(MPI_COMM_WORLD, 70);
        return 70;
    }
    /* PETSc errors come back as codes and are reported once, with PETSc's message */
    PetscPushErrorHandler(PetscReturnErrorHandler, NULL);

    char start[32];
    hf_campaign_iso_time(start, sizeof start);
    hf_target_t t;
    hf_target_init_empty(&t);
    hf_approx_result_t res;
    hf_approx_prov_t prov;
    int missed = 0;
    hf_approx_result_init(&res);
    hf_approx_prov_init(&prov);
    char *cmdline = hf_campaign_command_line(argc, argv);

    /* find out now, not after the fits, that the file cannot (or must not) be written */
    hf_err_t e = hf_agree_root(
        MPI_COMM_WORLD, rank == 0 ? hf_campaign_check_output("--out", out, force, NULL) : HF_OK);
    if (e == HF_OK)
        e = cli_load_target(npos ? pos[0] : NULL, family, &t);
    HF_CHECK(e, hf_agree_all(MPI_COMM_WORLD, e), fail);
    o.verbose = !quiet && !json;
    hf_campaign_approx_opts_t ao = {
        .out = out, .from = from, .command_line = cmdline, .start = start};
    HF_CHECK(e, hf_campaign_approx(MPI_COMM_WORLD, &t, &o, &ao, &res, &prov), fail);
    for (int i = 0; i < res.nrows; i++)
        missed |= !strcmp(res.rows[i].status, "missed");
    if (rank == 0) {
        if (json) {
            cli_json_print(hf_report_approx_json(&res, &prov, out));
        } else {
            print_text(stdout, &res, &prov);
            printf("-> %s\n", out);
            fflush(stdout);
        }
        if (missed)
            fprintf(stderr, "headfuse approx: check failed: a budget with a known exact head "
                            "did not reach rounding level\n");
    }
    status = missed ? HF_EXIT_NO : 0;
    goto done;
fail:
    status = cli_fail_mpi(MPI_COMM_WORLD, "approx", e);
done:
    hf_approx_prov_clear(&prov);
    hf_approx_result_clear(&res);
    hf_target_clear(&t);
    free(cmdline);
    PetscFinalize();
    free(pargv);
    return cli_mpi_end(status);
}
