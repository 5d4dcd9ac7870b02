/* Building P/Q, one core: the factor construction (hf_fraction_from_target) against the
 * gcd construction it replaced (hf_fraction_from_gcds), in one process.
 *
 *   bench_fraction [--method both|new|old] [--reps R] SPEC...
 *
 * SPEC is a family (chain:d=10) or a target JSON file. With both (the default) the two
 * constructions run in turn R times (new, old, new, old, ...), the two fractions must
 * be identical, and the line gives each one's median wall seconds and the medians of
 * the per-pair ratios new/old of wall and of CPU seconds (the CPU clock of the process:
 * steadier than the wall clock on a shared machine). With new or old only that construction runs
 * (for its own peak memory: run one SPEC per process). Each line also gives the terms of Q and of P
 * (summed over the value components), the estimate of hf_fraction_estimate and the
 * process's peak resident memory so far (getrusage). Times are medians, wall and (in
 * parentheses) CPU seconds of the process. */
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

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof *v, cmp_double);
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

static void die(const char *what)
{
    fprintf(stderr, "bench_fraction: %s: %s\n", what, hf_error_msg());
    exit(1);
}

/* Time one construction (wall seconds, *cpu CPU seconds); the fraction is kept in *f
 * (initialised by the call). */
static double build(hf_fraction_t *f, const hf_target_t *t, int old, double *cpu)
{
    double c0 = clock_s(CLOCK_PROCESS_CPUTIME_ID), t0 = clock_s(CLOCK_MONOTONIC);
    hf_err_t err = old ? hf_fraction_from_gcds(f, t) : hf_fraction_from_target(f, t);
    double s = clock_s(CLOCK_MONOTONIC) - t0;
    *cpu = clock_s(CLOCK_PROCESS_CPUTIME_ID) - c0;
    if (err != HF_OK)
        die(old ? "gcd construction" : "factor construction");
    return s;
}

static long p_terms(const hf_fraction_t *f)
{
    long n = 0;
    for (int j = 0; j < f->dv; j++)
        n += f->P[j].length;
    return n;
}

static double peak_mib(void)
{
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return (double)ru.ru_maxrss / 1024.0; /* kilobytes on Linux */
}

static void bench_one(const char *spec, const char *method, int reps)
{
    hf_target_t t;
    hf_target_init_empty(&t);
    hf_err_t err = strchr(spec, ':') && !strstr(spec, ".json") ? hf_target_from_family(&t, spec)
                                                               : hf_target_load_json(&t, spec);
    if (err != HF_OK)
        die(spec);
    double est;
    if (hf_fraction_estimate(&t, &est) != HF_OK)
        die("estimate");
    int run_new = strcmp(method, "old") != 0, run_old = strcmp(method, "new") != 0;
    double *tn = calloc((size_t)reps, sizeof *tn), *to = calloc((size_t)reps, sizeof *to);
    double *ratio = calloc((size_t)reps, sizeof *ratio),
           *cratio = calloc((size_t)reps, sizeof *cratio);
    double cn = 0, co = 0;
    double *cpun = calloc((size_t)reps, sizeof *cpun), *cpuo = calloc((size_t)reps, sizeof *cpuo);
    long qt = 0, pt = 0;
    for (int r = 0; r < reps; r++) {
        hf_fraction_t a, b;
        hf_fraction_init(&a);
        hf_fraction_init(&b);
        if (run_new)
            tn[r] = build(&a, &t, 0, &cn);
        if (run_old)
            to[r] = build(&b, &t, 1, &co);
        cpun[r] = cn;
        cpuo[r] = co;
        if (run_new && run_old) {
            if (!hf_fraction_equal(&a, &b)) {
                fprintf(stderr, "bench_fraction: %s: the two constructions differ\n", spec);
                exit(1);
            }
            ratio[r] = tn[r] / to[r];
            cratio[r] = cn / co;
        }
        const hf_fraction_t *f = run_new ? &a : &b;
        qt = f->Q->length;
        pt = p_terms(f);
        if (run_new)
            hf_fraction_clear(&a);
        if (run_old)
            hf_fraction_clear(&b);
    }
    printf("%s: Q %ld terms, P %ld terms, estimate %.1f MiB", spec, qt, pt,
           est / (1024.0 * 1024.0));
    if (run_new)
        printf(", new %.3f s (cpu %.3f s)", median(tn, reps), median(cpun, reps));
    if (run_old)
        printf(", old %.3f s (cpu %.3f s)", median(to, reps), median(cpuo, reps));
    if (run_new && run_old)
        printf(", new/old wall %.3f cpu %.3f", median(ratio, reps), median(cratio, reps));
    printf(", peak %.1f MiB\n", peak_mib());
    fflush(stdout);
    free(cpuo);
    free(cpun);
    free(cratio);
    free(ratio);
    free(to);
    free(tn);
    hf_target_clear(&t);
}

int main(int argc, char **argv)
{
    const char *method = "both";
    int reps = 3, nspec = 0;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--method") && i + 1 < argc)
            method = argv[++i];
        else if (!strcmp(argv[i], "--reps") && i + 1 < argc)
            reps = atoi(argv[++i]);
        else
            nspec++;
    }
    if (nspec == 0 || reps < 1 ||
        (strcmp(method, "both") && strcmp(method, "new") && strcmp(method, "old"))) {
        fprintf(stderr, "usage: bench_fraction [--method both|new|old] [--reps R] SPEC...\n");
        return 2;
    }
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--method") || !strcmp(argv[i], "--reps")) {
            i++;
            continue;
        }
        bench_one(argv[i], method, reps);
    }
    flint_cleanup();
    return 0;
}
