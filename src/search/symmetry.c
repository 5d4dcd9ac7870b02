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

#include "search/search_impl.h"

int hf_search_fraction_affine_equal(const hf_fraction_t *a, const hf_fraction_t *b)
{
    if (a->d != b->d || a->dv != b->dv)
        return 0;
    const fmpz_mpoly_ctx_struct *ctx = a->ctx;
    slong len = fmpz_mpoly_length(a->Q, ctx);
    if (len == 0 || fmpz_mpoly_length(b->Q, ctx) != len)
        return 0;
    int dv = a->dv, res = 0;
    fmpz_t la, lb, ca, cb;
    fmpz_mpoly_t x, y;
    fmpz_mpoly_struct *ra = flint_malloc(2 * dv * sizeof *ra), *rb = ra + dv;
    ulong *exp = flint_malloc((a->d ? a->d : 1) * sizeof *exp);
    fmpz_init(la);
    fmpz_init(lb);
    fmpz_init(ca);
    fmpz_init(cb);
    fmpz_mpoly_init(x, ctx);
    fmpz_mpoly_init(y, ctx);
    for (int j = 0; j < 2 * dv; j++)
        fmpz_mpoly_init(ra + j, ctx);

    /* Q_b = lambda Q_a */
    fmpz_mpoly_get_term_coeff_fmpz(la, a->Q, 0, ctx);
    fmpz_mpoly_get_term_coeff_fmpz(lb, b->Q, 0, ctx);
    fmpz_mpoly_scalar_mul_fmpz(x, a->Q, lb, ctx);
    fmpz_mpoly_scalar_mul_fmpz(y, b->Q, la, ctx);
    if (!fmpz_mpoly_equal(x, y, ctx))
        goto done;
    /* remove the multiple of Q from each numerator: r = lc(Q) P - P[lm(Q)] Q, which is
     * zero iff P is in span(Q) */
    fmpz_mpoly_get_term_exp_ui(exp, a->Q, 0, ctx);
    for (int j = 0; j < dv; j++) {
        fmpz_mpoly_get_coeff_fmpz_ui(ca, a->P + j, exp, ctx);
        fmpz_mpoly_scalar_mul_fmpz(ra + j, a->P + j, la, ctx);
        fmpz_mpoly_scalar_mul_fmpz(x, a->Q, ca, ctx);
        fmpz_mpoly_sub(ra + j, ra + j, x, ctx);
        fmpz_mpoly_get_coeff_fmpz_ui(cb, b->P + j, exp, ctx);
        fmpz_mpoly_scalar_mul_fmpz(rb + j, b->P + j, lb, ctx);
        fmpz_mpoly_scalar_mul_fmpz(x, b->Q, cb, ctx);
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
static hf_err_t group_exact_test(const hf_search_t *s, const int8_t *perm, const int8_t *sign,
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

/* ---------------------------------------------------------------- the group */

/* Element e = permutation rank * 2^d + sign mask (bit j set: sign_j = -1). */
typedef struct {
    int d;
    long nperm;
    int8_t *perms; /* nperm x d, lexicographic */
} permtab_t;

static long perm_rank(const int8_t *p, int d)
{
    long r = 0;
    for (int i = 0; i < d; i++) {
        long smaller = 0;
        for (int j = i + 1; j < d; j++)
            smaller += p[j] < p[i];
        r = r * (d - i) + smaller;
    }
    return r;
}

static void elem_decode(const permtab_t *pt, long e, int8_t *perm, int8_t *sign)
{
    int d = pt->d;
    memcpy(perm, pt->perms + (e >> d) * d, (size_t)d);
    for (int j = 0; j < d; j++)
        sign[j] = (e >> j) & 1 ? -1 : 1;
}

/* Apply h, then g: perm_j = perm_h[perm_g[j]], sign_j = sign_g[j] sign_h[perm_g[j]]. */
static long elem_compose(const permtab_t *pt, long g, long h)
{
    int d = pt->d;
    int8_t pg[HF_D_MAX], sg[HF_D_MAX], ph[HF_D_MAX], sh[HF_D_MAX], p[HF_D_MAX];
    long mask = 0;
    elem_decode(pt, g, pg, sg);
    elem_decode(pt, h, ph, sh);
    for (int j = 0; j < d; j++) {
        p[j] = ph[pg[j]];
        if (sg[j] * sh[pg[j]] < 0)
            mask |= 1L << j;
    }
    return (perm_rank(p, d) << d) | mask;
}

hf_err_t hf_search_group_compute(hf_search_t *s)
{
    hf_err_t err = HF_OK;
    int d = s->d;
    permtab_t pt = {d, 1, NULL};
    modfilter_t mf;
    int have_mf = 0;
    uint8_t *in = NULL;
    long *list = NULL, *gens = NULL, nlist = 0, ngens = 0;
    int8_t perm[HF_D_MAX], sign[HF_D_MAX];

    if (d > HF_SEARCH_GROUP_DMAX) {
        /* 2^d d! candidates is too many to test: use the identity alone and report the
         * order as unknown, so no orbit count is claimed */
        s->gorder = 1;
        s->group_unknown = 1;
        s->gperm = hf_malloc((size_t)d);
        s->gsign = hf_malloc((size_t)d);
        if (!s->gperm || !s->gsign)
            return HF_ERR_NOMEM;
        for (int j = 0; j < d; j++) {
            s->gperm[j] = (int8_t)j;
            s->gsign[j] = 1;
        }
        return HF_OK;
    }
    for (int j = 2; j <= d; j++)
        pt.nperm *= j;
    long nel = pt.nperm << d;
    pt.perms = hf_malloc((size_t)pt.nperm * d);
    in = hf_calloc((size_t)nel, 1);
    list = hf_malloc((size_t)nel * sizeof *list);
    gens = hf_malloc((size_t)(d + 2) * 8 * sizeof *gens);
    if (!pt.perms || !in || !list || !gens) {
        err = HF_ERR_NOMEM;
        goto done;
    }
    /* permutations in lexicographic order (next-permutation steps) */
    for (int j = 0; j < d; j++)
        perm[j] = (int8_t)j;
    for (long r = 0; r < pt.nperm; r++) {
        memcpy(pt.perms + r * d, perm, (size_t)d);
        int i = d - 2;
        while (i >= 0 && perm[i] > perm[i + 1])
            i--;
        if (i < 0)
            break;
        int j = d - 1;
        while (perm[j] < perm[i])
            j--;
        int8_t tmp = perm[i];
        perm[i] = perm[j];
        perm[j] = tmp;
        for (int a = i + 1, b = d - 1; a < b; a++, b--) {
            tmp = perm[a];
            perm[a] = perm[b];
            perm[b] = tmp;
        }
    }
    elem_decode(&pt, 0, perm, sign);
    HF_CHECK(err, modfilter_init(&mf, &s->t, perm, sign), done);
    have_mf = 1;
    in[0] = 1; /* the identity */
    list[nlist++] = 0;
    for (long e = 1; e < nel; e++) {
        if (in[e])
            continue;
        elem_decode(&pt, e, perm, sign);
        if (modfilter_rejects(&mf, &s->t, perm, sign))
            continue;
        int yes = 0;
        HF_CHECK(err, group_exact_test(s, perm, sign, &yes), done);
        if (!yes)
            continue;
        /* a proven symmetry: close the group under products with the generators
         * (a finite set containing 1 and closed under the generators is the group) */
        gens[ngens++] = e;
        for (long i = 0; i < nlist; i++)
            for (long k = 0; k < ngens; k++) {
                long x = elem_compose(&pt, list[i], gens[k]);
                if (!in[x]) {
                    in[x] = 1;
                    list[nlist++] = x;
                }
            }
    }
    s->gorder = nlist;
    s->gperm = hf_malloc((size_t)nlist * d);
    s->gsign = hf_malloc((size_t)nlist * d);
    if (!s->gperm || !s->gsign) {
        err = HF_ERR_NOMEM;
        goto done;
    }
    /* elements in increasing index order: the identity first */
    for (long e = 0, n = 0; e < nel; e++)
        if (in[e]) {
            elem_decode(&pt, e, s->gperm + n * d, s->gsign + n * d);
            n++;
        }
done:
    if (have_mf)
        modfilter_clear(&mf);
    free(gens);
    free(list);
    free(in);
    free(pt.perms);
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

/* Image of keys under group element g, in canonical position, rows sorted. */
static void orbit_image(const hf_search_t *s, long g, long m, const int64_t *keys, int64_t *img,
                        int64_t *row)
{
    int d = s->d;
    const int8_t *perm = s->gperm + g * d, *sign = s->gsign + g * d;
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

hf_err_t hf_search_orbit_rep(const hf_search_t *s, long m, const int64_t *keys, int64_t *out)
{
    int d = s->d;
    if (m < 1)
        return hf_error(HF_ERR_INPUT, "orbit: size %ld: must be >= 1", m);
    int64_t *img = hf_malloc((size_t)(m * d + d) * sizeof *img);
    if (!img)
        return HF_ERR_NOMEM;
    int64_t *row = img + m * d;
    orbit_image(s, 0, m, keys, out, row);
    for (long g = 1; g < s->gorder; g++) {
        orbit_image(s, g, m, keys, img, row);
        for (long i = 0; i < m * d; i++)
            if (img[i] != out[i]) {
                if (img[i] < out[i])
                    memcpy(out, img, (size_t)(m * d) * sizeof *img);
                break;
            }
    }
    free(img);
    return HF_OK;
}
