/* P/Q in slices against the whole construction, one core, in one process
 * (docs/exact-test.md §1b).
 *
 *   bench_slices [--want W] [--from A] [--to B] [--keep] [--check] [--order slices|whole]
 *                SPEC
 *
 * SPEC is a family (chain:d=12) or a target JSON file. The plan slices the coordinates
 * A..B (default: all) into at least W slices (default 16). Then, in one process, every
 * slice is built alone (hf_fraction_slices_build with one index a call), each cleared
 * before the next unless --keep, and the whole P/Q (hf_fraction_from_target) is built:
 * slices first by default, so that the process's peak resident memory (getrusage) after
 * the slices is theirs and after the whole is the whole's (--order whole reverses it,
 * for the slices' time after the whole's warm-up). The line gives the plan, the
 * estimates, the wall and CPU seconds of each, the ratio slices/whole, the largest
 * slice's terms and both peaks. --check (implies --keep) divides the slices by the gcd
 * of their contents and checks that they add up to the whole P/Q exactly, each holding
 * only its own Sigma-exponents. Run one SPEC per process: the peaks are the process's. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#include "headfuse/algebra.h"
#include "algebra/algebra_impl.h"

static double clock_s(clockid_t id)
{
    struct timespec ts;
    clock_gettime(id, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static double peak_mib(void)
{
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return (double)ru.ru_maxrss / 1024.0; /* kilobytes on Linux */
}

static void die(const char *what)
{
    fprintf(stderr, "bench_slices: %s: %s\n", what, hf_error_msg());
    exit(1);
}

static long terms(const hf_fraction_t *f)
{
    long n = f->Q->length;
    for (int j = 0; j < f->dv; j++)
        n += f->P[j].length;
    return n;
}

typedef struct {
    double wall, cpu, peak;
    long max_terms, total_terms;
} run_t;

/* Every slice alone, one call each; kept in kept[] when kept is not NULL. */
static run_t run_slices(const hf_target_t *t, const hf_slice_plan_t *plan, hf_fraction_t *kept,
                        fmpz_t g)
{
    run_t r = {0};
    double c0 = clock_s(CLOCK_PROCESS_CPUTIME_ID), t0 = clock_s(CLOCK_MONOTONIC);
    fmpz_t c;
    fmpz_init(c);
    fmpz_zero(g);
    for (long i = 0; i < plan->nslices; i++) {
        hf_fraction_t one, *f = kept ? kept + i : &one;
        hf_fraction_init(f);
        if (hf_fraction_slices_build(t, plan, &i, 1, f, c) != HF_OK)
            die("slices");
        fmpz_gcd(g, g, c);
        long n = terms(f);
        r.total_terms += n;
        r.max_terms = n > r.max_terms ? n : r.max_terms;
        if (!kept)
            hf_fraction_clear(f);
    }
    r.wall = clock_s(CLOCK_MONOTONIC) - t0;
    r.cpu = clock_s(CLOCK_PROCESS_CPUTIME_ID) - c0;
    r.peak = peak_mib();
    fmpz_clear(c);
    return r;
}

static run_t run_whole(const hf_target_t *t, hf_fraction_t *f)
{
    run_t r = {0};
    double c0 = clock_s(CLOCK_PROCESS_CPUTIME_ID), t0 = clock_s(CLOCK_MONOTONIC);
    if (hf_fraction_from_target(f, t) != HF_OK)
        die("whole");
    r.wall = clock_s(CLOCK_MONOTONIC) - t0;
    r.cpu = clock_s(CLOCK_PROCESS_CPUTIME_ID) - c0;
    r.peak = peak_mib();
    r.total_terms = r.max_terms = terms(f);
    return r;
}

/* The slices (divided by g) add up to F, each with only its own Sigma-exponents. */
static int check(const hf_slice_plan_t *plan, hf_fraction_t *s, const hf_fraction_t *F,
                 const fmpz_t g)
{
    int ok = 1;
    int64_t e[HF_D_MAX];
    hf_fraction_t sum;
    if (hf_fraction_alloc(&sum, F->d, F->dv) != HF_OK)
        die("check");
    fmpz_mpoly_zero(sum.Q, sum.ctx);
    for (long i = 0; i < plan->nslices && ok; i++) {
        hf_fraction_slice_divide(s + i, g);
        hf_fraction_slice_values(plan, i, e);
        for (int j = 0; j <= F->dv; j++) {
            const fmpz_mpoly_struct *A = j < F->dv ? s[i].P + j : s[i].Q;
            for (slong k = 0; k < A->length && ok; k++)
                for (int c = 0; c < plan->ns; c++)
                    ok = ok && (int64_t)fmpz_mpoly_get_term_var_exp_ui(A, k, plan->coord[c],
                                                                       s[i].ctx) == e[c];
            fmpz_mpoly_struct *B = j < F->dv ? sum.P + j : sum.Q;
            fmpz_mpoly_add(B, B, A, sum.ctx);
        }
    }
    ok = ok && hf_fraction_equal(&sum, F);
    hf_fraction_clear(&sum);
    return ok;
}

int main(int argc, char **argv)
{
    long want = 16;
    int from = 0, to = HF_D_MAX - 1, keep = 0, do_check = 0, whole_first = 0;
    const char *spec = NULL;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--want") && i + 1 < argc)
            want = atol(argv[++i]);
        else if (!strcmp(argv[i], "--from") && i + 1 < argc)
            from = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--to") && i + 1 < argc)
            to = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--keep"))
            keep = 1;
        else if (!strcmp(argv[i], "--check"))
            keep = do_check = 1;
        else if (!strcmp(argv[i], "--order") && i + 1 < argc)
            whole_first = !strcmp(argv[++i], "whole");
        else if (!spec && argv[i][0] != '-')
            spec = argv[i];
        else
            spec = NULL, i = argc;
    }
    if (!spec) {
        fprintf(stderr, "usage: bench_slices [--want W] [--from A] [--to B] [--keep] [--check] "
                        "[--order slices|whole] SPEC\n");
        return 2;
    }
    hf_target_t t;
    hf_target_init_empty(&t);
    hf_err_t err = strchr(spec, ':') && !strstr(spec, ".json") ? hf_target_from_family(&t, spec)
                                                               : hf_target_load_json(&t, spec);
    if (err != HF_OK)
        die(spec);
    int allowed[HF_D_MAX] = {0};
    for (int a = from; a <= to && a < HF_D_MAX; a++)
        allowed[a] = 1;
    double base = peak_mib(), t0 = clock_s(CLOCK_MONOTONIC), est_whole, est_slice;
    hf_slice_plan_t plan;
    if (hf_fraction_slice_plan(&t, allowed, want, &plan) != HF_OK)
        die("plan");
    double plan_s = clock_s(CLOCK_MONOTONIC) - t0;
    if (hf_fraction_estimate(&t, &est_whole) != HF_OK ||
        hf_fraction_slices_estimate(&t, &plan, &est_slice) != HF_OK)
        die("estimate");
    printf("%s: %ld slices on coordinates", spec, plan.nslices);
    for (int i = 0; i < plan.ns; i++)
        printf(" %d (0..%ld)", plan.coord[i], (long)plan.ext[i]);
    printf(", %s, plan %.3f s, estimate whole %.1f MiB, slice %.1f MiB, base %.1f MiB\n",
           plan.windowed ? "windowed" : plan.why, plan_s, est_whole / 1048576.0,
           est_slice / 1048576.0, base);
    fflush(stdout);

    hf_fraction_t *kept = keep ? calloc((size_t)plan.nslices, sizeof *kept) : NULL, whole;
    hf_fraction_init(&whole);
    fmpz_t g;
    fmpz_init(g);
    run_t s, w;
    if (whole_first) {
        w = run_whole(&t, &whole);
        if (!do_check)
            hf_fraction_clear(&whole);
        s = run_slices(&t, &plan, kept, g);
    } else {
        s = run_slices(&t, &plan, kept, g);
        w = run_whole(&t, &whole);
    }
    printf("  slices %.3f s (cpu %.3f), whole %.3f s (cpu %.3f), slices/whole wall %.3f cpu "
           "%.3f; terms %ld in all, largest slice %ld (%.3f); peak %s%.1f MiB after the "
           "slices%s, %.1f MiB after the whole",
           s.wall, s.cpu, w.wall, w.cpu, s.wall / w.wall, s.cpu / w.cpu, s.total_terms, s.max_terms,
           (double)s.max_terms / (double)w.total_terms, whole_first ? "(max) " : "", s.peak,
           keep ? " (all kept)" : " (one at a time)", w.peak);
    if (!whole_first)
        printf(" (%.3f of it; net of the base %.3f)", s.peak / w.peak,
               (s.peak - base) / (w.peak - base));
    printf("\n");
    if (do_check) {
        int ok = check(&plan, kept, &whole, g);
        printf("  check: the slices / ");
        fmpz_print(g);
        printf(" %s the whole P/Q\n", ok ? "are exactly" : "DIFFER FROM");
        if (!ok)
            return 1;
    }
    for (long i = 0; kept && i < plan.nslices; i++)
        hf_fraction_clear(kept + i);
    free(kept);
    fmpz_clear(g);
    hf_fraction_clear(&whole);
    hf_target_clear(&t);
    flint_cleanup();
    return 0;
}
