/* The independent verifier: exact polynomial identity check of a head against a target,
 * and a seeded numeric cross-check.
 *
 * Deliberately shares no code with the algebra and exact modules: it works from the
 * target's heads with FLINT's fmpz_mpoly directly, so a bug there cannot hide here. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <flint/fmpz_mpoly.h>

#include "headfuse/core.h"
#include "headfuse/verify.h"
#include "verify/verify_impl.h"

hf_err_t hf_verify_head_polys(const hf_head_t *h, fmpz_mpoly_t D, fmpz_mpoly_struct *N,
                              const fmpz_mpoly_ctx_t ctx)
{
    hf_err_t err = HF_OK;
    int d = h->d, dv = h->dv;
    ulong *exp = hf_malloc((size_t)d * sizeof *exp);
    int64_t *lo = hf_malloc((size_t)d * sizeof *lo);
    fmpz_t L, c;
    fmpq_t cv;
    fmpz_init(L);
    fmpz_init(c);
    fmpq_init(cv);
    if (!exp || !lo) {
        err = HF_ERR_NOMEM;
        goto cleanup;
    }
    for (int j = 0; j < d; j++) {
        lo[j] = h->keys[j];
        for (long i = 1; i < h->natoms; i++)
            if (h->keys[i * d + j] < lo[j])
                lo[j] = h->keys[i * d + j];
    }
    /* L = lcm of the denominators of every c_i and c_i v_ij */
    fmpz_one(L);
    for (long i = 0; i < h->natoms; i++) {
        fmpz_lcm(L, L, fmpq_denref(h->weights + i));
        for (int j = 0; j < dv; j++) {
            fmpq_mul(cv, h->weights + i, h->values + i * dv + j);
            fmpz_lcm(L, L, fmpq_denref(cv));
        }
    }
    fmpz_mpoly_zero(D, ctx);
    for (int j = 0; j < dv; j++)
        fmpz_mpoly_zero(N + j, ctx);
    for (long i = 0; i < h->natoms; i++) {
        for (int j = 0; j < d; j++)
            exp[j] = (ulong)(h->keys[i * d + j] - lo[j]);
        fmpz_divexact(c, L, fmpq_denref(h->weights + i));
        fmpz_mul(c, c, fmpq_numref(h->weights + i));
        fmpz_mpoly_push_term_fmpz_ui(D, c, exp, ctx);
        for (int j = 0; j < dv; j++) {
            fmpq_mul(cv, h->weights + i, h->values + i * dv + j);
            if (fmpq_is_zero(cv))
                continue;
            fmpz_divexact(c, L, fmpq_denref(cv));
            fmpz_mul(c, c, fmpq_numref(cv));
            fmpz_mpoly_push_term_fmpz_ui(N + j, c, exp, ctx);
        }
    }
    /* sorting and combining also merges repeated keys of one head */
    fmpz_mpoly_sort_terms(D, ctx);
    fmpz_mpoly_combine_like_terms(D, ctx);
    for (int j = 0; j < dv; j++) {
        fmpz_mpoly_sort_terms(N + j, ctx);
        fmpz_mpoly_combine_like_terms(N + j, ctx);
    }
cleanup:
    fmpq_clear(cv);
    fmpz_clear(c);
    fmpz_clear(L);
    free(lo);
    free(exp);
    return err;
}

/* Keys of the witness must stay in range so that shifted exponents fit a word. */
static hf_err_t verify_check_keys(const hf_head_t *h, const char *where)
{
    for (long i = 0; i < h->natoms * h->d; i++)
        if (h->keys[i] > HF_KEY_MAX || h->keys[i] < -HF_KEY_MAX)
            return hf_error(HF_ERR_INPUT, "%s: atoms[%ld].key[%d]: %lld is outside -%d..%d", where,
                            i / h->d, (int)(i % h->d), (long long)h->keys[i], HF_KEY_MAX,
                            HF_KEY_MAX);
    return HF_OK;
}

hf_err_t hf_verify_head(const hf_target_t *t, const hf_head_t *h, int *ok, const char **why)
{
    hf_err_t err = HF_OK;
    int d = t->d, dv = t->dv;
    const char *reason = NULL;
    fmpz_mpoly_ctx_t ctx;
    fmpz_mpoly_struct *N_all = NULL, *N_g = NULL, *U = NULL;
    fmpz_mpoly_t D_all, D_g, C, tmp1, tmp2;
    fmpz_t a, b, g;
    int ctx_ready = 0;

    *ok = 0;
    if (h->d != d || h->dv != dv)
        return hf_error(HF_ERR_INPUT, "verify: head dimensions %d,%d do not match target %d,%d",
                        h->d, h->dv, d, dv);
    for (int i = 0; i < t->nheads; i++) {
        char where[64];
        snprintf(where, sizeof where, "target heads[%d]", i);
        HF_TRY(hf_head_validate(t->heads + i, where));
    }
    HF_TRY(verify_check_keys(h, "head"));
    if (h->natoms < 1) {
        reason = "the head has no atoms";
        goto done;
    }
    for (long i = 0; i < h->natoms; i++)
        if (fmpq_sgn(h->weights + i) <= 0) {
            reason = "a weight is not positive";
            goto done;
        }

    fmpz_mpoly_ctx_init(ctx, d, ORD_LEX);
    ctx_ready = 1;
    fmpz_init(a);
    fmpz_init(b);
    fmpz_init(g);
    fmpz_mpoly_init(D_all, ctx);
    fmpz_mpoly_init(D_g, ctx);
    fmpz_mpoly_init(C, ctx);
    fmpz_mpoly_init(tmp1, ctx);
    fmpz_mpoly_init(tmp2, ctx);
    N_all = hf_malloc((size_t)dv * sizeof *N_all);
    N_g = hf_malloc((size_t)dv * sizeof *N_g);
    U = hf_malloc((size_t)dv * sizeof *U);
    if (!N_all || !N_g || !U) {
        free(N_all);
        free(N_g);
        free(U);
        N_all = N_g = U = NULL;
        err = HF_ERR_NOMEM;
        goto cleanup;
    }
    for (int j = 0; j < dv; j++) {
        fmpz_mpoly_init(N_all + j, ctx);
        fmpz_mpoly_init(N_g + j, ctx);
        fmpz_mpoly_init(U + j, ctx);
    }

    /* Fold heads in one at a time: N/D + N_g/D_g = (N D_g + N_g D) / (D D_g). */
    fmpz_mpoly_one(D_all, ctx);
    for (int hi = 0; hi < t->nheads; hi++) {
        HF_CHECK(err, hf_verify_head_polys(t->heads + hi, D_g, N_g, ctx), cleanup);
        for (int j = 0; j < dv; j++) {
            fmpz_mpoly_mul(tmp1, N_all + j, D_g, ctx);
            fmpz_mpoly_mul(tmp2, N_g + j, D_all, ctx);
            fmpz_mpoly_add(N_all + j, tmp1, tmp2, ctx);
        }
        fmpz_mpoly_mul(D_all, D_all, D_g, ctx);
    }
    HF_CHECK(err, hf_verify_head_polys(h, C, U, ctx), cleanup);

    /* Both C and D_all are in canonical position (every variable has minimum exponent 0:
     * true for each head's D and preserved by products), so "C = lambda x^m D_all" can
     * only hold with m = 0. If C = (p/q) D_all, the identity U D_all == C N_all is
     * equivalent to q U == p N_all (D_all != 0 and the ring has no zero divisors); this
     * avoids multiplying two large polynomials for product heads. */
    int multiple = 0;
    if (fmpz_mpoly_length(C, ctx) == fmpz_mpoly_length(D_all, ctx) &&
        fmpz_mpoly_length(C, ctx) > 0) {
        fmpz_mpoly_get_term_coeff_fmpz(a, C, 0, ctx);
        fmpz_mpoly_get_term_coeff_fmpz(b, D_all, 0, ctx);
        fmpz_gcd(g, a, b);
        fmpz_divexact(a, a, g); /* lambda = a/b, reduced */
        fmpz_divexact(b, b, g);
        fmpz_mpoly_scalar_mul_fmpz(tmp1, C, b, ctx);
        fmpz_mpoly_scalar_mul_fmpz(tmp2, D_all, a, ctx);
        multiple = fmpz_mpoly_equal(tmp1, tmp2, ctx);
    }
    for (int j = 0; j < dv; j++) {
        if (multiple) {
            fmpz_mpoly_scalar_mul_fmpz(tmp1, U + j, b, ctx);
            fmpz_mpoly_scalar_mul_fmpz(tmp2, N_all + j, a, ctx);
        } else {
            fmpz_mpoly_mul(tmp1, U + j, D_all, ctx);
            fmpz_mpoly_mul(tmp2, C, N_all + j, ctx);
        }
        if (!fmpz_mpoly_equal(tmp1, tmp2, ctx)) {
            reason = "the polynomial identity U*D == C*N fails";
            goto cleanup;
        }
    }
    *ok = 1;

cleanup:
    if (U) {
        for (int j = dv - 1; j >= 0; j--) {
            fmpz_mpoly_clear(U + j, ctx);
            fmpz_mpoly_clear(N_g + j, ctx);
            fmpz_mpoly_clear(N_all + j, ctx);
        }
        free(U);
        free(N_g);
        free(N_all);
    }
    if (ctx_ready) {
        fmpz_mpoly_clear(tmp2, ctx);
        fmpz_mpoly_clear(tmp1, ctx);
        fmpz_mpoly_clear(C, ctx);
        fmpz_mpoly_clear(D_g, ctx);
        fmpz_mpoly_clear(D_all, ctx);
        fmpz_clear(g);
        fmpz_clear(b);
        fmpz_clear(a);
        fmpz_mpoly_ctx_clear(ctx);
    }
done:
    if (err == HF_OK && why)
        *why = *ok ? NULL : reason;
    return err;
}

double hf_verify_numeric(const hf_target_t *t, const hf_head_t *h, int n, double sigma,
                         uint64_t seed)
{
    if (h->d != t->d || h->dv != t->dv || h->natoms < 1)
        return NAN;
    int d = t->d, dv = t->dv;
    double q[HF_D_MAX], fh[HF_DV_MAX], ft[HF_DV_MAX], part[HF_DV_MAX];
    double worst = 0;
    hf_rng_t s; /* core's generator: its uniforms are never 0, so log is safe */
    hf_rng_seed(&s, seed);
    for (int r = 0; r < n; r++) {
        /* Box-Muller, one normal per pair of uniforms (simple and reproducible) */
        for (int j = 0; j < d; j++) {
            double u1 = hf_rng_uniform(&s), u2 = hf_rng_uniform(&s);
            q[j] = sigma * sqrt(-2.0 * log(u1)) * cos(2.0 * M_PI * u2);
        }
        hf_head_eval(h, q, fh);
        for (int j = 0; j < dv; j++)
            ft[j] = 0;
        for (int i = 0; i < t->nheads; i++) {
            hf_head_eval(t->heads + i, q, part);
            for (int j = 0; j < dv; j++)
                ft[j] += part[j];
        }
        for (int j = 0; j < dv; j++) {
            double e = fabs(fh[j] - ft[j]);
            if (isnan(e))
                return NAN;
            if (e > worst)
                worst = e;
        }
    }
    return worst;
}
