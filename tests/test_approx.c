/* Tests of the approximation module: the generator against splitmix64's reference
 * output, the analytic Jacobian and gradient against central differences on random
 * heads, exact heads in floating point, warm starts, one TAO solve, the whole table for
 * W_2 (exact at m = 4, larger below, never increasing), bad options, and APPROX.h5
 * written and read back (plus a truncated file and a foreign file). PETSc is
 * initialised by the second suite only (one process: MPI_COMM_WORLD has one rank). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <hdf5.h>
#include <petscsys.h>

#include "headfuse/approx.h"
#include "headfuse/approx_store.h"
#include "headfuse/bounds.h"
#include "headfuse/store.h"
#include "unit.h"

/* ---------------------------------------------------------------- helpers */

/* A random head: keys, biases normal; values uniform in [-2, 2]. */
static void random_head(hf_approx_head_t *h, hf_rng_t *rng)
{
    for (int i = 0; i < h->m * h->d; i++)
        h->keys[i] = hf_rng_normal(rng);
    for (int i = 0; i < h->m; i++)
        h->biases[i] = hf_rng_normal(rng);
    for (int i = 0; i < h->m * h->dv; i++)
        h->values[i] = 4 * hf_rng_uniform(rng) - 2;
}

/* hf_approx_mse, which must succeed here. */
static double mse_of(const hf_approx_head_t *h, const hf_approx_data_t *s)
{
    double e = NAN;
    CU_ASSERT_EQUAL_FATAL(hf_approx_mse(h, s, &e), HF_OK);
    return e;
}

static double max_abs_diff_eval(const hf_approx_head_t *h, const hf_target_t *t, int n,
                                uint64_t seed)
{
    hf_rng_t rng;
    double q[HF_D_MAX], a[HF_DV_MAX], b[HF_DV_MAX], worst = 0;
    hf_rng_seed(&rng, seed);
    for (int k = 0; k < n; k++) {
        for (int j = 0; j < t->d; j++)
            q[j] = 1.5 * hf_rng_normal(&rng);
        CU_ASSERT_EQUAL_FATAL(hf_approx_head_eval(h, q, a), HF_OK);
        hf_target_eval(t, q, b);
        for (int j = 0; j < t->dv; j++)
            worst = fmax(worst, fabs(a[j] - b[j]));
    }
    return worst;
}

/* The product head of a family in floating point. */
static void product_head(const char *family, hf_target_t *t, hf_approx_head_t *out)
{
    hf_head_t h;
    CU_ASSERT_EQUAL_FATAL(hf_target_from_family(t, family), HF_OK);
    hf_head_init(&h, t->d, t->dv);
    CU_ASSERT_EQUAL_FATAL(hf_bounds_product_head(t, 1024, &h), HF_OK);
    CU_ASSERT_EQUAL_FATAL(hf_approx_head_from_exact(out, &h), HF_OK);
    hf_head_clear(&h);
}

/* ---------------------------------------------------------------- generator */

static void test_rng_reference(void)
{
    /* splitmix64 from state 0: the published first outputs */
    hf_rng_t r;
    hf_rng_seed(&r, 0);
    CU_ASSERT_EQUAL(hf_rng_next(&r), 0xE220A8397B1DCDAFULL);
    CU_ASSERT_EQUAL(hf_rng_next(&r), 0x6E789E6AA1B965F4ULL);
    CU_ASSERT_EQUAL(hf_rng_next(&r), 0x06C45D188009454FULL);
}

static void test_rng_normal_moments(void)
{
    hf_rng_t r;
    hf_rng_seed(&r, 12345);
    double s1 = 0, s2 = 0, s4 = 0;
    long n = 200000, tail = 0;
    for (long i = 0; i < n; i++) {
        double z = hf_rng_normal(&r);
        s1 += z;
        s2 += z * z;
        s4 += z * z * z * z;
        tail += fabs(z) > 1.959964;
    }
    /* mean 0, variance 1, kurtosis 3, 5% beyond 1.96: a few standard errors */
    CU_ASSERT(fabs(s1 / n) < 0.01);
    CU_ASSERT(fabs(s2 / n - 1) < 0.015);
    CU_ASSERT(fabs(s4 / n - 3) < 0.08);
    CU_ASSERT(fabs((double)tail / n - 0.05) < 0.003);
    /* uniform stays strictly inside (0, 1) */
    for (int i = 0; i < 1000; i++) {
        double u = hf_rng_uniform(&r);
        CU_ASSERT(u > 0 && u < 1);
    }
}

static void test_rng_mix(void)
{
    /* deterministic, and neighbouring restarts get unrelated seeds */
    CU_ASSERT_EQUAL(hf_rng_mix(1, 3, 4, 0), hf_rng_mix(1, 3, 4, 0));
    uint64_t a = hf_rng_mix(1, 3, 4, 0), b = hf_rng_mix(1, 3, 4, 1), c = hf_rng_mix(1, 3, 5, 0),
             d = hf_rng_mix(2, 3, 4, 0);
    CU_ASSERT(a != b && a != c && a != d && b != c);
    int bits = __builtin_popcountll(a ^ b);
    CU_ASSERT(bits > 16 && bits < 48);
}

/* ---------------------------------------------------------------- derivatives */

/* Central differences of the residual against the analytic Jacobian on random heads,
 * and the gradient against J^T r and against differences of the objective. */
static void check_derivatives(int m, int d, int dv, uint64_t seed)
{
    hf_target_t t;
    hf_target_init_empty(&t);
    char spec[32];
    snprintf(spec, sizeof spec, "wd:d=%d", d);
    CU_ASSERT_EQUAL_FATAL(hf_target_from_family(&t, spec), HF_OK);
    hf_approx_data_t s;
    hf_approx_data_init(&s);
    CU_ASSERT_EQUAL_FATAL(hf_approx_data_make(&s, &t, 40, 1.0, seed), HF_OK);
    /* vector-valued targets: give each value coordinate its own target */
    if (dv > 1) {
        double *y = malloc((size_t)s.n * dv * sizeof *y);
        for (long n = 0; n < s.n; n++)
            for (int j = 0; j < dv; j++)
                y[n * dv + j] = s.t[n] * (j + 1) + 0.1 * j;
        free(s.t);
        s.t = y;
        s.dv = dv;
    }
    hf_approx_head_t h;
    hf_rng_t rng;
    hf_rng_seed(&rng, seed + 1);
    CU_ASSERT_EQUAL_FATAL(hf_approx_head_init(&h, m, d, dv), HF_OK);
    random_head(&h, &rng);
    long np = hf_approx_nparams(m, d, dv), nr = s.n * dv;
    double *x = malloc((size_t)np * sizeof *x), *jac = malloc((size_t)nr * np * sizeof *jac);
    double *r0 = malloc((size_t)nr * sizeof *r0), *rp = malloc((size_t)nr * sizeof *rp);
    double *rm = malloc((size_t)nr * sizeof *rm), *g = malloc((size_t)np * sizeof *g);
    double *work = malloc((size_t)(m + 2 * dv) * sizeof *work);
    hf_approx_head_pack(&h, x);
    hf_approx_residual(&h, &s, r0, jac, nr, work);
    double f0 = hf_approx_objective(&h, &s, g, work);

    /* objective = 0.5 |r|^2 and mse = |r|^2 */
    double rr = 0;
    for (long k = 0; k < nr; k++)
        rr += r0[k] * r0[k];
    CU_ASSERT(fabs(f0 - 0.5 * rr) <= 1e-14 * (1 + rr));
    CU_ASSERT(fabs(mse_of(&h, &s) - rr) <= 1e-14 * (1 + rr));

    double worst_j = 0, worst_g = 0, worst_gf = 0, eps = 1e-6;
    for (long p = 0; p < np; p++) {
        double keep = x[p];
        x[p] = keep + eps;
        hf_approx_head_unpack(&h, x);
        hf_approx_residual(&h, &s, rp, NULL, 0, work);
        x[p] = keep - eps;
        hf_approx_head_unpack(&h, x);
        hf_approx_residual(&h, &s, rm, NULL, 0, work);
        x[p] = keep;
        for (long k = 0; k < nr; k++) {
            double fd = (rp[k] - rm[k]) / (2 * eps);
            double an = jac[k + p * nr];
            worst_j = fmax(worst_j, fabs(fd - an) / (1 + fabs(an)));
        }
    }
    hf_approx_head_unpack(&h, x);
    for (long p = 0; p < np; p++) {
        double jtr = 0;
        for (long k = 0; k < nr; k++)
            jtr += jac[k + p * nr] * r0[k];
        worst_g = fmax(worst_g, fabs(jtr - g[p]) / (1 + fabs(g[p])));
        double keep = x[p], *gw = malloc((size_t)np * sizeof *gw);
        x[p] = keep + eps;
        hf_approx_head_unpack(&h, x);
        double fp = hf_approx_objective(&h, &s, gw, work);
        x[p] = keep - eps;
        hf_approx_head_unpack(&h, x);
        double fm = hf_approx_objective(&h, &s, gw, work);
        x[p] = keep;
        free(gw);
        worst_gf = fmax(worst_gf, fabs((fp - fm) / (2 * eps) - g[p]) / (1 + fabs(g[p])));
    }
    hf_approx_head_unpack(&h, x);
    CU_ASSERT(worst_j < 1e-7);
    CU_ASSERT(worst_g < 1e-12);
    CU_ASSERT(worst_gf < 1e-7);
    if (worst_j >= 1e-7 || worst_g >= 1e-12 || worst_gf >= 1e-7)
        fprintf(stderr, "\nm=%d d=%d dv=%d: jac %.2e grad %.2e grad-fd %.2e\n", m, d, dv, worst_j,
                worst_g, worst_gf);

    free(work);
    free(g);
    free(rm);
    free(rp);
    free(r0);
    free(jac);
    free(x);
    hf_approx_head_clear(&h);
    hf_approx_data_clear(&s);
    hf_target_clear(&t);
}

static void test_jacobian_fd(void)
{
    check_derivatives(1, 1, 1, 11);
    check_derivatives(3, 2, 1, 12);
    check_derivatives(4, 3, 1, 13);
    check_derivatives(5, 2, 3, 14);
    check_derivatives(2, 4, 2, 15);
}

/* A planted error must be caught: a Jacobian column with a wrong sign. */
static void test_jacobian_fd_catches_error(void)
{
    hf_target_t t;
    hf_target_init_empty(&t);
    CU_ASSERT_EQUAL_FATAL(hf_target_from_family(&t, "wd:d=2"), HF_OK);
    hf_approx_data_t s;
    hf_approx_data_init(&s);
    CU_ASSERT_EQUAL_FATAL(hf_approx_data_make(&s, &t, 30, 1.0, 5), HF_OK);
    hf_approx_head_t h;
    hf_rng_t rng;
    hf_rng_seed(&rng, 6);
    CU_ASSERT_EQUAL_FATAL(hf_approx_head_init(&h, 3, 2, 1), HF_OK);
    random_head(&h, &rng);
    long np = hf_approx_nparams(3, 2, 1), nr = s.n;
    double *jac = malloc((size_t)nr * np * sizeof *jac), *r = malloc((size_t)nr * sizeof *r);
    double *rp = malloc((size_t)nr * sizeof *rp), *x = malloc((size_t)np * sizeof *x);
    double work[8];
    hf_approx_residual(&h, &s, r, jac, nr, work);
    for (long k = 0; k < nr; k++)
        jac[k + 1 * nr] = -jac[k + 1 * nr]; /* planted */
    hf_approx_head_pack(&h, x);
    x[1] += 1e-6;
    hf_approx_head_unpack(&h, x);
    hf_approx_residual(&h, &s, rp, NULL, 0, work);
    double worst = 0;
    for (long k = 0; k < nr; k++)
        worst = fmax(worst, fabs((rp[k] - r[k]) / 1e-6 - jac[k + nr]));
    CU_ASSERT(worst > 1e-4);
    free(x);
    free(rp);
    free(r);
    free(jac);
    hf_approx_head_clear(&h);
    hf_approx_data_clear(&s);
    hf_target_clear(&t);
}

/* ---------------------------------------------------------------- heads */

static void test_exact_head_in_floating_point(void)
{
    const char *fams[] = {"wd:d=2", "wd:d=3", "chain:d=2", "multi:d=2,k=3"};
    for (size_t i = 0; i < sizeof fams / sizeof *fams; i++) {
        hf_target_t t;
        hf_target_init_empty(&t);
        hf_approx_head_t h;
        hf_approx_head_init_empty(&h);
        product_head(fams[i], &t, &h);
        double err = max_abs_diff_eval(&h, &t, 200, 7);
        CU_ASSERT(err < 1e-13);
        if (err >= 1e-13)
            fprintf(stderr, "\n%s: %.2e\n", fams[i], err);
        hf_approx_head_clear(&h);
        hf_target_clear(&t);
    }
}

static void test_huge_weights(void)
{
    /* weights far outside double range still give finite biases */
    hf_head_t e;
    hf_approx_head_t h;
    hf_approx_head_init_empty(&h);
    int64_t k0[1] = {0}, k1[1] = {1};
    fmpq_t w, v;
    fmpq_init(w);
    fmpq_init(v);
    hf_head_init(&e, 1, 1);
    fmpz_set_ui(fmpq_numref(w), 1);
    fmpz_mul_2exp(fmpq_numref(w), fmpq_numref(w), 5000); /* 2^5000 */
    hf_head_push(&e, k0, w, v);
    fmpq_inv(w, w);
    fmpq_one(v);
    hf_head_push(&e, k1, w, v);
    CU_ASSERT_EQUAL_FATAL(hf_approx_head_from_exact(&h, &e), HF_OK);
    CU_ASSERT(fabs(h.biases[0] - 5000 * M_LN2) < 1e-9);
    CU_ASSERT(fabs(h.biases[1] + 5000 * M_LN2) < 1e-9);
    hf_approx_head_clear(&h);
    hf_head_clear(&e);
    fmpq_clear(v);
    fmpq_clear(w);
}

static void test_split_delete_least_useful(void)
{
    hf_target_t t;
    hf_target_init_empty(&t);
    hf_approx_head_t h;
    hf_approx_head_init_empty(&h);
    product_head("wd:d=2", &t, &h);
    /* splitting keeps the function */
    CU_ASSERT_EQUAL_FATAL(hf_approx_head_split_to(&h, 7), HF_OK);
    CU_ASSERT_EQUAL(h.m, 7);
    CU_ASSERT(max_abs_diff_eval(&h, &t, 100, 3) < 1e-13);
    /* plant a useless atom: far-off key with a negligible weight */
    hf_approx_head_t h8;
    CU_ASSERT_EQUAL_FATAL(hf_approx_head_init(&h8, 8, 2, 1), HF_OK);
    memcpy(h8.keys, h.keys, 7 * 2 * sizeof(double));
    memcpy(h8.biases, h.biases, 7 * sizeof(double));
    memcpy(h8.values, h.values, 7 * sizeof(double));
    h8.keys[7 * 2] = 3;
    h8.keys[7 * 2 + 1] = -2;
    h8.biases[7] = -60;
    h8.values[7] = 100;
    hf_approx_head_clear(&h);
    h = h8;
    hf_approx_data_t s;
    hf_approx_data_init(&s);
    CU_ASSERT_EQUAL_FATAL(hf_approx_data_make(&s, &t, 100, 1.0, 9), HF_OK);
    int atom;
    double mse;
    CU_ASSERT_EQUAL(hf_approx_least_useful(&h, &s, &atom, &mse), HF_OK);
    CU_ASSERT_EQUAL(atom, 7);
    CU_ASSERT(mse < 1e-28);
    hf_approx_head_delete(&h, atom);
    CU_ASSERT_EQUAL(h.m, 7);
    CU_ASSERT(mse_of(&h, &s) < 1e-28);
    /* the data are reproducible: same seed, same queries and values */
    hf_approx_data_t s2;
    hf_approx_data_init(&s2);
    CU_ASSERT_EQUAL_FATAL(hf_approx_data_make(&s2, &t, 100, 1.0, 9), HF_OK);
    CU_ASSERT(!memcmp(s.q, s2.q, 200 * sizeof(double)) && !memcmp(s.t, s2.t, 100 * sizeof(double)));
    hf_approx_data_clear(&s2);
    hf_approx_data_clear(&s);
    hf_approx_head_clear(&h);
    hf_target_clear(&t);
}

static void test_bad_data(void)
{
    hf_target_t t;
    hf_target_init_empty(&t);
    hf_approx_data_t s;
    hf_approx_data_init(&s);
    CU_ASSERT_EQUAL_FATAL(hf_target_from_family(&t, "wd:d=2"), HF_OK);
    CU_ASSERT_EQUAL(hf_approx_data_make(&s, &t, 0, 1.0, 1), HF_ERR_INPUT);
    CU_ASSERT(strstr(hf_error_msg(), "samples") != NULL);
    hf_approx_data_clear(&s);
    CU_ASSERT_EQUAL(hf_approx_data_make(&s, &t, 10, -1.0, 1), HF_ERR_INPUT);
    CU_ASSERT(strstr(hf_error_msg(), "sigma") != NULL);
    hf_approx_data_clear(&s);
    CU_ASSERT_EQUAL(hf_approx_data_make(&s, &t, 10, NAN, 1), HF_ERR_INPUT);
    hf_approx_data_clear(&s);
    hf_target_clear(&t);
}

/* ---------------------------------------------------------------- with PETSc */

static int petsc_up(void)
{
    return PetscInitializeNoArguments() != 0;
}

static int petsc_down(void)
{
    return PetscFinalize() != 0;
}

static void test_solve_from_perturbed_exact(void)
{
    hf_target_t t;
    hf_target_init_empty(&t);
    hf_approx_head_t h;
    hf_approx_head_init_empty(&h);
    product_head("wd:d=2", &t, &h);
    hf_approx_data_t s;
    hf_approx_data_init(&s);
    CU_ASSERT_EQUAL_FATAL(hf_approx_data_make(&s, &t, 200, 1.0, 21), HF_OK);
    hf_rng_t rng;
    hf_rng_seed(&rng, 22);
    for (int i = 0; i < h.m * h.d; i++)
        h.keys[i] += 0.05 * hf_rng_normal(&rng);
    for (int i = 0; i < h.m; i++)
        h.values[i] += 0.05 * hf_rng_normal(&rng);
    double before = mse_of(&h, &s);
    hf_approx_solve_info_t info;
    CU_ASSERT_EQUAL_FATAL(hf_approx_solve(&s, &h, &info), HF_OK);
    CU_ASSERT(before > 1e-6);
    CU_ASSERT(sqrt(info.train_mse) < 1e-12);
    CU_ASSERT(info.iterations > 0);
    CU_ASSERT(info.reason > 0); /* converged */
    CU_ASSERT(!strncmp(info.reason_name, "CONVERGED_", 10));
    CU_ASSERT(fabs(mse_of(&h, &s) - info.train_mse) <= 1e-30);
    /* the head it found is the function, not just a fit on the sample */
    CU_ASSERT(max_abs_diff_eval(&h, &t, 200, 23) < 1e-10);
    hf_approx_data_clear(&s);
    hf_approx_head_clear(&h);
    hf_target_clear(&t);
}

/* Default options with budgets lo..hi, `samples` training and test queries and
 * `restarts` random restarts: the small runs of these tests. */
static void small_opts(hf_approx_opts_t *o, int lo, int hi, long samples, long restarts)
{
    hf_approx_opts_default(o);
    o->m_lo = lo;
    o->m_hi = hi;
    o->samples = o->test_samples = samples;
    o->restarts = restarts;
}

static void test_warm_truncation(void)
{
    /* product head of W_3 truncated greedily to 4 atoms, then solved: an approximation
     * no worse than its start */
    hf_target_t t;
    hf_target_init_empty(&t);
    hf_head_t e;
    CU_ASSERT_EQUAL_FATAL(hf_target_from_family(&t, "wd:d=3"), HF_OK);
    hf_head_init(&e, 3, 1);
    CU_ASSERT_EQUAL_FATAL(hf_bounds_product_head(&t, 64, &e), HF_OK);
    hf_approx_opts_t o;
    small_opts(&o, 4, 4, 200, 1);
    o.product_max = 0;
    o.exact_head = &e;
    hf_approx_result_t r;
    hf_approx_result_init(&r);
    CU_ASSERT_EQUAL_FATAL(hf_approx_run(MPI_COMM_WORLD, &t, &o, &r), HF_OK);
    CU_ASSERT_EQUAL(r.exact_atoms, 8);
    CU_ASSERT_STRING_EQUAL(r.exact_source, "given");
    CU_ASSERT_EQUAL(r.nrows, 1);
    CU_ASSERT_EQUAL(r.rows[0].restarts, 2); /* one random, one exact */
    CU_ASSERT_EQUAL(r.nlog, 2);
    CU_ASSERT_STRING_EQUAL(r.log[1].start, "exact");
    CU_ASSERT(r.rows[0].train_mse > 1e-6); /* 4 atoms cannot be exact for W_3 */
    CU_ASSERT_STRING_EQUAL(r.rows[0].status, "approx");
    hf_approx_result_clear(&r);
    hf_head_clear(&e);
    hf_target_clear(&t);
}

/* The acceptance test: W_2 at m = 4 below 1e-8 RMS, m = 2 and 3 larger, the
 * best error never increasing with m; and the same from random restarts alone. */
static void check_w2_table(long product_max)
{
    hf_target_t t;
    hf_target_init_empty(&t);
    CU_ASSERT_EQUAL_FATAL(hf_target_from_family(&t, "wd:d=2"), HF_OK);
    hf_approx_opts_t o;
    small_opts(&o, 1, 5, 200, 4);
    o.product_max = product_max;
    hf_approx_result_t r;
    hf_approx_result_init(&r);
    CU_ASSERT_EQUAL_FATAL(hf_approx_run(MPI_COMM_WORLD, &t, &o, &r), HF_OK);
    CU_ASSERT_EQUAL_FATAL(r.nrows, 5);
    CU_ASSERT_EQUAL(r.exact_atoms, product_max ? 4 : -1);
    for (int i = 0; i < 5; i++)
        CU_ASSERT_EQUAL(r.rows[i].m, i + 1);
    double rms4 = sqrt(r.rows[3].test_mse);
    CU_ASSERT(rms4 < 1e-8);
    CU_ASSERT(sqrt(r.rows[3].train_mse) < 1e-8);
    CU_ASSERT(sqrt(r.rows[4].test_mse) < 1e-8);
    CU_ASSERT(sqrt(r.rows[1].test_mse) > 1e-3);
    CU_ASSERT(sqrt(r.rows[2].test_mse) > 1e-3);
    CU_ASSERT(r.rows[1].train_mse > r.rows[2].train_mse);
    CU_ASSERT_STRING_EQUAL(r.rows[3].status, "rounding");
    CU_ASSERT_STRING_EQUAL(r.rows[2].status, "approx");
    for (int i = 1; i < 5; i++) /* non-increasing up to rounding noise */
        CU_ASSERT(r.rows[i].train_mse <= r.rows[i - 1].train_mse * (1 + 1e-9) + 1e-28);
    for (int i = 0; i < 5; i++) {
        CU_ASSERT(r.rows[i].best_restart >= 0 && r.rows[i].best_restart < r.rows[i].restarts);
        CU_ASSERT(r.rows[i].head.m == r.rows[i].m);
        hf_approx_data_t s;
        hf_approx_data_init(&s);
        /* the stored head reproduces the stored errors on a fresh sample's scale */
        CU_ASSERT_EQUAL_FATAL(hf_approx_data_make(&s, &t, 200, 1.0, 99), HF_OK);
        double e = mse_of(&r.rows[i].head, &s);
        CU_ASSERT(e < 10 * r.rows[i].test_mse + 1e-28 && e > 0.1 * r.rows[i].test_mse);
        hf_approx_data_clear(&s);
    }
    long nlog = 0;
    for (int i = 0; i < 5; i++)
        nlog += r.rows[i].restarts;
    CU_ASSERT_EQUAL(r.nlog, nlog);
    hf_approx_result_clear(&r);
    hf_target_clear(&t);
}

static void test_w2_table(void)
{
    check_w2_table(128);
}

static void test_w2_random_only(void)
{
    check_w2_table(0);
}

static void test_run_bad_options(void)
{
    hf_target_t t;
    hf_target_init_empty(&t);
    CU_ASSERT_EQUAL_FATAL(hf_target_from_family(&t, "wd:d=2"), HF_OK);
    struct {
        int lo, hi;
        long samples, restarts;
        double sigma;
        const char *word;
    } bad[] = {{3, 2, 100, 2, 1.0, "atoms"},  {0, 2, 100, 2, 1.0, "atoms"},
               {1, 2, 0, 2, 1.0, "samples"},  {1, 2, 100, 0, 1.0, "restarts"},
               {1, 2, 100, 2, -1.0, "sigma"}, {1, 2, 100, 2, 0.0, "sigma"}};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        hf_approx_opts_t o;
        small_opts(&o, bad[i].lo, bad[i].hi, bad[i].samples, bad[i].restarts);
        o.sigma = bad[i].sigma;
        hf_approx_result_t r;
        hf_approx_result_init(&r);
        CU_ASSERT_EQUAL(hf_approx_run(MPI_COMM_WORLD, &t, &o, &r), HF_ERR_INPUT);
        CU_ASSERT(strstr(hf_error_msg(), bad[i].word) != NULL);
        hf_approx_result_clear(&r);
    }
    hf_target_clear(&t);
}

static void test_file_round_trip(void)
{
    hf_target_t t;
    hf_target_init_empty(&t);
    CU_ASSERT_EQUAL_FATAL(hf_target_from_family(&t, "wd:d=2"), HF_OK);
    hf_approx_opts_t o;
    small_opts(&o, 2, 4, 100, 2);
    hf_approx_result_t r, back;
    hf_approx_prov_t p, pb;
    hf_approx_result_init(&r);
    hf_approx_prov_init(&p);
    hf_approx_result_init(&back);
    hf_approx_prov_init(&pb);
    CU_ASSERT_EQUAL_FATAL(hf_approx_run(MPI_COMM_WORLD, &t, &o, &r), HF_OK);
    p.version = strdup("0.1.0");
    p.command_line = strdup("headfuse approx --family wd:d=2 --atoms 2..4");
    p.ranks = 1;
    p.target_json = hf_target_to_json(&t);
    p.lower_bound = strdup("4");
    char path[] = "/tmp/hf-approx-test-XXXXXX";
    int fd = mkstemp(path);
    CU_ASSERT_FATAL(fd >= 0);
    close(fd);
    CU_ASSERT_EQUAL_FATAL(hf_approx_file_write(path, &r, &p), HF_OK);
    CU_ASSERT(hf_approx_file_detect(path));
    CU_ASSERT_EQUAL_FATAL(hf_approx_file_read(path, &back, &pb), HF_OK);
    CU_ASSERT_STRING_EQUAL(back.name, "wd:d=2");
    CU_ASSERT_EQUAL(back.d, 2);
    CU_ASSERT_EQUAL(back.dv, 1);
    CU_ASSERT_EQUAL(back.samples, 100);
    CU_ASSERT_EQUAL(back.seed, 1);
    CU_ASSERT_EQUAL(back.exact_atoms, 4);
    CU_ASSERT_STRING_EQUAL(back.exact_source, "product");
    CU_ASSERT_STRING_EQUAL(back.tao_type, r.tao_type);
    CU_ASSERT_EQUAL(back.target_rms, r.target_rms);
    CU_ASSERT_STRING_EQUAL(pb.version, "0.1.0");
    CU_ASSERT_STRING_EQUAL(pb.git_commit, ""); /* NULL is stored as "" */
    CU_ASSERT_STRING_EQUAL(pb.lower_bound, "4");
    CU_ASSERT_STRING_EQUAL(pb.target_json, p.target_json);
    CU_ASSERT_EQUAL(pb.ranks, 1);
    CU_ASSERT_EQUAL_FATAL(back.nrows, 3);
    for (int i = 0; i < 3; i++) {
        const hf_approx_row_t *a = r.rows + i, *b = back.rows + i;
        CU_ASSERT(a->m == b->m && a->train_mse == b->train_mse && a->test_mse == b->test_mse);
        CU_ASSERT(a->restarts == b->restarts && a->best_restart == b->best_restart);
        CU_ASSERT(a->iterations == b->iterations && a->seconds == b->seconds);
        CU_ASSERT_STRING_EQUAL(a->converged_reason, b->converged_reason);
        CU_ASSERT_STRING_EQUAL(a->start, b->start);
        CU_ASSERT_STRING_EQUAL(a->status, b->status);
        CU_ASSERT(!memcmp(a->head.keys, b->head.keys, (size_t)a->m * 2 * sizeof(double)));
        CU_ASSERT(!memcmp(a->head.biases, b->head.biases, (size_t)a->m * sizeof(double)));
        CU_ASSERT(!memcmp(a->head.values, b->head.values, (size_t)a->m * sizeof(double)));
    }
    CU_ASSERT_EQUAL_FATAL(back.nlog, r.nlog);
    CU_ASSERT(!memcmp(back.log, r.log, (size_t)r.nlog * sizeof *r.log));
    hf_approx_result_clear(&back);
    hf_approx_prov_clear(&pb);

    /* truncated: the reader refuses it with a message naming the path */
    FILE *f = fopen(path, "r+b");
    CU_ASSERT_FATAL(f != NULL);
    fseek(f, 0, SEEK_END);
    long size = ftell(f);
    fclose(f);
    CU_ASSERT_EQUAL(truncate(path, size / 2), 0);
    CU_ASSERT_EQUAL(hf_approx_file_read(path, &back, &pb), HF_ERR_CORRUPT);
    CU_ASSERT(strstr(hf_error_msg(), path) != NULL);
    hf_approx_result_clear(&back);
    hf_approx_prov_clear(&pb);

    /* not HDF5 at all, and missing */
    f = fopen(path, "w");
    fputs("{\"not\": \"hdf5\"}\n", f);
    fclose(f);
    CU_ASSERT(!hf_approx_file_detect(path));
    CU_ASSERT_EQUAL(hf_approx_file_read(path, &back, &pb), HF_ERR_CORRUPT);
    hf_approx_result_clear(&back);
    hf_approx_prov_clear(&pb);
    unlink(path);
    CU_ASSERT(!hf_approx_file_detect(path));
    CU_ASSERT_EQUAL(hf_approx_file_read(path, &back, &pb), HF_ERR_IO);
    hf_approx_result_clear(&back);
    hf_approx_prov_clear(&pb);
    /* writing into a missing directory fails cleanly */
    CU_ASSERT_EQUAL(hf_approx_file_write("/nonexistent-dir/x.h5", &r, &p), HF_ERR_IO);
    CU_ASSERT(strstr(hf_error_msg(), "/nonexistent-dir/x.h5") != NULL);

    hf_approx_prov_clear(&p);
    hf_approx_result_clear(&r);
    hf_target_clear(&t);
}

/* Every write call of hf_approx_file_write made to fail in turn (hf_io_fail_after):
 * the write fails naming the file, leaves no PATH.tmp and nothing open, and the
 * previous file is intact. */
static void test_file_write_faults(void)
{
    hf_target_t t;
    hf_target_init_empty(&t);
    CU_ASSERT_EQUAL_FATAL(hf_target_from_family(&t, "wd:d=2"), HF_OK);
    hf_approx_opts_t o;
    small_opts(&o, 3, 4, 50, 1);
    hf_approx_result_t r, back;
    hf_approx_prov_t p, pb;
    hf_approx_result_init(&r);
    hf_approx_prov_init(&p);
    hf_approx_result_init(&back);
    hf_approx_prov_init(&pb);
    CU_ASSERT_EQUAL_FATAL(hf_approx_run(MPI_COMM_WORLD, &t, &o, &r), HF_OK);
    p.version = strdup("0.1.0");
    p.ranks = 1;
    char path[] = "/tmp/hf-approx-fault-XXXXXX", tmp[64];
    int fd = mkstemp(path);
    CU_ASSERT_FATAL(fd >= 0);
    close(fd);
    snprintf(tmp, sizeof tmp, "%s.tmp", path);
    CU_ASSERT_EQUAL_FATAL(hf_approx_file_write(path, &r, &p), HF_OK);
    long before = hf_io_write_calls();
    p.ranks = 2; /* the version that never makes it */
    CU_ASSERT_EQUAL_FATAL(hf_approx_file_write(tmp, &r, &p), HF_OK);
    long calls = hf_io_write_calls() - before;
    unlink(tmp);
    CU_ASSERT(calls > 40);
    for (long n = 1; n <= calls; n++) {
        hf_io_fail_after(n);
        hf_err_t err = hf_approx_file_write(path, &r, &p);
        hf_io_fail_after(0);
        CU_ASSERT_EQUAL(err, HF_ERR_IO);
        CU_ASSERT(strstr(hf_error_msg(), path) == hf_error_msg());
        CU_ASSERT(strstr(hf_error_msg(), "injected failure") != NULL ||
                  strstr(hf_error_msg(), "Input/output error") != NULL);
        CU_ASSERT_EQUAL(H5Fget_obj_count(H5F_OBJ_ALL, H5F_OBJ_ALL), 0);
        CU_ASSERT(access(tmp, F_OK) != 0);
        CU_ASSERT_EQUAL(hf_approx_file_read(path, &back, &pb), HF_OK);
        CU_ASSERT_EQUAL(pb.ranks, 1);
        CU_ASSERT_EQUAL(back.nrows, r.nrows);
        hf_approx_result_clear(&back);
        hf_approx_prov_clear(&pb);
    }
    unlink(path);
    if (getenv("HF_FAULT_VERBOSE"))
        fprintf(stderr, "[APPROX.h5: %ld write calls] ", calls);
    hf_approx_prov_clear(&p);
    hf_approx_result_clear(&r);
    hf_target_clear(&t);
}

int hf_register_tests(void)
{
    static const hf_unit_case_t plain[] = {
        {"splitmix64 reference outputs", test_rng_reference},
        {"normal moments", test_rng_normal_moments},
        {"seed mixing", test_rng_mix},
        {"analytic Jacobian and gradient vs central differences", test_jacobian_fd},
        {"the difference check catches a planted error", test_jacobian_fd_catches_error},
        {"exact heads in floating point equal the target", test_exact_head_in_floating_point},
        {"weights beyond double range", test_huge_weights},
        {"split, delete, least useful atom", test_split_delete_least_useful},
        {"bad sample options", test_bad_data},
        {NULL, NULL}};
    static const hf_unit_case_t tao[] = {
        {"TAO solve from a perturbed exact head", test_solve_from_perturbed_exact},
        {"warm start truncated from an exact head", test_warm_truncation},
        {"W_2 table: exact at m = 4, larger below, non-increasing", test_w2_table},
        {"W_2 table from random restarts alone", test_w2_random_only},
        {"bad run options", test_run_bad_options},
        {"APPROX.h5 round trip, truncated, foreign and missing files", test_file_round_trip},
        {"APPROX.h5: every write call failing in turn", test_file_write_faults},
        {NULL, NULL}};
    if (hf_unit_suite("approx", plain))
        return -1;
    CU_pSuite s = CU_add_suite("approx with PETSc", petsc_up, petsc_down);
    if (!s)
        return -1;
    for (const hf_unit_case_t *c = tao; c->name; c++)
        if (!CU_add_test(s, c->name, c->fn))
            return -1;
    return 0;
}
