/* Throughput of the exact support test: random 8-key supports of W_3 inside {0,1,2}^3,
 * decided with the modular rank shortcut (hf_exact_check) and without it
 * (hf_exact_check_nomod) on the same supports, one core. Each timing is the best of
 * `reps` runs with a fresh tester, so that a busy machine disturbs it less.
 *   bench_exact [supports=200000] [seed=1] [reps=3] */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "headfuse/exact.h"

#define D 3
#define M 8

static uint64_t rng_state;
static uint64_t rng(void)
{
    uint64_t z = (rng_state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static int fail(const char *what)
{
    fprintf(stderr, "bench_exact: %s: %s\n", what, hf_error_msg());
    return 1;
}

/* Decide every support; returns seconds, fills the decisions. */
static double run(hf_exact_t *e, int mod, long n, const int64_t *keys, unsigned char *dec,
                  hf_err_t *err)
{
    int feasible;
    hf_reason_t reason;
    double t0 = now();
    for (long s = 0; s < n; s++) {
        *err = mod ? hf_exact_check(e, M, keys + s * M * D, &feasible, &reason, NULL)
                   : hf_exact_check_nomod(e, M, keys + s * M * D, &feasible, &reason, NULL);
        if (*err != HF_OK)
            break;
        dec[s] = (unsigned char)(feasible | reason << 1);
    }
    return now() - t0;
}

int main(int argc, char **argv)
{
    long n = argc > 1 ? atol(argv[1]) : 200000;
    rng_state = argc > 2 ? strtoull(argv[2], NULL, 10) : 1;
    int status = 1;
    hf_target_t t;
    hf_fraction_t f;
    hf_exact_t *em = NULL, *en = NULL;
    hf_err_t err;
    int64_t *keys = malloc((size_t)n * M * D * sizeof *keys);
    unsigned char *dm = malloc((size_t)n), *dn = malloc((size_t)n);
    if (n < 1 || !keys || !dm || !dn) {
        fprintf(stderr, "bench_exact: bad size or out of memory\n");
        return 1;
    }

    /* W_3 = sigma(q1) + sigma(q2) + sigma(q3) */
    if (hf_target_init(&t, "wd:d=3", D, 1) != HF_OK)
        return fail("target");
    for (int j = 0; j < D; j++) {
        hf_head_t h;
        int64_t k[D] = {0};
        fmpq_t w, v;
        fmpq_init(w);
        fmpq_init(v);
        fmpq_one(w);
        hf_head_init(&h, D, 1);
        if (hf_head_push(&h, k, w, v) != HF_OK)
            return fail("head");
        k[j] = 1;
        fmpq_one(v);
        if (hf_head_push(&h, k, w, v) != HF_OK || hf_target_add_head(&t, &h) != HF_OK)
            return fail("head");
        hf_head_clear(&h);
        fmpq_clear(v);
        fmpq_clear(w);
    }
    if (hf_fraction_from_target(&f, &t) != HF_OK)
        return fail("fraction");

    /* supports: 8 distinct points of {0,1,2}^3 (partial Fisher-Yates over the 27) */
    for (long s = 0; s < n; s++) {
        int idx[27];
        for (int i = 0; i < 27; i++)
            idx[i] = i;
        for (int i = 0; i < M; i++) {
            int j = i + (int)(rng() % (uint64_t)(27 - i));
            int x = idx[i];
            idx[i] = idx[j];
            idx[j] = x;
            int p = idx[i];
            for (int a = 0; a < D; a++, p /= 3)
                keys[(s * M + i) * D + a] = p % 3;
        }
    }

    int reps = argc > 3 ? atoi(argv[3]) : 3;
    double tm = 1e300, tn = 1e300;
    for (int rep = 0; rep < (reps > 0 ? reps : 1); rep++) {
        hf_exact_destroy(&em);
        hf_exact_destroy(&en);
        if (hf_exact_create(&f, &em) != HF_OK || hf_exact_create(&f, &en) != HF_OK) {
            fail("tester");
            goto cleanup;
        }
        double t1 = run(em, 1, n, keys, dm, &err);
        if (err != HF_OK) {
            fail("hf_exact_check");
            goto cleanup;
        }
        double t2 = run(en, 0, n, keys, dn, &err);
        if (err != HF_OK) {
            fail("hf_exact_check_nomod");
            goto cleanup;
        }
        tm = t1 < tm ? t1 : tm;
        tn = t2 < tn ? t2 : tn;
    }
    long disagree = 0;
    for (long s = 0; s < n; s++)
        disagree += (dm[s] & 1) != (dn[s] & 1);

    const hf_exact_stats_t *sm = hf_exact_stats(em), *sn = hf_exact_stats(en);
    printf("bench_exact: W_3, random %d-key supports in {0,1,2}^3, seed %s, one core, "
           "best of %d\n",
           M, argc > 2 ? argv[2] : "1", reps > 0 ? reps : 1);
    printf("  supports                 %ld\n", n);
    printf("  feasible                 %ld\n", sm->feasible);
    for (int r = 0; r <= HF_REASON_BAD_SUPPORT; r++)
        printf("  reason %-17s %ld (%.2f%%)\n", hf_reason_name((hf_reason_t)r), sm->by_reason[r],
               100.0 * (double)sm->by_reason[r] / (double)n);
    printf("  with modular rank        %.0f supports/s (%.2f us each)\n", (double)n / tm,
           1e6 * tm / (double)n);
    printf("  exact only (nomod)       %.0f supports/s (%.2f us each)\n", (double)n / tn,
           1e6 * tn / (double)n);
    printf("  speed-up                 %.1fx\n", tn / tm);
    printf("  decisions disagreeing    %ld (nomod feasible %ld)\n", disagree, sn->feasible);
    status = disagree ? 1 : 0;

cleanup:
    hf_exact_destroy(&en);
    hf_exact_destroy(&em);
    hf_fraction_clear(&f);
    hf_target_clear(&t);
    free(dn);
    free(dm);
    free(keys);
    return status;
}
