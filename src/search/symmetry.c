/* Symmetries of a target (MATH.md section 3): signed coordinate permutations g of the key
 * lattice, k -> g k with (g k)_j = sign_j k_{perm_j}, such that the target with every key
 * mapped by g equals alpha T + beta. Such a g maps feasible supports to feasible
 * supports, so supports are counted up to this group.
 *
 * Candidates are rejected fast and exactly by evaluating both targets modulo a prime at
 * three random points: if T^g = alpha T + beta, the 3x3 matrix [T^g(x_i), T(x_i), 1] is
 * singular over Q, hence modulo p; a nonzero determinant modulo p is a proof that g is
 * not a symmetry. Every other candidate is decided by comparing the exact fractions
 * (unique normal form, algebra.h). Products of proven symmetries are symmetries, so the
 * group is closed under products as it grows and only new elements are tested. */
#include <stdlib.h>
#include <string.h>

#include <flint/fmpz_mpoly.h>
#include <flint/nmod_vec.h>
#include <flint/ulong_extras.h>

#include "headfuse/core.h"
#include "search/search_impl.h"

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

int hf_search_fraction_affine_equal(const hf_fraction_t *a, const hf_fraction_t *b)
{
    if (a->d != b->d || a->dv != b->dv)
        return 0;
    return affine_equal(a->ctx, a->d, a->dv, a->P, a->Q, b->P, b->Q);
}

hf_err_t hf_search_group_check(const hf_search_t *s, const int8_t *perm, const int8_t *sign,
                               int *yes)
{
    const hf_fraction_t *f = &s->frac;
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
hf_err_t hf_search_group_exact_test(const hf_search_t *s, const int8_t *perm, const int8_t *sign,
                                    int *yes)
{
    hf_err_t err = HF_OK;
    int d = s->d;
    hf_target_t tg;
    hf_target_init_empty(&tg);
    hf_fraction_t fg;
    int64_t k[HF_D_MAX], mn[HF_D_MAX];
    *yes = 0;
    HF_TRY(hf_target_copy(&tg, &s->t));
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
        *yes = hf_search_fraction_affine_equal(&s->frac, &fg);
    hf_fraction_clear(&fg);
    hf_target_clear(&tg);
    return err;
}

/* ---------------------------------------------------------------- sets of items */

/* Fixed-length byte strings in insertion order with an open-addressing index: group
 * elements (2d bytes) and supports (m d keys). */
typedef struct {
    size_t len;
    long n, cap;
    uint8_t *items; /* n x len */
    long *slot;     /* item index or -1 */
    long nslot;     /* a power of two, or 0 */
} itemset_t;

static uint64_t item_hash(const uint8_t *p, size_t len)
{
    return hf_hash_bytes(HF_HASH_INIT, p, len);
}

static void itemset_init(itemset_t *s, size_t len)
{
    memset(s, 0, sizeof *s);
    s->len = len;
}

static void itemset_clear(itemset_t *s)
{
    free(s->slot);
    free(s->items);
}

static long itemset_find(const itemset_t *s, const uint8_t *key, long *pos)
{
    size_t mask = (size_t)s->nslot - 1, h = (size_t)item_hash(key, s->len) & mask;
    for (; s->slot[h] >= 0; h = (h + 1) & mask)
        if (!memcmp(s->items + (size_t)s->slot[h] * s->len, key, s->len))
            break;
    *pos = (long)h;
    return s->slot[h];
}

/* 1: added, 0: already present, -1: out of memory. key must not point into s. */
static int itemset_add(itemset_t *s, const uint8_t *key)
{
    if (2 * (s->n + 1) > s->nslot) {
        long ns = s->nslot ? 2 * s->nslot : 64;
        long *slot = hf_malloc((size_t)ns * sizeof *slot);
        if (!slot)
            return -1;
        for (long i = 0; i < ns; i++)
            slot[i] = -1;
        free(s->slot);
        s->slot = slot;
        s->nslot = ns;
        for (long i = 0; i < s->n; i++) {
            long pos;
            itemset_find(s, s->items + (size_t)i * s->len, &pos);
            s->slot[pos] = i;
        }
    }
    long pos;
    if (itemset_find(s, key, &pos) >= 0)
        return 0;
    if (s->n == s->cap) {
        long nc = s->cap ? 2 * s->cap : 64;
        uint8_t *it = hf_realloc(s->items, (size_t)nc * s->len);
        if (!it)
            return -1;
        s->items = it;
        s->cap = nc;
    }
    memcpy(s->items + (size_t)s->n * s->len, key, s->len);
    s->slot[pos] = s->n++;
    return 1;
}

static int itemset_has(const itemset_t *s, const uint8_t *key)
{
    long pos;
    return s->nslot && itemset_find(s, key, &pos) >= 0;
}

/* ---------------------------------------------------------------- the group */

/* An element as 2d bytes: perm[0..d-1], then sign[0..d-1] (+1 or -1). */

/* Apply h, then g: perm_j = perm_h[perm_g[j]], sign_j = sign_g[j] sign_h[perm_g[j]]. */
static void elem_compose(int d, const int8_t *g, const int8_t *h, int8_t *out)
{
    for (int j = 0; j < d; j++) {
        out[j] = h[g[j]];
        out[d + j] = (int8_t)(g[d + j] * h[d + g[j]]);
    }
}

hf_err_t hf_search_group_filter(const hf_search_t *s, long ncand, const int8_t *cperm,
                                const int8_t *csign, long limit, int oracle, long *order,
                                long *ngens, int8_t **gperm, int8_t **gsign, int8_t **elems)
{
    hf_err_t err = HF_OK;
    int d = s->d;
    size_t L = 2 * (size_t)d;
    itemset_t cand, sym;
    modfilter_t mf;
    int have_mf = 0;
    int8_t *c = hf_malloc((size_t)(ncand ? ncand : 1) * L), *gens = NULL;
    int8_t e[2 * HF_D_MAX], x[2 * HF_D_MAX];
    long ng = 0;
    itemset_init(&cand, L);
    itemset_init(&sym, L);
    *order = *ngens = 0;
    *gperm = *gsign = NULL;
    if (elems)
        *elems = NULL;
    gens = hf_malloc(L * ((size_t)d * 8 + 8));
    if (!c || !gens) {
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
    HF_CHECK(err, modfilter_init(&mf, &s->t, e, e + d), done);
    have_mf = 1;
    if (itemset_add(&cand, (uint8_t *)e) < 0 || itemset_add(&sym, (uint8_t *)e) < 0) {
        err = HF_ERR_NOMEM;
        goto done;
    }
    /* breadth-first over the candidate group; a candidate outside the symmetries found so
     * far is tested, and a proven one joins the generators and the group is closed again
     * (a finite set containing 1 and closed under the generators is the group) */
    for (long i = 0; i < cand.n; i++) {
        memcpy(e, cand.items + (size_t)i * L, L);
        if (!itemset_has(&sym, (uint8_t *)e) && !modfilter_rejects(&mf, &s->t, e, e + d)) {
            int yes = 0;
            HF_CHECK(err,
                     oracle ? hf_search_group_exact_test(s, e, e + d, &yes)
                            : hf_search_group_check(s, e, e + d, &yes),
                     done);
            if (yes) {
                if (ng == d * 8 + 8) { /* at most log2 |G| <= d log2(2d) generators */
                    err = hf_error(HF_ERR_LIMIT, "symmetry: too many generators");
                    goto done;
                }
                memcpy(gens + ng++ * L, e, L);
                for (long a = 0; a < sym.n; a++)
                    for (long k = 0; k < ng; k++) {
                        int8_t y[2 * HF_D_MAX];
                        memcpy(y, sym.items + (size_t)a * L, L);
                        elem_compose(d, y, gens + k * L, x);
                        if (itemset_add(&sym, (uint8_t *)x) < 0) {
                            err = HF_ERR_NOMEM;
                            goto done;
                        }
                    }
            }
        }
        for (long k = 0; k < ncand; k++) {
            elem_compose(d, e, c + k * L, x);
            int r = itemset_add(&cand, (uint8_t *)x);
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
    if (!*gperm || !*gsign) {
        err = HF_ERR_NOMEM;
        goto done;
    }
    for (long k = 0; k < ng; k++) {
        memcpy(*gperm + k * d, gens + k * L, (size_t)d);
        memcpy(*gsign + k * d, gens + k * L + d, (size_t)d);
    }
    *ngens = ng;
    *order = sym.n;
    if (elems) {
        *elems = (int8_t *)sym.items; /* identity first */
        sym.items = NULL;
    }
done:
    if (err != HF_OK) {
        free(*gperm);
        free(*gsign);
        *gperm = *gsign = NULL;
    }
    if (have_mf)
        modfilter_clear(&mf);
    itemset_clear(&sym);
    itemset_clear(&cand);
    free(gens);
    free(c);
    return err;
}

hf_err_t hf_search_group_brute(const hf_search_t *s, long *order, long *ngens, int8_t **gperm,
                               int8_t **gsign, int8_t **elems)
{
    int d = s->d;
    if (d > HF_SEARCH_GROUP_DMAX)
        return hf_error(HF_ERR_LIMIT, "symmetry: brute force for d <= %d only",
                        HF_SEARCH_GROUP_DMAX);
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
    return hf_search_group_filter(s, d, p, sg, LONG_MAX, 1, order, ngens, gperm, gsign, elems);
}

static hf_err_t group_set(hf_search_t *s, long order, int unknown, long ngens, int8_t *gperm,
                          int8_t *gsign)
{
    s->gorder = order;
    s->group_unknown = unknown;
    s->ngens = ngens;
    s->gperm = gperm;
    s->gsign = gsign;
    return HF_OK;
}

hf_err_t hf_search_group_compute(hf_search_t *s)
{
    hf_err_t err = HF_OK;
    int d = s->d, complete = 0;
    long norder = -1, nn = 0, order = 0, ng = 0, nok = 0;
    int8_t *np = NULL, *ns = NULL, *gp = NULL, *gs = NULL;

    HF_CHECK(err, hf_search_group_nauty(s, &complete, &norder, &nn, &np, &ns), done);
    if (!complete) {
        /* P/Q too large for the graph: the brute force where it runs, else unknown */
        if (d <= HF_SEARCH_GROUP_DMAX) {
            HF_CHECK(err, hf_search_group_brute(s, &order, &ng, &gp, &gs, NULL), done);
            err = group_set(s, order, 0, ng, gp, gs);
            gp = gs = NULL;
        } else {
            err = group_set(s, 1, 1, 0, NULL, NULL);
        }
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
        HF_CHECK(err, hf_search_group_check(s, np + k * d, ns + k * d, &yes), done);
        if (yes) {
            memcpy(gp + nok * d, np + k * d, (size_t)d);
            memcpy(gs + nok * d, ns + k * d, (size_t)d);
            nok++;
        }
    }
    if (nok == nn) {
        /* the graph's group is the symmetry group (docs/search.md, "Symmetry") */
        err = group_set(s, norder < 0 ? 1 : norder, norder < 0, nn, gp, gs);
        gp = gs = NULL;
    } else if (norder > 0 && norder <= HF_SEARCH_GROUP_ENUM_MAX) {
        /* a generator failed: the symmetries are a subgroup of the graph's group, found
         * by testing its elements one by one */
        free(gp);
        free(gs);
        gp = gs = NULL;
        HF_CHECK(err,
                 hf_search_group_filter(s, nn, np, ns, HF_SEARCH_GROUP_ENUM_MAX, 0, &order, &ng,
                                        &gp, &gs, NULL),
                 done);
        err = group_set(s, order, 0, ng, gp, gs);
        gp = gs = NULL;
    } else {
        /* too large to test element by element: keep the checked generators (a subgroup)
         * and report the order as unknown, so no orbit count is claimed */
        err = group_set(s, 1, 1, nok, gp, gs);
        gp = gs = NULL;
    }
done:
    free(gp);
    free(gs);
    free(np);
    free(ns);
    return err;
}

long hf_search_group_order(const hf_search_t *s)
{
    return s->group_unknown ? -1 : s->gorder;
}

static int row_cmp(const int64_t *a, const int64_t *b, int d)
{
    for (int j = 0; j < d; j++)
        if (a[j] != b[j])
            return a[j] < b[j] ? -1 : 1;
    return 0;
}

/* Image of keys under (perm, sign), in canonical position, rows sorted. */
static void orbit_image(int d, const int8_t *perm, const int8_t *sign, long m, const int64_t *keys,
                        int64_t *img, int64_t *row)
{
    int64_t mn[HF_D_MAX];
    for (int j = 0; j < d; j++)
        mn[j] = INT64_MAX;
    for (long i = 0; i < m; i++)
        for (int j = 0; j < d; j++) {
            int64_t v = sign[j] * keys[i * d + perm[j]];
            img[i * d + j] = v;
            if (v < mn[j])
                mn[j] = v;
        }
    for (long i = 0; i < m; i++)
        for (int j = 0; j < d; j++)
            img[i * d + j] -= mn[j];
    /* insertion sort of the rows: supports are small */
    for (long i = 1; i < m; i++) {
        memcpy(row, img + i * d, (size_t)d * sizeof *row);
        long k = i;
        while (k > 0 && row_cmp(img + (k - 1) * d, row, d) > 0) {
            memcpy(img + k * d, img + (k - 1) * d, (size_t)d * sizeof *row);
            k--;
        }
        memcpy(img + k * d, row, (size_t)d * sizeof *row);
    }
}

static void keep_min(int64_t *out, const int64_t *img, long len)
{
    for (long i = 0; i < len; i++)
        if (img[i] != out[i]) {
            if (img[i] < out[i])
                memcpy(out, img, (size_t)len * sizeof *img);
            return;
        }
}

/* The smallest image over n elements; img: scratch of m d + d. */
static void orbit_min_over(int d, long n, const int8_t *elems, long m, const int64_t *keys,
                           int64_t *out, int64_t *img)
{
    for (long g = 0; g < n; g++) {
        const int8_t *e = elems + g * 2 * d;
        orbit_image(d, e, e + d, m, keys, g ? img : out, img + m * d);
        if (g)
            keep_min(out, img, m * d);
    }
}

void hf_search_orbit_rep_list(int d, long n, const int8_t *elems, long m, const int64_t *keys,
                              int64_t *out)
{
    int64_t *img = malloc((size_t)(m * d + d) * sizeof *img);
    if (!img)
        abort(); /* test oracle only */
    orbit_min_over(d, n, elems, m, keys, out, img);
    free(img);
}

long hf_search_orbit_bytes_max = HF_SEARCH_ORBIT_BYTES;

/* The representative by running over the group's elements, listed by closure under the
 * generators: for an orbit too large to hold (|G| 2d bytes instead of |orbit| m d 8). */
static hf_err_t orbit_rep_by_elements(const hf_search_t *s, long m, const int64_t *keys,
                                      int64_t *out)
{
    hf_err_t err = HF_OK;
    int d = s->d;
    size_t L = 2 * (size_t)d;
    int8_t e[2 * HF_D_MAX], g[2 * HF_D_MAX], x[2 * HF_D_MAX];
    if (s->group_unknown || s->gorder > HF_SEARCH_GROUP_LIST_MAX)
        return hf_error(HF_ERR_LIMIT,
                        "orbit: a support of %ld keys has an orbit too large to hold, and the "
                        "group (order %ld) is too large to list",
                        m, s->group_unknown ? -1 : s->gorder);
    int64_t *img = hf_malloc((size_t)(m * d + d) * sizeof *img);
    itemset_t el;
    itemset_init(&el, L);
    if (!img) {
        err = HF_ERR_NOMEM;
        goto done;
    }
    for (int j = 0; j < d; j++) {
        e[j] = (int8_t)j;
        e[d + j] = 1;
    }
    if (itemset_add(&el, (uint8_t *)e) < 0) {
        err = HF_ERR_NOMEM;
        goto done;
    }
    for (long i = 0; i < el.n; i++) {
        memcpy(e, el.items + (size_t)i * L, L);
        for (long k = 0; k < s->ngens; k++) {
            memcpy(g, s->gperm + k * d, (size_t)d);
            memcpy(g + d, s->gsign + k * d, (size_t)d);
            elem_compose(d, e, g, x);
            if (itemset_add(&el, (uint8_t *)x) < 0) {
                err = HF_ERR_NOMEM;
                goto done;
            }
        }
    }
    orbit_min_over(d, el.n, (const int8_t *)el.items, m, keys, out, img);
done:
    itemset_clear(&el);
    free(img);
    return err;
}

hf_err_t hf_search_orbit_rep(const hf_search_t *s, long m, const int64_t *keys, int64_t *out)
{
    hf_err_t err = HF_OK;
    int d = s->d;
    int8_t id[HF_D_MAX], one[HF_D_MAX];
    if (m < 1)
        return hf_error(HF_ERR_INPUT, "orbit: size %ld: must be >= 1", m);
    for (int j = 0; j < d; j++) {
        id[j] = (int8_t)j;
        one[j] = 1;
    }
    int64_t *img = hf_malloc((size_t)(2 * m * d + d) * sizeof *img);
    if (!img)
        return HF_ERR_NOMEM;
    int64_t *cur = img + m * d, *row = cur + m * d;
    orbit_image(d, id, one, m, keys, out, row);
    if (s->ngens == 0) {
        free(img);
        return HF_OK;
    }
    /* the orbit is the closure of the support under the generators: the group itself is
     * not listed (it can have 2^d d! elements) unless the orbit is too large to hold */
    size_t len = (size_t)(m * d) * sizeof *img;
    itemset_t orb;
    itemset_init(&orb, len);
    if (itemset_add(&orb, (const uint8_t *)out) < 0) {
        err = HF_ERR_NOMEM;
        goto done;
    }
    for (long i = 0; i < orb.n; i++) {
        memcpy(cur, orb.items + (size_t)i * len, len);
        for (long k = 0; k < s->ngens; k++) {
            orbit_image(d, s->gperm + k * d, s->gsign + k * d, m, cur, img, row);
            int r = itemset_add(&orb, (const uint8_t *)img);
            if (r < 0) {
                err = HF_ERR_NOMEM;
                goto done;
            }
            if (r && (size_t)orb.n * len > (size_t)hf_search_orbit_bytes_max) {
                itemset_clear(&orb);
                free(img);
                return orbit_rep_by_elements(s, m, keys, out);
            }
            if (r)
                keep_min(out, img, m * d);
        }
    }
done:
    itemset_clear(&orb);
    free(img);
    return err;
}
