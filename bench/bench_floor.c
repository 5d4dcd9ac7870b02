/* The floor of a large row: the bare FLINT product of its heads' denominators, Q before
 * any reduction (issue 37, "against the floor"; docs/performance.md §18).
 *
 *   bench_floor [--reps R] SPEC...
 *
 * SPEC is a family (chain:d=13) or a target JSON file. For each, the heads' denominators
 * D_h = sum_i w_i x^(k_i - lo_h) (integer weights: each head scaled by the lcm of its
 * weights' denominators) are multiplied in head order with fmpz_mpoly_mul, R times
 * (default 3), in one process on one core. The line gives the median wall and CPU seconds
 * and the product's terms. No search, no P, no gcd: what no search of the row can avoid,
 * since every key of its minimal support is a term of Q. bench/floor.sh pairs it with the
 * search. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <flint/fmpz_mpoly.h>

#include "headfuse/target.h"

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

/* Head h's denominator with integer coefficients, keys shifted to minimum 0. */
static void denominator(const hf_head_t *h, fmpz_mpoly_t D, const fmpz_mpoly_ctx_t ctx)
{
    int d = h->d;
    ulong exp[HF_D_MAX];
    int64_t lo[HF_D_MAX];
    fmpz_t L, c;
    fmpz_init(L);
    fmpz_init(c);
    for (int a = 0; a < d; a++) {
        lo[a] = h->keys[a];
        for (long i = 1; i < h->natoms; i++)
            lo[a] = h->keys[i * d + a] < lo[a] ? h->keys[i * d + a] : lo[a];
    }
    fmpz_one(L);
    for (long i = 0; i < h->natoms; i++)
        fmpz_lcm(L, L, fmpq_denref(h->weights + i));
    fmpz_mpoly_zero(D, ctx);
    for (long i = 0; i < h->natoms; i++) {
        for (int a = 0; a < d; a++)
            exp[a] = (ulong)(h->keys[i * d + a] - lo[a]);
        fmpz_divexact(c, L, fmpq_denref(h->weights + i));
        fmpz_mul(c, c, fmpq_numref(h->weights + i));
        fmpz_mpoly_push_term_fmpz_ui(D, c, exp, ctx);
    }
    fmpz_mpoly_sort_terms(D, ctx);
    fmpz_mpoly_combine_like_terms(D, ctx);
    fmpz_clear(c);
    fmpz_clear(L);
}

int main(int argc, char **argv)
{
    int reps = 3, first = 1;
    if (argc > 2 && !strcmp(argv[1], "--reps")) {
        reps = atoi(argv[2]);
        first = 3;
    }
    if (reps < 1 || first >= argc) {
        fprintf(stderr, "usage: bench_floor [--reps R] SPEC...\n");
        return 2;
    }
    for (int k = first; k < argc; k++) {
        const char *spec = argv[k];
        hf_target_t t;
        hf_target_init_empty(&t);
        hf_err_t err = strchr(spec, ':') && !strstr(spec, ".json") ? hf_target_from_family(&t, spec)
                                                                   : hf_target_load_json(&t, spec);
        if (err != HF_OK) {
            fprintf(stderr, "bench_floor: %s: %s\n", spec, hf_error_msg());
            return 1;
        }
        fmpz_mpoly_ctx_t ctx;
        fmpz_mpoly_ctx_init(ctx, t.d, ORD_LEX);
        fmpz_mpoly_t Q, D, T;
        fmpz_mpoly_init(Q, ctx);
        fmpz_mpoly_init(D, ctx);
        fmpz_mpoly_init(T, ctx);
        double *wall = malloc((size_t)reps * sizeof *wall),
               *cpu = malloc((size_t)reps * sizeof *cpu);
        for (int r = 0; r < reps; r++) {
            double c0 = clock_s(CLOCK_PROCESS_CPUTIME_ID), t0 = clock_s(CLOCK_MONOTONIC);
            fmpz_mpoly_one(Q, ctx);
            for (int h = 0; h < t.nheads; h++) {
                denominator(t.heads + h, D, ctx);
                fmpz_mpoly_mul(T, Q, D, ctx);
                fmpz_mpoly_swap(Q, T, ctx);
            }
            wall[r] = clock_s(CLOCK_MONOTONIC) - t0;
            cpu[r] = clock_s(CLOCK_PROCESS_CPUTIME_ID) - c0;
        }
        qsort(wall, (size_t)reps, sizeof *wall, cmp_double);
        qsort(cpu, (size_t)reps, sizeof *cpu, cmp_double);
        printf("%s: product of %d denominators, %ld terms: %.3f s wall, %.3f s CPU (median of "
               "%d)\n",
               spec, t.nheads, (long)Q->length, wall[reps / 2], cpu[reps / 2], reps);
        fflush(stdout);
        free(wall);
        free(cpu);
        fmpz_mpoly_clear(T, ctx);
        fmpz_mpoly_clear(D, ctx);
        fmpz_mpoly_clear(Q, ctx);
        fmpz_mpoly_ctx_clear(ctx);
        hf_target_clear(&t);
    }
    return 0;
}
