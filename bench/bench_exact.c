/* Throughput of the exact support test, one core.
 *
 * A: random 8-key supports of W_3 inside {0,1,2}^3 (seeded, distinct keys), the typical
 *    search load: almost all are rejected by the modular rank.
 * B: every nonempty subset of {0..7} for the strict-positivity trap target (one head,
 *    keys 0,1,2, values 0,1,2), repeated: about half the supports get past the modular
 *    rank, so this measures the exact path (null space, signs, simplex, witnesses).
 * Each set is decided with the modular shortcut (hf_exact_check) and without it
 * (hf_exact_check_nomod); the decisions must agree. Each timing is the best of `reps`
 * runs with a fresh tester, so that a busy machine disturbs it less.
 *   bench_exact [supports=200000] [seed=1] [reps=3] */
#include <stdint.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "headfuse/bounds.h"
#include "headfuse/exact.h"
#include "exact/exact_impl.h"

/* A list of supports of possibly different sizes. */
typedef struct {
    const char *name;
    int d;
    long n;    /* supports */
    long *off; /* n + 1 offsets into keys, in keys (not coordinates) */
    int64_t *keys;
} support_set_t;

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

static void push_atom(hf_head_t *h, int64_t k0, int64_t k1, int64_t k2, long v)
{
    int64_t k[3] = {k0, k1, k2};
    fmpq_t w, x;
    fmpq_init(w);
    fmpq_init(x);
    fmpq_one(w);
    fmpq_set_si(x, v, 1);
    if (hf_head_push(h, k, w, x) != HF_OK) {
        fprintf(stderr, "bench_exact: %s\n", hf_error_msg());
        exit(1);
    }
    fmpq_clear(x);
    fmpq_clear(w);
}

/* Decide every support of s; returns seconds and fills dec (feasible bit | reason << 1). */
static double run(hf_exact_t *e, int mod, const support_set_t *s, unsigned char *dec, hf_err_t *err)
{
    int feasible;
    hf_reason_t reason;
    double t0 = now();
    for (long i = 0; i < s->n; i++) {
        long m = s->off[i + 1] - s->off[i];
        const int64_t *k = s->keys + s->off[i] * s->d;
        *err = mod ? hf_exact_check(e, m, k, &feasible, &reason, NULL)
                   : hf_exact_check_nomod(e, m, k, &feasible, &reason, NULL);
        if (*err != HF_OK)
            break;
        dec[i] = (unsigned char)(feasible | reason << 1);
    }
    return now() - t0;
}

/* Time both paths on one set and print a block. Returns 0 when the decisions agree. */
static int bench_set(const hf_target_t *t, const support_set_t *s, int reps)
{
    hf_fraction_t f;
    hf_fraction_init(&f);
    hf_exact_t *em = NULL, *en = NULL;
    hf_err_t err = HF_OK;
    unsigned char *dm = malloc((size_t)s->n), *dn = malloc((size_t)s->n);
    double tm = 1e300, tn = 1e300;
    int status = 1;
    if (!dm || !dn || hf_fraction_from_target(&f, t) != HF_OK) {
        fprintf(stderr, "bench_exact: %s\n", hf_error_msg());
        exit(1);
    }
    for (int rep = 0; rep < reps; rep++) {
        hf_exact_destroy(&em);
        hf_exact_destroy(&en);
        if (hf_exact_create(&f, &em) != HF_OK || hf_exact_create(&f, &en) != HF_OK)
            goto cleanup;
        double t1 = run(em, 1, s, dm, &err);
        if (err != HF_OK)
            goto cleanup;
        double t2 = run(en, 0, s, dn, &err);
        if (err != HF_OK)
            goto cleanup;
        tm = t1 < tm ? t1 : tm;
        tn = t2 < tn ? t2 : tn;
    }
    long disagree = 0;
    for (long i = 0; i < s->n; i++)
        disagree += (dm[i] & 1) != (dn[i] & 1);
    const hf_exact_stats_t *st = hf_exact_stats(em);
    printf("%s\n", s->name);
    printf("  supports                 %ld\n", s->n);
    printf("  feasible                 %ld\n", st->feasible);
    for (int r = 0; r <= HF_REASON_BAD_SUPPORT; r++)
        printf("  reason %-17s %ld (%.2f%%)\n", hf_reason_name((hf_reason_t)r), st->by_reason[r],
               100.0 * (double)st->by_reason[r] / (double)s->n);
    printf("  with modular rank        %.0f supports/s (%.2f us each)\n", (double)s->n / tm,
           1e6 * tm / (double)s->n);
    printf("  exact only (nomod)       %.0f supports/s (%.2f us each)\n", (double)s->n / tn,
           1e6 * tn / (double)s->n);
    printf("  speed-up                 %.1fx\n", tn / tm);
    printf("  decisions disagreeing    %ld\n", disagree);
    status = disagree ? 1 : 0;
cleanup:
    if (err != HF_OK || !em || !en)
        fprintf(stderr, "bench_exact: %s\n", hf_error_msg());
    hf_exact_destroy(&en);
    hf_exact_destroy(&em);
    hf_fraction_clear(&f);
    free(dn);
    free(dm);
    return status;
}

/* Decide the product head's support of a family target in both forms; both must say
 * feasible. */
static int bench_large(const char *spec)
{
    hf_target_t t;
    hf_target_init_empty(&t);
    hf_fraction_t f;
    hf_fraction_init(&f);
    hf_exact_t *e = NULL;
    hf_head_t h;
    int status = 0;
    if (hf_target_from_family(&t, spec) != HF_OK)
        return 1;
    hf_head_init(&h, t.d, t.dv);
    if (hf_bounds_product_head(&t, 1L << 16, &h) != HF_OK ||
        hf_fraction_from_target(&f, &t) != HF_OK || hf_exact_create(&f, &e) != HF_OK)
        return 1;
    int fd = 0, fr = 0, applicable = 0;
    hf_reason_t r;
    double t0 = now();
    hf_err_t e1 = hf_exact_check_direct(e, h.natoms, h.keys, &fd, &r, NULL);
    double t1 = now();
    hf_err_t e2 = hf_exact_check_rspace(e, h.natoms, h.keys, &fr, &r, NULL, &applicable);
    double t2 = now();
    if (e1 != HF_OK || e2 != HF_OK || !fd || !fr || !applicable)
        status = 1;
    printf("  %-10s %5ld keys: direct %8.4f s, R-space %8.4f s (%ld unknowns), ratio %.0fx%s\n",
           spec, h.natoms, t1 - t0, t2 - t1, hf_exact_rspace_size(e, h.natoms, h.keys, LONG_MAX),
           (t1 - t0) / (t2 - t1 > 1e-9 ? t2 - t1 : 1e-9), status ? "  MISMATCH" : "");
    hf_exact_destroy(&e);
    hf_fraction_clear(&f);
    hf_head_clear(&h);
    hf_target_clear(&t);
    return status;
}

int main(int argc, char **argv)
{
    long n = argc > 1 ? atol(argv[1]) : 200000;
    rng_state = argc > 2 ? strtoull(argv[2], NULL, 10) : 1;
    int reps = argc > 3 ? atoi(argv[3]) : 3;
    int status = 0;
    char name[200];
    if (n < 1 || reps < 1) {
        fprintf(stderr, "usage: bench_exact [supports>0] [seed] [reps>0]\n");
        return 2;
    }

    /* A: W_3, random 8-key supports in {0,1,2}^3 */
    hf_target_t w3;
    if (hf_target_init(&w3, "wd:d=3", 3, 1) != HF_OK)
        return 1;
    for (int j = 0; j < 3; j++) {
        hf_head_t h;
        hf_head_init(&h, 3, 1);
        push_atom(&h, 0, 0, 0, 0);
        push_atom(&h, j == 0, j == 1, j == 2, 1);
        if (hf_target_add_head(&w3, &h) != HF_OK)
            return 1;
        hf_head_clear(&h);
    }
    support_set_t a = {name, 3, n, malloc((size_t)(n + 1) * sizeof(long)),
                       malloc((size_t)n * 8 * 3 * sizeof(int64_t))};
    if (!a.off || !a.keys)
        return 1;
    for (long s = 0; s <= n; s++)
        a.off[s] = 8 * s;
    for (long s = 0; s < n; s++) {
        int idx[27];
        for (int i = 0; i < 27; i++)
            idx[i] = i;
        for (int i = 0; i < 8; i++) { /* partial Fisher-Yates: 8 distinct points of 27 */
            int j = i + (int)(rng() % (uint64_t)(27 - i));
            int x = idx[i];
            idx[i] = idx[j];
            idx[j] = x;
            for (int c = 0, p = idx[i]; c < 3; c++, p /= 3)
                a.keys[(8 * s + i) * 3 + c] = p % 3;
        }
    }
    snprintf(name, sizeof name,
             "A: W_3, random 8-key supports in {0,1,2}^3, seed %s, one core, best of %d",
             argc > 2 ? argv[2] : "1", reps);
    status |= bench_set(&w3, &a, reps);
    free(a.keys);
    free(a.off);
    hf_target_clear(&w3);

    /* B: the trap target, every nonempty subset of {0..7}, 100 passes */
    hf_target_t trap;
    hf_head_t h;
    if (hf_target_init(&trap, "trap", 1, 1) != HF_OK)
        return 1;
    hf_head_init(&h, 1, 1);
    for (int k = 0; k < 3; k++)
        push_atom(&h, k, 0, 0, k);
    if (hf_target_add_head(&trap, &h) != HF_OK)
        return 1;
    hf_head_clear(&h);
    long passes = 100, nb = 255 * passes;
    support_set_t b = {name, 1, nb, malloc((size_t)(nb + 1) * sizeof(long)),
                       malloc((size_t)nb * 8 * sizeof(int64_t))};
    if (!b.off || !b.keys)
        return 1;
    long at = 0;
    for (long s = 0; s < nb; s++) {
        unsigned mask = (unsigned)(s % 255) + 1;
        b.off[s] = at;
        for (int k = 0; k < 8; k++)
            if (mask >> k & 1)
                b.keys[at++] = k;
    }
    b.off[nb] = at;
    snprintf(name, sizeof name,
             "B: trap target (Q = 1 + x + x^2), all 255 supports in {0..7} x %ld, best of %d",
             passes, reps);
    status |= bench_set(&trap, &b, reps);
    free(b.keys);
    free(b.off);
    hf_target_clear(&trap);

    /* C: one large feasible support (the product head's keys), direct form against
     * R-space (docs/exact-test.md §6a) */
    static const char *const large[] = {"chain:d=3", "chain:d=4", "wd:d=6", "wd:d=7"};
    printf("C: the product support, direct form against R-space (one decision each)\n");
    for (size_t i = 0; i < sizeof large / sizeof *large; i++)
        status |= bench_large(large[i]);
    return status;
}
