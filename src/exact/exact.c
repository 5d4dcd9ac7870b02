/* The exact support test (exact.h; docs/math.md §2.2, §2.4, §2.5).
 *
 * For a key set K (m keys) the unknowns are u_{k,j} (column k*dv + j) and c_k (column
 * m*dv + k). Row (j, mu) of M is the coefficient of the monomial x^mu in
 *     (sum_k u_{k,j} x^k) Q - P_j (sum_k c_k x^k),
 * so column u_{k,j} holds Q's coefficients at rows k + supp(Q) and column c_k holds -P_j's
 * coefficients at rows k + supp(P_j). Rows are found with a hash of packed exponent
 * vectors; because every field of the packing is wide enough for k + e, the packed word
 * of a monomial is the sum of the packed key and the packed term exponent.
 *
 * Decision: full column rank modulo a prime p proves the null space trivial over Q (a
 * minor that is nonzero mod p is nonzero), which settles most supports in word-size
 * arithmetic. Otherwise the null space is computed exactly over Z and strict positivity
 * of the c part is decided by sign inspection (nullity 1) or by the exact simplex in
 * simplex.c. Every feasible answer is re-checked (M w = 0, c > 0) and every Gordan
 * certificate is re-checked (y >= 0, y != 0, y^T N_c = 0) in exact arithmetic. */
#include <assert.h>
#include <stdlib.h>
#include <string.h>

#include <flint/fmpq_vec.h>
#include <flint/fmpz_mat.h>
#include <flint/fmpz_vec.h>

#include "exact/exact_impl.h"
#include "headfuse/stop.h"
#include "headfuse/core.h"
#include "headfuse/exact.h"

HF_EXACT_STOP_PHASES(HF_STOP_DEFINE)

const char *hf_reason_name(hf_reason_t r)
{
    switch (r) {
#define HF_REASON_NAME(code, name, text)                                                           \
    case code:                                                                                     \
        return name;
        HF_REASON_TABLE(HF_REASON_NAME)
#undef HF_REASON_NAME
    }
    return "unknown";
}

const char *hf_reason_text(hf_reason_t r)
{
    switch (r) {
#define HF_REASON_TEXT(code, name, text)                                                           \
    case code:                                                                                     \
        return text;
        HF_REASON_TABLE(HF_REASON_TEXT)
#undef HF_REASON_TEXT
    }
    return "unknown reason";
}

const hf_exact_stats_t *hf_exact_stats(const hf_exact_t *e)
{
    return &e->stats;
}

void hf_exact_destroy(hf_exact_t **pe)
{
    if (!pe || !*pe)
        return;
    hf_exact_t *e = *pe;
    free(e->rmap);
    free(e->mnz);
    free(e->mrows);
    free(e->ment);
    free(e->eterm);
    free(e->ecol);
    free(e->erow);
    free(e->hstamp);
    free(e->hrow);
    free(e->hkey);
    free(e->tpack);
    free(e->kpack);
    free(e->skeys);
    free(e->tmod);
    if (e->tcoef)
        _fmpz_vec_clear(e->tcoef, e->nterms ? e->nterms : 1);
    free(e->texp);
    free(e);
    *pe = NULL;
}

hf_err_t hf_exact_create(const hf_fraction_t *f, hf_exact_t **out)
{
    hf_err_t err = HF_OK;
    int d = f->d, dv = f->dv;
    slong exp[HF_D_MAX];
    *out = NULL;
    if (d < 1 || d > HF_D_MAX || dv < 1 || dv > HF_DV_MAX)
        return hf_error(HF_ERR_INPUT, "exact test: fraction has d=%d, dv=%d", d, dv);
    hf_exact_t *e = hf_calloc(1, sizeof *e);
    if (!e)
        return HF_ERR_NOMEM;
    e->d = d;
    e->dv = dv;
    e->toff[0] = 0;
    e->toff[1] = f->Q->length;
    for (int j = 0; j < dv; j++)
        e->toff[j + 2] = e->toff[j + 1] + f->P[j].length;
    e->nterms = e->toff[dv + 1];
    long nt = e->nterms ? e->nterms : 1;
    /* the exponents' width from the degrees: exponents are degrees of a product of heads */
    slong deg[HF_D_MAX];
    int64_t top = 0;
    for (int p = 0; p <= dv; p++) {
        const fmpz_mpoly_struct *A = p == 0 ? f->Q : f->P + (p - 1);
        if (A->length == 0)
            continue;
        fmpz_mpoly_degrees_si(deg, A, f->ctx);
        for (int a = 0; a < d; a++)
            top = deg[a] > top ? deg[a] : top;
    }
    if (top > (int64_t)UINT32_MAX) {
        err =
            hf_error(HF_ERR_LIMIT, "exact test: exponent %lld of P/Q out of range", (long long)top);
        goto fail;
    }
    e->tw = top <= UINT8_MAX ? 1 : top <= UINT16_MAX ? 2 : 4;
    e->texp = hf_malloc((size_t)nt * d * (size_t)e->tw);
    e->tmod = hf_malloc((size_t)nt * sizeof *e->tmod);
    if (!e->texp || !e->tmod) {
        err = HF_ERR_NOMEM;
        goto fail;
    }
    e->tcoef = _fmpz_vec_init(nt);
    for (int p = 0; p <= dv; p++) {
        const fmpz_mpoly_struct *A = p == 0 ? f->Q : f->P + (p - 1);
        for (slong i = 0; i < A->length; i++) {
            long t = e->toff[p] + i;
            fmpz_mpoly_get_term_exp_si(exp, A, i, f->ctx);
            for (int a = 0; a < d; a++) {
                if (exp[a] < 0 || exp[a] > top) {
                    err =
                        hf_error(HF_ERR_INTERNAL,
                                 "exact test: exponent %ld of P/Q beyond its degree", (long)exp[a]);
                    goto fail;
                }
                size_t k = (size_t)t * (size_t)d + (size_t)a;
                if (e->tw == 1)
                    ((uint8_t *)e->texp)[k] = (uint8_t)exp[a];
                else if (e->tw == 2)
                    ((uint16_t *)e->texp)[k] = (uint16_t)exp[a];
                else
                    ((uint32_t *)e->texp)[k] = (uint32_t)exp[a];
                if (exp[a] > e->emax[a])
                    e->emax[a] = exp[a];
            }
            if (p == 0)
                fmpz_set(e->tcoef + t, A->coeffs + i);
            else
                fmpz_neg(e->tcoef + t, A->coeffs + i);
            e->tmod[t] = (uint32_t)fmpz_fdiv_ui(e->tcoef + t, HF_MODP);
        }
    }
    for (int a = 0; a < d; a++) {
        int64_t lo = INT64_MAX, hi = 0;
        for (long t = e->toff[0]; t < e->toff[1]; t++) {
            int64_t x = hf_exact_texp(e, t, a);
            lo = x < lo ? x : lo;
            hi = x > hi ? x : hi;
        }
        e->qmin[a] = e->toff[1] > 0 ? lo : 0;
        e->qext[a] = e->toff[1] > 0 ? hi - lo : 0;
    }
    e->gen = 1;
    *out = e;
    return HF_OK;
fail:
    hf_exact_destroy(&e);
    return err;
}

/* Make room for m keys, the hash table and the entry list of one call. */
static hf_err_t workspace_reserve(hf_exact_t *e, long m)
{
    int d = e->d;
    long maxp = 0;
    for (int j = 0; j < e->dv; j++)
        if (e->toff[j + 2] - e->toff[j + 1] > maxp)
            maxp = e->toff[j + 2] - e->toff[j + 1];
    long nq = e->toff[1];
    long monos = m * (nq + maxp); /* distinct monomials of one value component, at most */
    if (monos < m)
        monos = m;
    long entries = m * e->nterms + m * nq * (e->dv - 1);

    /* a key is d coordinates in skeys and d words in kpack */
    HF_TRY(hf_grow_arrays(
        &e->mcap, m, 2, (void **const[]){(void **)&e->skeys, (void **)&e->kpack},
        (const size_t[]){(size_t)d * sizeof *e->skeys, (size_t)d * sizeof *e->kpack}));
    if (2 * monos > e->hcap) {
        long c = 64;
        while (c < 2 * monos)
            c *= 2;
        free(e->hkey);
        free(e->hrow);
        free(e->hstamp);
        e->hkey = hf_malloc((size_t)c * d * sizeof *e->hkey);
        e->hrow = hf_malloc((size_t)c * sizeof *e->hrow);
        e->hstamp = hf_calloc((size_t)c, sizeof *e->hstamp);
        if (!e->hkey || !e->hrow || !e->hstamp) {
            e->hcap = 0;
            return HF_ERR_NOMEM;
        }
        e->hcap = c;
    }
    return hf_grow_arrays(
        &e->ecap, entries, 3,
        (void **const[]){(void **)&e->erow, (void **)&e->ecol, (void **)&e->eterm},
        (const size_t[]){sizeof *e->erow, sizeof *e->ecol, sizeof *e->eterm});
}

/* Start a fresh hash generation: every slot becomes empty in O(1). */
static void hash_reset(hf_exact_t *e)
{
    if (++e->gen == 0) {
        memset(e->hstamp, 0, (size_t)e->hcap * sizeof *e->hstamp);
        e->gen = 1;
    }
}

/* Row of the packed monomial key[W]; inserts it as row *nrows if new. *found says
 * whether it was there already. */
static long hash_row(hf_exact_t *e, const ulong *key, long *nrows, int *found)
{
    int W = e->W;
    uint64_t h = HF_HASH_INIT;
    for (int w = 0; w < W; w++)
        h = hf_hash_word(h, key[w]);
    h = hf_hash_mix(h);
    ulong mask = (ulong)e->hcap - 1;
    for (ulong s = h & mask;; s = (s + 1) & mask) {
        ulong *slot = e->hkey + s * W;
        if (e->hstamp[s] != e->gen) {
            e->hstamp[s] = e->gen;
            memcpy(slot, key, (size_t)W * sizeof *key);
            e->hrow[s] = (*nrows)++;
            *found = 0;
            return e->hrow[s];
        }
        if (!memcmp(slot, key, (size_t)W * sizeof *key)) {
            *found = 1;
            return e->hrow[s];
        }
    }
}

/* hash_row for one-word keys (the common case): no memcpy or memcmp. */
static inline long hash_row1(hf_exact_t *e, ulong key, long *nrows)
{
    uint64_t h = hf_hash_mix(key);
    ulong mask = (ulong)e->hcap - 1;
    for (ulong s = h & mask;; s = (s + 1) & mask) {
        if (e->hstamp[s] != e->gen) {
            e->hstamp[s] = e->gen;
            e->hkey[s] = key;
            return e->hrow[s] = (*nrows)++;
        }
        if (e->hkey[s] == key)
            return e->hrow[s];
    }
}

/* Pack a nonnegative exponent vector with the current layout. */
static void pack(const hf_exact_t *e, const int64_t *v, ulong *out)
{
    memset(out, 0, (size_t)e->W * sizeof *out);
    for (int a = 0; a < e->d; a++)
        out[e->wi[a]] |= (ulong)v[a] << e->sh[a];
}

/* Shift the keys to minimum 0, choose the packing layout, pack keys and terms, and
 * build the entry list of M. Sets *dup if two keys coincide. */
static hf_err_t build_entries(hf_exact_t *e, long m, const int64_t *keys, long *nrows,
                              long *nentries, int *dup)
{
    int d = e->d, dv = e->dv;
    int64_t kmin[HF_D_MAX], kmax[HF_D_MAX];
    ulong mono[HF_D_MAX];
    *dup = 0;
    for (int a = 0; a < d; a++)
        kmin[a] = kmax[a] = keys[a];
    for (long i = 0; i < m; i++)
        for (int a = 0; a < d; a++) {
            int64_t k = keys[i * d + a];
            if (k > HF_KEY_MAX || k < -HF_KEY_MAX)
                return hf_error(HF_ERR_LIMIT, "exact test: key[%ld][%d] = %lld is outside -%d..%d",
                                i, a, (long long)k, HF_KEY_MAX, HF_KEY_MAX);
            if (k < kmin[a])
                kmin[a] = k;
            if (k > kmax[a])
                kmax[a] = k;
        }
    HF_TRY(workspace_reserve(e, m));

    /* layout: coordinate a needs the bits of (key span + largest term exponent) */
    int w = 0, s = 0;
    for (int a = 0; a < d; a++) {
        ulong top = (ulong)(kmax[a] - kmin[a]) + (ulong)e->emax[a];
        int b = top ? (int)FLINT_BIT_COUNT(top) : 1;
        if (s + b > FLINT_BITS) {
            w++;
            s = 0;
        }
        e->wi[a] = w;
        e->sh[a] = s;
        s += b;
    }
    e->W = w + 1;
    for (long i = 0; i < m; i++) {
        int64_t *sk = e->skeys + i * d;
        for (int a = 0; a < d; a++)
            sk[a] = keys[i * d + a] - kmin[a];
        pack(e, sk, e->kpack + i * e->W);
    }
    /* the terms' packed exponents only for this form (R-space needs none): nterms * W */
    if (!e->tpack &&
        !(e->tpack = hf_malloc((size_t)(e->nterms ? e->nterms : 1) * d * sizeof *e->tpack)))
        return HF_ERR_NOMEM;
    int64_t te[HF_D_MAX];
    for (long t = 0; t < e->nterms; t++) {
        for (int a = 0; a < d; a++)
            te[a] = hf_exact_texp(e, t, a);
        pack(e, te, e->tpack + t * e->W);
    }

    /* repeated keys: the hash of the keys themselves */
    long nk = 0;
    int found;
    hash_reset(e);
    for (long i = 0; i < m; i++) {
        hash_row(e, e->kpack + i * e->W, &nk, &found);
        if (found) {
            *dup = 1;
            return HF_OK;
        }
    }

    long R = 0, E = 0;
    int W = e->W;
    for (int j = 0; j < dv; j++) {
        hash_reset(e); /* rows of different value components are different rows */
        long q0 = e->toff[0], q1 = e->toff[1], p0 = e->toff[j + 1], p1 = e->toff[j + 2];
        for (long i = 0; i < m; i++) {
            long ucol = i * dv + j, ccol = m * dv + i;
            if (W == 1) {
                ulong kp = e->kpack[i];
                for (long t = q0; t < q1; t++) {
                    e->erow[E] = hash_row1(e, kp + e->tpack[t], &R);
                    e->ecol[E] = ucol;
                    e->eterm[E++] = t;
                }
                for (long t = p0; t < p1; t++) {
                    e->erow[E] = hash_row1(e, kp + e->tpack[t], &R);
                    e->ecol[E] = ccol;
                    e->eterm[E++] = t;
                }
                continue;
            }
            const ulong *kp = e->kpack + i * W;
            for (int pass = 0; pass < 2; pass++) {
                long t0 = pass ? p0 : q0, t1 = pass ? p1 : q1, col = pass ? ccol : ucol;
                for (long t = t0; t < t1; t++) {
                    for (int x = 0; x < W; x++)
                        mono[x] = kp[x] + e->tpack[t * W + x];
                    e->erow[E] = hash_row(e, mono, &R, &found);
                    e->ecol[E] = col;
                    e->eterm[E++] = t;
                }
            }
        }
    }
    /* every term of Q and of each P_j lands once per key and value component: the count
     * the workspace was reserved for */
    assert(E == m * e->nterms + m * e->toff[1] * (dv - 1) && E <= e->ecap);
    *nrows = R;
    *nentries = E;
    return HF_OK;
}

/* Rank of M modulo HF_MODP, in the reusable workspace. */
static hf_err_t modp_rank(hf_exact_t *e, long R, long n, long E, long *rank)
{
    long cells = R * n;
    HF_TRY(HF_GROW(&e->ment, &e->mcells, cells));
    HF_TRY(HF_GROW2(&e->mrows, &e->rmap, &e->rcap, R));
    HF_TRY(HF_GROW(&e->mnz, &e->ncap, n));
    memset(e->ment, 0, (size_t)cells * sizeof *e->ment);
    for (long r = 0; r < R; r++)
        e->mrows[r] = e->ment + r * n;
    for (long x = 0; x < E; x++)
        e->mrows[e->erow[x]][e->ecol[x]] = e->tmod[e->eterm[x]];
    *rank = hf_exact_rank_modp(e->mrows, R, n, e->mnz);
    assert(*rank >= 0 && *rank <= (R < n ? R : n));
    return HF_OK;
}

/* Exact check of a Gordan certificate: y >= 0, y != 0, y^T Nc = 0. */
int hf_exact_certificate_ok(const fmpq *y, const fmpz *Nc, long m, long r)
{
    int nonzero = 0, ok = 1;
    fmpq_t s, t;
    fmpq_init(s);
    fmpq_init(t);
    for (long k = 0; k < m; k++) {
        if (fmpq_sgn(y + k) < 0)
            ok = 0;
        if (fmpq_sgn(y + k) > 0)
            nonzero = 1;
    }
    for (long i = 0; i < r && ok; i++) {
        fmpq_zero(s);
        for (long k = 0; k < m; k++) {
            fmpq_mul_fmpz(t, y + k, Nc + k * r + i);
            fmpq_add(s, s, t);
        }
        ok = fmpq_is_zero(s);
    }
    fmpq_clear(t);
    fmpq_clear(s);
    return ok && nonzero;
}

/* Write the witness head: keys as given, weights c_k / gcd(c), values u_{k,j} / c_k. */
static hf_err_t witness_fill(const hf_exact_t *e, long m, const int64_t *keys, const fmpz *w,
                             hf_head_t *h)
{
    int d = e->d, dv = e->dv;
    fmpz_t g;
    if (h->d != d || h->dv != dv) {
        hf_head_clear(h);
        hf_head_init(h, d, dv);
    }
    HF_TRY(hf_head_resize(h, m));
    fmpz_init(g);
    _fmpz_vec_content(g, w + m * dv, m);
    memcpy(h->keys, keys, (size_t)m * d * sizeof *keys);
    for (long i = 0; i < m; i++) {
        const fmpz *c = w + m * dv + i;
        fmpz_divexact(fmpq_numref(h->weights + i), c, g);
        fmpz_one(fmpq_denref(h->weights + i));
        for (int j = 0; j < dv; j++)
            fmpq_set_fmpz_frac(h->values + i * dv + j, w + i * dv + j, c);
    }
    fmpz_clear(g);
    return HF_OK;
}

/* 1 iff every column k < r of X is in the kernel of the whole M (all R rows). */
static int kernel_ok(const hf_exact_t *e, long R, long E, const fmpz_mat_t X, long r, fmpz *acc)
{
    for (long k = 0; k < r; k++) {
        _fmpz_vec_zero(acc, R);
        for (long x = 0; x < E; x++)
            fmpz_addmul(acc + e->erow[x], e->tcoef + e->eterm[x], fmpz_mat_entry(X, e->ecol[x], k));
        if (!_fmpz_vec_is_zero(acc, R))
            return 0;
    }
    return 1;
}

/* Null space over Q of the rows of M selected by rmap (rmap == NULL: all rows), into the
 * first columns of X (n x n). Returns the nullity. */
static long nullspace_rows(const hf_exact_t *e, long R, long n, long E, const long *rmap, long nsel,
                           fmpz_mat_t X)
{
    fmpz_mat_t M;
    fmpz_mat_init(M, rmap ? nsel : R, n);
    for (long x = 0; x < E; x++) {
        long row = rmap ? rmap[e->erow[x]] : e->erow[x];
        if (row >= 0)
            fmpz_set(fmpz_mat_entry(M, row, e->ecol[x]), e->tcoef + e->eterm[x]);
    }
    long r = fmpz_mat_nullspace(X, M);
    fmpz_mat_clear(M);
    return r;
}

hf_err_t hf_exact_positivity(const fmpz *Nc, long m, long r, fmpq *lambda, int *found,
                             hf_reason_t *reason)
{
    *found = 0;
    if (r == 1) {
        int s = fmpz_sgn(Nc);
        for (long i = 0; i < m && s; i++)
            if (fmpz_sgn(Nc + i) != s)
                s = 0;
        if (!s) {
            *reason = HF_REASON_SIGN;
            return HF_OK;
        }
        fmpq_set_si(lambda, s, 1);
        *found = 1;
        return HF_OK;
    }
    fmpq *y = _fmpq_vec_init(m);
    hf_err_t err = HF_OK;
    int lp = hf_exact_lp_positive(Nc, m, r, lambda, y);
    if (lp < 0)
        err =
            hf_error(HF_ERR_INTERNAL, "exact test: simplex failed on %ld keys, nullity %ld", m, r);
    else if (lp == 0 && !hf_exact_certificate_ok(y, Nc, m, r))
        err = hf_error(HF_ERR_INTERNAL,
                       "exact test: Gordan certificate failed its exact check (%ld keys, nullity "
                       "%ld)",
                       m, r);
    else if (lp == 0)
        *reason = HF_REASON_FARKAS;
    else
        *found = 1;
    _fmpq_vec_clear(y, m);
    return err;
}

void hf_exact_combine(const fmpz_mat_t X, long r, const fmpq *lambda, long n, fmpz *w)
{
    fmpz_t den, t;
    fmpz_init(den);
    fmpz_init(t);
    _fmpz_vec_zero(w, n);
    fmpz_one(den);
    for (long k = 0; k < r; k++)
        fmpz_lcm(den, den, fmpq_denref(lambda + k));
    for (long k = 0; k < r; k++) {
        fmpz_divexact(t, den, fmpq_denref(lambda + k));
        fmpz_mul(t, t, fmpq_numref(lambda + k));
        for (long i = 0; i < n; i++)
            fmpz_addmul(w + i, fmpz_mat_entry(X, i, k), t);
    }
    _fmpz_vec_content(t, w, n);
    if (!fmpz_is_zero(t) && !fmpz_is_one(t))
        _fmpz_vec_scalar_divexact_fmpz(w, w, n, t);
    fmpz_clear(t);
    fmpz_clear(den);
}

/* The decision itself; use_mod selects the modular shortcut. */
static hf_err_t exact_decide(hf_exact_t *e, long m, const int64_t *keys, int use_mod, int *feasible,
                             hf_reason_t *reason, hf_head_t *witness)
{
    hf_err_t err = HF_OK;
    int dv = e->dv, dup = 0;
    long R = 0, E = 0, n = m * (dv + 1), mc = m * dv, r = 0;
    fmpz_mat_t X;
    fmpz *Nc = NULL, *wv = NULL, *acc = NULL;
    fmpq *lambda = NULL;
    int have_mats = 0;

    *feasible = 0;
    *reason = HF_REASON_BAD_SUPPORT;
    if (m < 1)
        goto done;
    HF_TRY(build_entries(e, m, keys, &R, &E, &dup));
    if (dup)
        goto done;

    long rank_p = -1;
    if (use_mod && R >= n) {
        HF_TRY(modp_rank(e, R, n, E, &rank_p));
        if (rank_p == n) {
            *reason = HF_REASON_MODP_RANK;
            goto done;
        }
    }

    fmpz_mat_init(X, n, n);
    acc = _fmpz_vec_init(R);
    have_mats = 1;
    /* Rows independent mod p are independent over Q, so the pivot rows of the modular
     * elimination are a natural small subsystem. Its kernel contains ker M; if its basis
     * passes the check against all rows of M, the two kernels are equal. Otherwise (an
     * unlucky prime) fall back to the whole matrix. */
    int solved = 0;
    if (rank_p >= 0) {
        for (long i = 0; i < R; i++)
            e->rmap[i] = -1;
        for (long i = 0; i < rank_p; i++)
            e->rmap[(e->mrows[i] - e->ment) / n] = i;
        r = nullspace_rows(e, R, n, E, e->rmap, rank_p, X);
        solved = kernel_ok(e, R, E, X, r, acc);
    }
    if (!solved) {
        r = nullspace_rows(e, R, n, E, NULL, 0, X);
        if (r == 0) {
            *reason = HF_REASON_NULLSPACE_Q;
            goto cleanup;
        }
        /* the basis must lie in the kernel: cheap, and every later step relies on it */
        if (!kernel_ok(e, R, E, X, r, acc)) {
            err = hf_error(HF_ERR_INTERNAL, "exact test: null-space basis is not in the kernel");
            goto cleanup;
        }
    }

    lambda = _fmpq_vec_init(r);
    Nc = _fmpz_vec_init(m * r);
    for (long i = 0; i < m; i++)
        for (long k = 0; k < r; k++)
            fmpz_set(Nc + i * r + k, fmpz_mat_entry(X, mc + i, k));
    int found = 0;
    HF_CHECK(err, hf_exact_positivity(Nc, m, r, lambda, &found, reason), cleanup);
    if (!found)
        goto cleanup;
    wv = _fmpz_vec_init(n);
    hf_exact_combine(X, r, lambda, n, wv);

    /* self-check before answering "feasible": c > 0 and M w = 0 exactly */
    _fmpz_vec_zero(acc, R);
    for (long x = 0; x < E; x++)
        fmpz_addmul(acc + e->erow[x], e->tcoef + e->eterm[x], wv + e->ecol[x]);
    int ok = _fmpz_vec_is_zero(acc, R);
    for (long i = 0; i < m; i++)
        ok = ok && fmpz_sgn(wv + mc + i) > 0;
    if (!ok) {
        err = hf_error(HF_ERR_INTERNAL, "exact test: witness failed its exact check (%ld keys)", m);
        goto cleanup;
    }
    if (witness)
        HF_CHECK(err, witness_fill(e, m, keys, wv, witness), cleanup);
    *feasible = 1;
    *reason = HF_REASON_WITNESS;

cleanup:
    if (wv)
        _fmpz_vec_clear(wv, n);
    if (Nc)
        _fmpz_vec_clear(Nc, m * r);
    if (lambda)
        _fmpq_vec_clear(lambda, r);
    if (have_mats) {
        _fmpz_vec_clear(acc, R);
        fmpz_mat_clear(X);
    }
    if (err != HF_OK) {
        *feasible = 0;
        return err;
    }
done:
    e->stats.decided++;
    e->stats.feasible += *feasible;
    e->stats.by_reason[*reason]++;
    return HF_OK;
}

/* Large supports are decided in R-space when its box is much smaller than the (dv + 1) m
 * unknowns of M (chain:d=8 at span 3: 4 unknowns against 22 000). Small supports keep the
 * direct form: it is fast there and its answers are the long-tested reference. The choice
 * depends on the keys alone, so every engine gets the same witness for the same support. */
static int use_rspace(const hf_exact_t *e, long m, const int64_t *keys)
{
    long direct = m * (e->dv + 1);
    if (direct < HF_EXACT_RSPACE_MIN_COLS)
        return 0;
    long n = hf_exact_rspace_size(e, m, keys, direct / 4);
    return n >= 0;
}

hf_err_t hf_exact_check(hf_exact_t *e, long m, const int64_t *keys, int *feasible,
                        hf_reason_t *reason, hf_head_t *witness)
{
    HF_TRY(hf_stop_check(HF_STOP_EXACT)); /* one test can take minutes at 10^7 keys */
    if (m >= 1 && use_rspace(e, m, keys)) {
        int applicable = 0;
        HF_TRY(hf_exact_rspace_decide(e, m, keys, 1, feasible, reason, witness, &applicable));
        if (applicable)
            return HF_OK;
    }
    /* the direct form's null space is dense in its m (dv + 1) columns */
    if ((double)m * (e->dv + 1) > (double)HF_EXACT_DIRECT_MAX_COLS)
        return hf_error(HF_ERR_LIMIT,
                        "exact test: a support of %ld keys is too large for the direct form "
                        "(%ld columns, at most %ld) and the R-space form does not apply to it "
                        "(docs/exact-test.md §6a)",
                        m, m * (e->dv + 1), (long)HF_EXACT_DIRECT_MAX_COLS);
    return exact_decide(e, m, keys, 1, feasible, reason, witness);
}

hf_err_t hf_exact_check_direct(hf_exact_t *e, long m, const int64_t *keys, int *feasible,
                               hf_reason_t *reason, hf_head_t *witness)
{
    return exact_decide(e, m, keys, 1, feasible, reason, witness);
}

hf_err_t hf_exact_check_rspace(hf_exact_t *e, long m, const int64_t *keys, int *feasible,
                               hf_reason_t *reason, hf_head_t *witness, int *applicable)
{
    *applicable = 0;
    *feasible = 0;
    *reason = HF_REASON_BAD_SUPPORT;
    if (m < 1)
        return HF_OK;
    return hf_exact_rspace_decide(e, m, keys, 1, feasible, reason, witness, applicable);
}

hf_err_t hf_exact_check_nomod(hf_exact_t *e, long m, const int64_t *keys, int *feasible,
                              hf_reason_t *reason, hf_head_t *witness)
{
    return exact_decide(e, m, keys, 0, feasible, reason, witness);
}
