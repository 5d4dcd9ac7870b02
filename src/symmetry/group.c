/* The symmetry group of a target (symmetry.h; docs/math.md §3.3): which signed coordinate
 * permutations map T to alpha T + beta, and the group they generate.
 *
 * Candidates are rejected fast and exactly by evaluating both targets modulo a prime at
 * three random points: if T^g = alpha T + beta, the 3x3 matrix [T^g(x_i), T(x_i), 1] is
 * singular over Q, hence modulo p; a nonzero determinant modulo p is a proof that g is
 * not a symmetry. Every other candidate is decided by comparing the exact fractions
 * (unique normal form, algebra.h). Products of proven symmetries are symmetries, so the
 * group is closed under products as it grows and only new elements are tested. */
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include <flint/fmpz_mpoly.h>
#include <flint/nmod_vec.h>
#include <flint/ulong_extras.h>

#include "symmetry/symmetry_impl.h"

/* Pb/Qb = alpha Pa/Qa + beta, both in normal form over one context. */
static int affine_equal(const fmpz_mpoly_ctx_struct *ctx, int d, int dv,
                        const fmpz_mpoly_struct *Pa, const fmpz_mpoly_struct *Qa,
                        const fmpz_mpoly_struct *Pb, const fmpz_mpoly_struct *Qb)
{
    slong len = fmpz_mpoly_length(Qa, ctx);
    if (len == 0 || fmpz_mpoly_length(Qb, ctx) != len)
        return 0;
    int res = 0;
    fmpz_t la, lb, ca, cb;
    fmpz_mpoly_t x, y;
    fmpz_mpoly_struct *ra = flint_malloc(2 * dv * sizeof *ra), *rb = ra + dv;
    ulong *exp = flint_malloc((d ? d : 1) * sizeof *exp);
    fmpz_init(la);
    fmpz_init(lb);
    fmpz_init(ca);
    fmpz_init(cb);
    fmpz_mpoly_init(x, ctx);
    fmpz_mpoly_init(y, ctx);
    for (int j = 0; j < 2 * dv; j++)
        fmpz_mpoly_init(ra + j, ctx);

    /* Q_b = lambda Q_a */
    fmpz_mpoly_get_term_coeff_fmpz(la, Qa, 0, ctx);
    fmpz_mpoly_get_term_coeff_fmpz(lb, Qb, 0, ctx);
    fmpz_mpoly_scalar_mul_fmpz(x, Qa, lb, ctx);
    fmpz_mpoly_scalar_mul_fmpz(y, Qb, la, ctx);
    if (!fmpz_mpoly_equal(x, y, ctx))
        goto done;
    /* remove the multiple of Q from each numerator: r = lc(Q) P - P[lm(Q)] Q, which is
     * zero iff P is in span(Q) */
    fmpz_mpoly_get_term_exp_ui(exp, Qa, 0, ctx);
    for (int j = 0; j < dv; j++) {
        fmpz_mpoly_get_coeff_fmpz_ui(ca, Pa + j, exp, ctx);
        fmpz_mpoly_scalar_mul_fmpz(ra + j, Pa + j, la, ctx);
        fmpz_mpoly_scalar_mul_fmpz(x, Qa, ca, ctx);
        fmpz_mpoly_sub(ra + j, ra + j, x, ctx);
        fmpz_mpoly_get_coeff_fmpz_ui(cb, Pb + j, exp, ctx);
        fmpz_mpoly_scalar_mul_fmpz(rb + j, Pb + j, lb, ctx);
        fmpz_mpoly_scalar_mul_fmpz(x, Qb, cb, ctx);
        fmpz_mpoly_sub(rb + j, rb + j, x, ctx);
    }
    /* the reduced numerators must be proportional with one nonzero factor */
    int j0 = -1;
    for (int j = 0; j < dv && j0 < 0; j++)
        if (!fmpz_mpoly_is_zero(ra + j, ctx))
            j0 = j;
    if (j0 < 0) {
        res = 1;
        for (int j = 0; j < dv; j++)
            if (!fmpz_mpoly_is_zero(rb + j, ctx))
                res = 0;
        goto done;
    }
    fmpz_mpoly_get_term_coeff_fmpz(ca, ra + j0, 0, ctx);
    fmpz_mpoly_get_term_exp_ui(exp, ra + j0, 0, ctx);
    fmpz_mpoly_get_coeff_fmpz_ui(cb, rb + j0, exp, ctx);
    if (fmpz_is_zero(cb))
        goto done;
    res = 1;
    for (int j = 0; j < dv && res; j++) {
        fmpz_mpoly_scalar_mul_fmpz(x, ra + j, cb, ctx);
        fmpz_mpoly_scalar_mul_fmpz(y, rb + j, ca, ctx);
        res = fmpz_mpoly_equal(x, y, ctx);
    }
done:
    for (int j = 0; j < 2 * dv; j++)
        fmpz_mpoly_clear(ra + j, ctx);
    fmpz_mpoly_clear(y, ctx);
    fmpz_mpoly_clear(x, ctx);
    fmpz_clear(cb);
    fmpz_clear(ca);
    fmpz_clear(lb);
    fmpz_clear(la);
    flint_free(exp);
    flint_free(ra);
    return res;
}

int hf_symmetry_affine_equal(const hf_fraction_t *a, const hf_fraction_t *b)
{
    if (a->d != b->d || a->dv != b->dv)
        return 0;
    return affine_equal(a->ctx, a->d, a->dv, a->P, a->Q, b->P, b->Q);
}

hf_err_t hf_group_check(const hf_fraction_t *f, const int8_t *perm, const int8_t *sign, int *yes)
{
    const fmpz_mpoly_ctx_struct *ctx = f->ctx;
    int d = f->d, dv = f->dv;
    int64_t mn[HF_D_MAX];
    ulong e[HF_D_MAX], ne[HF_D_MAX];
    fmpz_t c;
    fmpz_mpoly_struct *img = flint_malloc((size_t)(dv + 1) * sizeof *img);
    fmpz_init(c);
    for (int j = 0; j <= dv; j++)
        fmpz_mpoly_init(img + j, ctx);
    for (int j = 0; j < d; j++)
        mn[j] = INT64_MAX;
    /* the map x^k -> x^(g k), then the translation that removes the common monomial */
    for (int pass = 0; pass < 2; pass++)
        for (int i = 0; i <= dv; i++) {
            const fmpz_mpoly_struct *src = i ? f->P + i - 1 : f->Q;
            for (slong t = 0; t < fmpz_mpoly_length(src, ctx); t++) {
                fmpz_mpoly_get_term_exp_ui(e, src, t, ctx);
                for (int j = 0; j < d; j++) {
                    int64_t v = sign[j] * (int64_t)e[perm[j]];
                    if (pass == 0)
                        mn[j] = v < mn[j] ? v : mn[j];
                    else
                        ne[j] = (ulong)(v - mn[j]);
                }
                if (pass == 1) {
                    fmpz_mpoly_get_term_coeff_fmpz(c, src, t, ctx);
                    fmpz_mpoly_push_term_fmpz_ui(img + i, c, ne, ctx);
                }
            }
        }
    for (int i = 0; i <= dv; i++) {
        fmpz_mpoly_sort_terms(img + i, ctx);
        fmpz_mpoly_combine_like_terms(img + i, ctx);
    }
    *yes = affine_equal(ctx, d, dv, f->P, f->Q, img + 1, img);
    for (int j = 0; j <= dv; j++)
        fmpz_mpoly_clear(img + j, ctx);
    flint_free(img);
    fmpz_clear(c);
    return HF_OK;
}

/* ---------------------------------------------------------------- modular filter */

#define NPOINTS 3

typedef struct {
    nmod_t mod;
    int usable;      /* 0: some residue was undefined; every g goes to the exact test */
    ulong *x, *xinv; /* NPOINTS x d */
    ulong *cw, *cv;  /* per atom (all heads in order): weight, weight * value[dv] */
    ulong *base;     /* T(x_i): NPOINTS x dv */
} modfilter_t;

/* x mod p of a rational; 0 when its denominator vanishes modulo p. */
static int fmpq_mod(ulong *r, const fmpq_t q, nmod_t mod)
{
    ulong den = fmpz_fdiv_ui(fmpq_denref(q), mod.n);
    if (den == 0)
        return 0;
    *r = nmod_mul(fmpz_fdiv_ui(fmpq_numref(q), mod.n), n_invmod(den, mod.n), mod);
    return 1;
}

/* T^g at point i as one fraction num[dv] / *den (no inverses: the filter runs for up to
 * 2^7 7! elements). Returns 0 if a head's denominator vanishes modulo p. */
static int modfilter_eval(const modfilter_t *mf, const hf_target_t *t, const int8_t *perm,
                          const int8_t *sign, int i, ulong *out, ulong *den_out)
{
    int d = t->d, dv = t->dv;
    nmod_t mod = mf->mod;
    ulong num[HF_DV_MAX], den = 1;
    long a = 0;
    for (int j = 0; j < dv; j++)
        out[j] = 0;
    for (int h = 0; h < t->nheads; h++) {
        const hf_head_t *hd = &t->heads[h];
        ulong hden = 0;
        for (int j = 0; j < dv; j++)
            num[j] = 0;
        for (long k = 0; k < hd->natoms; k++, a++) {
            ulong mon = 1;
            for (int j = 0; j < d; j++) {
                int64_t e = sign[j] * hd->keys[k * d + perm[j]];
                ulong b = e >= 0 ? mf->x[i * d + j] : mf->xinv[i * d + j];
                ulong ae = (ulong)(e >= 0 ? e : -e);
                if (ae)
                    mon = nmod_mul(mon, ae == 1 ? b : n_powmod2_ui_preinv(b, ae, mod.n, mod.ninv),
                                   mod);
            }
            hden = nmod_add(hden, nmod_mul(mf->cw[a], mon, mod), mod);
            for (int j = 0; j < dv; j++)
                num[j] = nmod_add(num[j], nmod_mul(mf->cv[a * dv + j], mon, mod), mod);
        }
        if (hden == 0)
            return 0;
        /* out/den + num/hden = (out hden + num den) / (den hden) */
        for (int j = 0; j < dv; j++)
            out[j] = nmod_add(nmod_mul(out[j], hden, mod), nmod_mul(num[j], den, mod), mod);
        den = nmod_mul(den, hden, mod);
    }
    *den_out = den;
    return 1;
}

static void modfilter_clear(modfilter_t *mf)
{
    free(mf->base);
    free(mf->cv);
    free(mf->cw);
    free(mf->xinv);
    free(mf->x);
}

static hf_err_t modfilter_init(modfilter_t *mf, const hf_target_t *t, const int8_t *id_perm,
                               const int8_t *id_sign)
{
    int d = t->d, dv = t->dv;
    long natoms = hf_target_head_atoms(t);
    memset(mf, 0, sizeof *mf);
    nmod_init(&mf->mod, n_nextprime((UWORD(1) << 62) + 1000, 1));
    mf->x = hf_malloc((size_t)NPOINTS * d * sizeof *mf->x);
    mf->xinv = hf_malloc((size_t)NPOINTS * d * sizeof *mf->xinv);
    mf->cw = hf_malloc((size_t)(natoms ? natoms : 1) * sizeof *mf->cw);
    mf->cv = hf_malloc((size_t)(natoms ? natoms : 1) * dv * sizeof *mf->cv);
    mf->base = hf_malloc((size_t)NPOINTS * dv * sizeof *mf->base);
    if (!mf->x || !mf->xinv || !mf->cw || !mf->cv || !mf->base) {
        modfilter_clear(mf);
        return HF_ERR_NOMEM;
    }
    mf->usable = 1;
    long a = 0;
    for (int h = 0; h < t->nheads; h++) {
        const hf_head_t *hd = &t->heads[h];
        for (long k = 0; k < hd->natoms; k++, a++) {
            mf->usable &= fmpq_mod(&mf->cw[a], hd->weights + k, mf->mod);
            for (int j = 0; j < dv; j++) {
                ulong v = 0;
                mf->usable &= fmpq_mod(&v, hd->values + k * dv + j, mf->mod);
                mf->cv[a * dv + j] = nmod_mul(mf->cw[a], v, mf->mod);
            }
        }
    }
    hf_rng_t st;
    hf_rng_seed(&st, 0x5eed5eedULL); /* fixed seed: the same group on every rank */
    for (int i = 0; i < NPOINTS * d; i++) {
        mf->x[i] = 2 + hf_rng_next(&st) % (mf->mod.n - 3);
        mf->xinv[i] = n_invmod(mf->x[i], mf->mod.n);
    }
    for (int i = 0; i < NPOINTS && mf->usable; i++) {
        ulong den = 0;
        mf->usable &= modfilter_eval(mf, t, id_perm, id_sign, i, mf->base + i * dv, &den);
        if (mf->usable) {
            ulong inv = n_invmod(den, mf->mod.n);
            for (int j = 0; j < dv; j++)
                mf->base[i * dv + j] = nmod_mul(mf->base[i * dv + j], inv, mf->mod);
        }
    }
    return HF_OK;
}

/* 1 when g is proven not to be a symmetry: with T^g(x_i) = n_i / e_i, the determinant
 * of [T^g(x_i), T(x_i), 1] times e_1 e_2 e_3 is nonzero modulo p. */
static int modfilter_rejects(const modfilter_t *mf, const hf_target_t *t, const int8_t *perm,
                             const int8_t *sign)
{
    int dv = t->dv;
    ulong n[NPOINTS][HF_DV_MAX], e[NPOINTS];
    nmod_t m = mf->mod;
    if (!mf->usable)
        return 0;
    for (int i = 0; i < NPOINTS; i++)
        if (!modfilter_eval(mf, t, perm, sign, i, n[i], &e[i]))
            return 0;
    ulong e23 = nmod_mul(e[1], e[2], m), e13 = nmod_mul(e[0], e[2], m);
    ulong e12 = nmod_mul(e[0], e[1], m);
    for (int j = 0; j < dv; j++) {
        const ulong *b = mf->base;
        ulong b1 = b[0 * dv + j], b2 = b[1 * dv + j], b3 = b[2 * dv + j];
        ulong det = nmod_mul(nmod_mul(n[0][j], e23, m), nmod_sub(b2, b3, m), m);
        det = nmod_sub(det, nmod_mul(nmod_mul(n[1][j], e13, m), nmod_sub(b1, b3, m), m), m);
        det = nmod_add(det, nmod_mul(nmod_mul(n[2][j], e12, m), nmod_sub(b1, b2, m), m), m);
        if (det != 0)
            return 1;
    }
    return 0;
}

/* ---------------------------------------------------------------- exact test */

/* 1 when T with keys mapped by g is alpha T + beta (exact comparison of fractions). */
hf_err_t hf_group_exact_test(const hf_target_t *t, const hf_fraction_t *f, const int8_t *perm,
                             const int8_t *sign, int *yes)
{
    hf_err_t err = HF_OK;
    int d = f->d;
    hf_target_t tg;
    hf_target_init_empty(&tg);
    hf_fraction_t fg;
    hf_fraction_init(&fg);
    int64_t k[HF_D_MAX], mn[HF_D_MAX];
    *yes = 0;
    HF_TRY(hf_target_copy(&tg, t));
    for (int h = 0; h < tg.nheads; h++) {
        hf_head_t *hd = &tg.heads[h];
        for (int j = 0; j < d; j++)
            mn[j] = INT64_MAX;
        for (long a = 0; a < hd->natoms; a++) {
            int64_t *key = hd->keys + a * d;
            for (int j = 0; j < d; j++)
                k[j] = sign[j] * key[perm[j]];
            for (int j = 0; j < d; j++) {
                key[j] = k[j];
                if (k[j] < mn[j])
                    mn[j] = k[j];
            }
        }
        /* shift each head to nonnegative keys: the head's function is unchanged */
        for (long a = 0; a < hd->natoms; a++)
            for (int j = 0; j < d; j++)
                hd->keys[a * d + j] -= mn[j];
    }
    err = hf_fraction_from_target(&fg, &tg);
    if (err == HF_OK)
        *yes = hf_symmetry_affine_equal(f, &fg);
    hf_fraction_clear(&fg);
    hf_target_clear(&tg);
    return err;
}

/* ---------------------------------------------------------------- elements */

/* An element is 2d bytes: perm[0..d-1], then sign[0..d-1] (+1 or -1). Sets of elements are
 * core's integer-vector sets with the bytes packed into words. */

int hf_group_elem_words(int d)
{
    return (2 * d + 7) / 8;
}

void hf_group_elem_pack(int d, const int8_t *e, int64_t *w)
{
    memset(w, 0, (size_t)hf_group_elem_words(d) * sizeof *w);
    memcpy(w, e, 2 * (size_t)d);
}

void hf_group_elem_unpack(int d, const int64_t *w, int8_t *e)
{
    memcpy(e, w, 2 * (size_t)d);
}

void hf_group_elem_compose(int d, const int8_t *g, const int8_t *h, int8_t *out)
{
    for (int j = 0; j < d; j++) {
        out[j] = h[g[j]];
        out[d + j] = (int8_t)(g[d + j] * h[d + g[j]]);
    }
}

/* Add element e to the set: 1 added, 0 already there, -1 out of memory. */
static int elem_add(hf_ivset_t *set, int d, const int8_t *e)
{
    int64_t w[(2 * HF_D_MAX + 7) / 8];
    int added = 0;
    hf_group_elem_pack(d, e, w);
    return hf_ivset_insert(set, w, &added) < 0 ? -1 : added;
}

static int elem_has(const hf_ivset_t *set, int d, const int8_t *e)
{
    int64_t w[(2 * HF_D_MAX + 7) / 8];
    hf_group_elem_pack(d, e, w);
    return hf_ivset_find(set, w) >= 0;
}

/* Element i of the set, in insertion order. */
static void elem_get(const hf_ivset_t *set, int d, long i, int8_t *e)
{
    hf_group_elem_unpack(d, set->keys + i * set->b, e);
}

/* ---------------------------------------------------------------- the group */

hf_err_t hf_group_filter(const hf_target_t *t, const hf_fraction_t *f, long ncand,
                         const int8_t *cperm, const int8_t *csign, long limit, int oracle,
                         long *order, long *ngens, int8_t **gperm, int8_t **gsign, int8_t **elems)
{
    hf_err_t err = HF_OK;
    int d = f->d, W = hf_group_elem_words(d);
    size_t L = 2 * (size_t)d;
    hf_ivset_t cand, sym;
    modfilter_t mf;
    int have_mf = 0;
    int8_t *c = hf_malloc((size_t)(ncand ? ncand : 1) * L), *gens = NULL;
    int8_t e[2 * HF_D_MAX], x[2 * HF_D_MAX], y[2 * HF_D_MAX];
    long ng = 0;
    *order = *ngens = 0;
    *gperm = *gsign = NULL;
    if (elems)
        *elems = NULL;
    hf_err_t ec = hf_ivset_init(&cand, W), es = hf_ivset_init(&sym, W);
    gens = hf_malloc(L * ((size_t)d * 8 + 8));
    if (!c || !gens || ec != HF_OK || es != HF_OK) {
        err = HF_ERR_NOMEM;
        goto done;
    }
    for (long k = 0; k < ncand; k++) {
        memcpy(c + k * L, cperm + k * d, (size_t)d);
        memcpy(c + k * L + d, csign + k * d, (size_t)d);
    }
    for (int j = 0; j < d; j++) {
        e[j] = (int8_t)j;
        e[d + j] = 1;
    }
    HF_CHECK(err, modfilter_init(&mf, t, e, e + d), done);
    have_mf = 1;
    if (elem_add(&cand, d, e) < 0 || elem_add(&sym, d, e) < 0) {
        err = HF_ERR_NOMEM;
        goto done;
    }
    /* breadth-first over the candidate group; a candidate outside the symmetries found so
     * far is tested, and a proven one joins the generators and the group is closed again
     * (a finite set containing 1 and closed under the generators is the group) */
    for (long i = 0; i < cand.n; i++) {
        elem_get(&cand, d, i, e);
        if (!elem_has(&sym, d, e) && !modfilter_rejects(&mf, t, e, e + d)) {
            int yes = 0;
            HF_CHECK(err,
                     oracle ? hf_group_exact_test(t, f, e, e + d, &yes)
                            : hf_group_check(f, e, e + d, &yes),
                     done);
            if (yes) {
                if (ng == d * 8 + 8) { /* at most log2 |G| <= d log2(2d) generators */
                    err = hf_error(HF_ERR_LIMIT, "symmetry: too many generators");
                    goto done;
                }
                memcpy(gens + ng++ * L, e, L);
                for (long a = 0; a < sym.n; a++)
                    for (long k = 0; k < ng; k++) {
                        elem_get(&sym, d, a, y);
                        hf_group_elem_compose(d, y, gens + k * L, x);
                        if (elem_add(&sym, d, x) < 0) {
                            err = HF_ERR_NOMEM;
                            goto done;
                        }
                    }
            }
        }
        for (long k = 0; k < ncand; k++) {
            hf_group_elem_compose(d, e, c + k * L, x);
            int r = elem_add(&cand, d, x);
            if (r < 0) {
                err = HF_ERR_NOMEM;
                goto done;
            }
            if (r && cand.n > limit) {
                err = hf_error(HF_ERR_LIMIT, "symmetry: more than %ld candidates to test", limit);
                goto done;
            }
        }
    }
    *gperm = hf_malloc((size_t)(ng ? ng : 1) * d);
    *gsign = hf_malloc((size_t)(ng ? ng : 1) * d);
    if (elems)
        *elems = hf_malloc((size_t)sym.n * L);
    if (!*gperm || !*gsign || (elems && !*elems)) {
        err = HF_ERR_NOMEM;
        goto done;
    }
    for (long k = 0; k < ng; k++) {
        memcpy(*gperm + k * d, gens + k * L, (size_t)d);
        memcpy(*gsign + k * d, gens + k * L + d, (size_t)d);
    }
    for (long a = 0; elems && a < sym.n; a++) /* identity first */
        elem_get(&sym, d, a, *elems + a * L);
    *ngens = ng;
    *order = sym.n;
done:
    if (err != HF_OK) {
        free(*gperm);
        free(*gsign);
        *gperm = *gsign = NULL;
        if (elems) {
            free(*elems);
            *elems = NULL;
        }
    }
    if (have_mf)
        modfilter_clear(&mf);
    hf_ivset_clear(&sym);
    hf_ivset_clear(&cand);
    free(gens);
    free(c);
    return err;
}

hf_err_t hf_group_brute(const hf_target_t *t, const hf_fraction_t *f, long *order, long *ngens,
                        int8_t **gperm, int8_t **gsign, int8_t **elems)
{
    int d = f->d;
    if (d > HF_GROUP_DMAX)
        return hf_error(HF_ERR_LIMIT, "symmetry: brute force for d <= %d only", HF_GROUP_DMAX);
    /* the signed permutations are generated by the swaps (j j+1) and one sign change */
    int8_t p[HF_D_MAX * HF_D_MAX], sg[HF_D_MAX * HF_D_MAX];
    for (int k = 0; k < d; k++)
        for (int j = 0; j < d; j++) {
            p[k * d + j] = (int8_t)j;
            sg[k * d + j] = 1;
        }
    for (int k = 0; k + 1 < d; k++) {
        p[k * d + k] = (int8_t)(k + 1);
        p[k * d + k + 1] = (int8_t)k;
    }
    sg[(d - 1) * d] = -1;
    return hf_group_filter(t, f, d, p, sg, LONG_MAX, 1, order, ngens, gperm, gsign, elems);
}

/* A new group of order `order` (unknown: a GROUP_UNKNOWN_* reason, the order reported as
 * -1) with the given generators (taken over: the group frees them). */
static hf_err_t group_new(int d, long order, int unknown, long ngens, int8_t *gperm, int8_t *gsign,
                          hf_group_t **out)
{
    hf_group_t *g = hf_calloc(1, sizeof *g);
    if (!g) {
        free(gperm);
        free(gsign);
        return HF_ERR_NOMEM;
    }
    g->d = d;
    g->order = order;
    g->unknown = unknown;
    g->ngens = ngens;
    g->gperm = gperm;
    g->gsign = gsign;
    *out = g;
    return HF_OK;
}

int hf_group_needs_fraction(int d, long terms)
{
    return d <= HF_GROUP_DMAX || terms <= HF_GROUP_POINTS_MAX;
}

hf_err_t hf_group_create_unknown(int d, hf_group_t **out)
{
    *out = NULL;
    return group_new(d, 1, GROUP_UNKNOWN_TERMS, 0, NULL, NULL, out);
}

hf_err_t hf_group_create(const hf_target_t *t, const hf_fraction_t *f, hf_group_t **out)
{
    hf_err_t err = HF_OK;
    int d = f->d, complete = 0;
    long norder = -1, nn = 0, order = 0, ng = 0, nok = 0;
    int8_t *np = NULL, *ns = NULL, *gp = NULL, *gs = NULL;
    *out = NULL;

    HF_CHECK(err, hf_group_nauty(f, &complete, &norder, &nn, &np, &ns), done);
    if (!complete) {
        /* P/Q too large for the graph: the brute force where it runs, else unknown */
        if (d <= HF_GROUP_DMAX) {
            HF_CHECK(err, hf_group_brute(t, f, &order, &ng, &gp, &gs, NULL), done);
            err = group_new(d, order, 0, ng, gp, gs, out);
        } else {
            err = group_new(d, 1, GROUP_UNKNOWN_TERMS, 0, NULL, NULL, out);
        }
        gp = gs = NULL;
        goto done;
    }
    /* every automorphism of the graph is a candidate; each generator is checked exactly */
    gp = hf_malloc((size_t)(nn ? nn : 1) * d);
    gs = hf_malloc((size_t)(nn ? nn : 1) * d);
    if (!gp || !gs) {
        err = HF_ERR_NOMEM;
        goto done;
    }
    for (long k = 0; k < nn; k++) {
        int yes = 0;
        HF_CHECK(err, hf_group_check(f, np + k * d, ns + k * d, &yes), done);
        if (yes) {
            memcpy(gp + nok * d, np + k * d, (size_t)d);
            memcpy(gs + nok * d, ns + k * d, (size_t)d);
            nok++;
        }
    }
    if (nok == nn) {
        /* the graph's group is the symmetry group (docs/search.md, "Symmetry") */
        err = group_new(d, norder < 0 ? 1 : norder, norder < 0 ? GROUP_UNKNOWN_ORDER : 0, nn, gp,
                        gs, out);
    } else if (norder > 0 && norder <= HF_GROUP_ENUM_MAX) {
        /* a generator failed: the symmetries are a subgroup of the graph's group, found
         * by testing its elements one by one */
        free(gp);
        free(gs);
        gp = gs = NULL;
        HF_CHECK(
            err,
            hf_group_filter(t, f, nn, np, ns, HF_GROUP_ENUM_MAX, 0, &order, &ng, &gp, &gs, NULL),
            done);
        err = group_new(d, order, 0, ng, gp, gs, out);
    } else {
        /* too large to test element by element: keep the checked generators (a subgroup)
         * and report the order as unknown, so no orbit count is claimed */
        err = group_new(d, 1, GROUP_UNKNOWN_TESTS, nok, gp, gs, out);
    }
    gp = gs = NULL;
done:
    free(gp);
    free(gs);
    free(np);
    free(ns);
    return err;
}

/* Words: d, order, unknown, ngens, then the generators' perms and signs (one a word). */
hf_err_t hf_group_pack(const hf_group_t *g, int64_t **words, long *n)
{
    long len = 4 + 2 * g->ngens * g->d;
    int64_t *w = hf_malloc((size_t)len * sizeof *w);
    if (!w)
        return HF_ERR_NOMEM;
    w[0] = g->d;
    w[1] = g->order;
    w[2] = g->unknown;
    w[3] = g->ngens;
    for (long k = 0; k < g->ngens * g->d; k++) {
        w[4 + k] = g->gperm[k];
        w[4 + g->ngens * g->d + k] = g->gsign[k];
    }
    *words = w;
    *n = len;
    return HF_OK;
}

hf_err_t hf_group_unpack(const int64_t *w, long n, hf_group_t **out)
{
    *out = NULL;
    if (n < 4 || w[0] < 1 || w[0] > HF_D_MAX || w[1] < 1 || w[2] < 0 ||
        w[2] > GROUP_UNKNOWN_TESTS || w[3] < 0 || w[3] > (n - 4) / (2 * w[0]) ||
        n != 4 + 2 * w[3] * w[0])
        return hf_error(HF_ERR_INTERNAL, "group: %ld words do not hold a group", n);
    int d = (int)w[0];
    long ng = (long)w[3], cells = ng * d;
    int8_t *gp = hf_malloc((size_t)(cells ? cells : 1));
    int8_t *gs = hf_malloc((size_t)(cells ? cells : 1));
    if (!gp || !gs) {
        free(gp);
        free(gs);
        return HF_ERR_NOMEM;
    }
    for (long k = 0; k < cells; k++) {
        int64_t p = w[4 + k], sg = w[4 + cells + k];
        if (p < 0 || p >= d || (sg != 1 && sg != -1)) {
            free(gp);
            free(gs);
            return hf_error(HF_ERR_INTERNAL, "group: generator %ld is not a signed permutation",
                            k / d);
        }
        gp[k] = (int8_t)p;
        gs[k] = (int8_t)sg;
    }
    return group_new(d, (long)w[1], (int)w[2], ng, gp, gs, out);
}

void hf_group_destroy(hf_group_t **gp)
{
    if (!gp || !*gp)
        return;
    free((*gp)->gperm);
    free((*gp)->gsign);
    free(*gp);
    *gp = NULL;
}

long hf_group_order(const hf_group_t *g)
{
    return g->unknown ? -1 : g->order;
}

const char *hf_group_unknown_reason(const hf_group_t *g)
{
    switch (g->unknown) {
    case 0:
        return NULL;
    case GROUP_UNKNOWN_TERMS:
        return "P/Q has more than 2^18 terms";
    case GROUP_UNKNOWN_ORDER:
        return "its order is beyond 2^53";
    default:
        return "a candidate generator failed and the group is too large to test element by "
               "element";
    }
}
