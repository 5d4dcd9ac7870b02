/* The exact support test in R-space (docs/math.md §7.1, docs/exact-test.md §6a).
 *
 * If a head on K represents T = P/Q (reduced), its weights give C = sum c_k x^k = Q R and
 * its weighted values U = P R for one Laurent polynomial R (docs/math.md §2.3: gcd(P, Q) = 1
 * forces Q | C). With K shifted to minimum 0 and Q shifted by its own minimum exponent q0,
 * Newt(C) = Newt(Q) + Newt(R) puts R in the box B = prod_j [0, W_j - e_j] (W: K's widths,
 * e: Q's extents). Conversely, for R on B:
 *     (Q R)_k = 0 for k outside K,  (P_j R)_k = 0 for k outside K  (equalities),
 *     (Q R)_k > 0 for k in K                                        (strict positivity)
 * make c = (Q R)|_K, u = (P R)|_K a representation on K: U Q = P R Q = P C identically.
 * So K is feasible iff the equalities have a solution with the positivity, the same
 * question as in exact.c with |B| unknowns instead of (dv + 1) |K|. The decision uses the
 * same steps and the same exact simplex: rank modulo p of the equalities (full rank:
 * infeasible), exact null space over Z, sign inspection or Gordan's alternative on the
 * positivity rows. A feasible answer is re-checked: every equality row vanishes at R and
 * every c_k > 0, in integers. */
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include <flint/fmpq_vec.h>
#include <flint/fmpz_mat.h>
#include <flint/fmpz_vec.h>

#include "exact/exact_impl.h"
#include "headfuse/stop.h"

/* Largest box of monomials handled (mixed-radix indices must fit a word), largest dense
 * modular matrix (entries; a larger one is eliminated over Z directly) and largest block of
 * positivity rows m x n (2 GiB of integers: a support of 10^7 keys with up to 25 unknowns).
 * Beyond the first and the last the direct form decides, if the support is small enough
 * for it (hf_exact_check). */
#define RS_BOX_MAX (INT64_C(1) << 62)
#define RS_DENSE_MAX (INT64_C(1) << 24)
#define RS_POS_MAX (INT64_C(1) << 28)

/* Open-addressing map from a monomial's mixed-radix index to a row number. Not core's
 * hf_index_t: it is sized once for a count known beforehand and never grows, and it is
 * probed for every term of every unknown, so the keys sit in the slots (no call back to
 * compare them). */
typedef struct {
    long cap; /* power of two */
    int64_t *key;
    long *val; /* -1: empty */
} rs_map_t;

static hf_err_t rs_map_alloc(rs_map_t *mp, long cap)
{
    mp->cap = cap;
    mp->key = hf_malloc((size_t)cap * sizeof *mp->key);
    mp->val = hf_malloc((size_t)cap * sizeof *mp->val);
    if (!mp->key || !mp->val)
        return HF_ERR_NOMEM;
    for (long i = 0; i < cap; i++)
        mp->val[i] = -1;
    return HF_OK;
}

static hf_err_t rs_map_init(rs_map_t *mp, long n)
{
    long cap = 64;
    while (cap < 2 * n)
        cap *= 2;
    return rs_map_alloc(mp, cap);
}

static void rs_map_clear(rs_map_t *mp)
{
    free(mp->key);
    free(mp->val);
}

/* Slot of key x: either where it is, or the empty slot where it belongs. */
static long rs_map_slot(const rs_map_t *mp, int64_t x)
{
    uint64_t h = hf_hash_mix((uint64_t)x);
    long mask = mp->cap - 1;
    for (long s = (long)(h & (uint64_t)mask);; s = (s + 1) & mask)
        if (mp->val[s] < 0 || mp->key[s] == x)
            return s;
}

/* Twice the slots, every entry moved (the equality rows are not known in advance: sizing
 * the map for the worst case took 128 bytes a key). */
static hf_err_t rs_map_grow(rs_map_t *mp)
{
    rs_map_t big;
    HF_TRY(rs_map_alloc(&big, 2 * mp->cap));
    for (long i = 0; i < mp->cap; i++)
        if (mp->val[i] >= 0) {
            long s = rs_map_slot(&big, mp->key[i]);
            big.key[s] = mp->key[i];
            big.val[s] = mp->val[i];
        }
    free(mp->key);
    free(mp->val);
    *mp = big;
    return HF_OK;
}

long hf_exact_rspace_size(const hf_exact_t *e, long m, const int64_t *keys, long cap)
{
    int d = e->d;
    int64_t w[HF_D_MAX];
    for (int a = 0; a < d; a++) {
        int64_t lo = keys[a], hi = keys[a];
        for (long i = 1; i < m; i++) {
            int64_t k = keys[i * d + a];
            lo = k < lo ? k : lo;
            hi = k > hi ? k : hi;
        }
        w[a] = hi - lo - e->qext[a] + 1;
    }
    return hf_box_points(d, w, cap);
}

/* Everything one call builds; freed by rs_free. */
typedef struct {
    int64_t rad[HF_D_MAX];  /* radix of K's box: W_a + 1 */
    int64_t brad[HF_D_MAX]; /* radix of R's box: W_a - e_a + 1 */
    long n;                 /* unknowns */
    rs_map_t kmap;          /* key index -> position in K */
    rs_map_t rows;          /* monomial (component j, index) -> equality row */
    long neq;               /* equality rows */
    long nent, capent;      /* sparse entries of the equalities */
    long *erow, *ecol;
    fmpz *eval;
    fmpz *pos; /* m x n: (Q R)_k for k in K, as rows */
} rs_t;

static void rs_free(rs_t *w)
{
    rs_map_clear(&w->kmap);
    rs_map_clear(&w->rows);
    free(w->erow);
    free(w->ecol);
    if (w->eval)
        _fmpz_vec_clear(w->eval, w->capent);
}

static hf_err_t rs_push(rs_t *w, long row, long col, const fmpz_t v)
{
    if (w->nent == w->capent) {
        long cap = w->capent; /* at least 1024 entries, then doubled */
        HF_TRY(HF_GROW2(&w->erow, &w->ecol, &cap, w->nent < 1024 ? 1024 : w->nent + 1));
        fmpz *x = _fmpz_vec_init(cap);
        for (long i = 0; i < w->nent; i++)
            fmpz_swap(x + i, w->eval + i);
        if (w->eval)
            _fmpz_vec_clear(w->eval, w->capent);
        w->eval = x;
        w->capent = cap;
    }
    w->erow[w->nent] = row;
    w->ecol[w->nent] = col;
    fmpz_set(w->eval + w->nent, v);
    w->nent++;
    return HF_OK;
}

/* Mixed-radix index of exponent vector x in a box of radices rad (x_0 most significant). */
static int64_t rs_index(const int64_t *x, const int64_t *rad, int d)
{
    int64_t v = 0;
    for (int a = 0; a < d; a++)
        v = v * rad[a] + x[a];
    return v;
}

/* Build the equality rows and the positivity rows. Term t of Q or P_j at unknown r lands
 * on monomial r + texp[t] - q0. Positivity rows are dense (m x n) because the LP wants
 * them so and m n is bounded by the caller's choice of this form. */
static hf_err_t rs_build(hf_exact_t *e, rs_t *w, long m, int *bad)
{
    int d = e->d, dv = e->dv;
    int64_t r[HF_D_MAX], x[HF_D_MAX];
    hf_err_t err = HF_OK;
    *bad = 0;
    w->pos = _fmpz_vec_init(m * w->n);
    HF_CHECK(err, rs_map_init(&w->rows, m / 2 + w->n), done);
    unsigned long polls = 0;
    for (long c = 0; c < w->n; c++) {
        long rest = c;
        for (int a = d - 1; a >= 0; a--) {
            r[a] = rest % w->brad[a];
            rest /= w->brad[a];
        }
        for (int p = 0; p <= dv; p++) {
            for (long t = e->toff[p]; t < e->toff[p + 1]; t++) {
                HF_CHECK(err, HF_STOP_EVERY(polls, 16, HF_STOP_EXACT), done);
                int out = 0;
                for (int a = 0; a < d; a++) {
                    x[a] = r[a] + hf_exact_texp(e, t, a) - e->qmin[a];
                    if (x[a] < 0 || x[a] >= w->rad[a])
                        out = 1;
                }
                if (out) {
                    /* P outside Q's hull: not a fraction of heads; let the direct form
                     * decide */
                    *bad = 1;
                    goto done;
                }
                int64_t idx = rs_index(x, w->rad, d);
                long ks = rs_map_slot(&w->kmap, idx);
                long kpos = w->kmap.val[ks];
                if (p == 0 && kpos >= 0) {
                    fmpz_add(w->pos + kpos * w->n + c, w->pos + kpos * w->n + c, e->tcoef + t);
                    continue;
                }
                if (kpos >= 0)
                    continue; /* P_j R on K: a value, not a constraint */
                /* rows of different components are different rows: tag the index */
                int64_t key = idx * (dv + 1) + p;
                long s = rs_map_slot(&w->rows, key);
                if (w->rows.val[s] < 0) {
                    if (2 * (w->neq + 1) > w->rows.cap) {
                        HF_CHECK(err, rs_map_grow(&w->rows), done);
                        s = rs_map_slot(&w->rows, key);
                    }
                    w->rows.key[s] = key;
                    w->rows.val[s] = w->neq++;
                }
                HF_CHECK(err, rs_push(w, w->rows.val[s], c, e->tcoef + t), done);
            }
        }
    }
done:
    return err;
}

/* Null space of the equality rows (all of R^n when there are none) into X (n x n);
 * returns the nullity in *r. The pivot rows of a modular elimination are tried first;
 * their kernel is accepted only if it passes every row. */
static hf_err_t rs_nullspace(hf_exact_t *e, rs_t *w, int use_mod, fmpz_mat_t X, long *r,
                             int *modp_full)
{
    long n = w->n, R = w->neq;
    *modp_full = 0;
    if (R == 0) {
        fmpz_mat_one(X);
        *r = n;
        return HF_OK;
    }
    long *sel = NULL, nsel = 0;
    if (use_mod && (int64_t)R * n <= RS_DENSE_MAX) {
        uint32_t *ent = hf_calloc((size_t)R * n, sizeof *ent);
        uint32_t **rows = hf_malloc((size_t)R * sizeof *rows);
        long *nz = hf_malloc((size_t)n * sizeof *nz);
        sel = hf_malloc((size_t)R * sizeof *sel);
        if (!ent || !rows || !nz || !sel) {
            free(ent);
            free(rows);
            free(nz);
            free(sel);
            return HF_ERR_NOMEM;
        }
        for (long i = 0; i < R; i++)
            rows[i] = ent + i * n;
        for (long x = 0; x < w->nent; x++) {
            uint32_t *cell = &rows[w->erow[x]][w->ecol[x]];
            uint64_t s = *cell + (uint64_t)fmpz_fdiv_ui(w->eval + x, HF_MODP);
            *cell = (uint32_t)(s % HF_MODP);
        }
        nsel = hf_exact_rank_modp(rows, R, n, nz);
        for (long i = 0; i < nsel; i++)
            sel[i] = (rows[i] - ent) / n;
        free(nz);
        free(rows);
        free(ent);
        if (nsel == n) {
            free(sel);
            *modp_full = 1;
            *r = 0;
            return HF_OK;
        }
    }
    long *map = hf_malloc((size_t)R * sizeof *map);
    fmpz *acc = _fmpz_vec_init(R);
    if (!map) {
        free(sel);
        _fmpz_vec_clear(acc, R);
        return HF_ERR_NOMEM;
    }
    for (int pass = sel ? 0 : 1; pass < 2; pass++) {
        long rows = pass == 0 ? nsel : R;
        for (long i = 0; i < R; i++)
            map[i] = pass == 0 ? -1 : i;
        if (pass == 0)
            for (long i = 0; i < nsel; i++)
                map[sel[i]] = i;
        fmpz_mat_t M;
        fmpz_mat_init(M, rows ? rows : 1, n);
        for (long x = 0; x < w->nent; x++)
            if (map[w->erow[x]] >= 0)
                fmpz_add(fmpz_mat_entry(M, map[w->erow[x]], w->ecol[x]),
                         fmpz_mat_entry(M, map[w->erow[x]], w->ecol[x]), w->eval + x);
        *r = fmpz_mat_nullspace(X, M);
        fmpz_mat_clear(M);
        /* the basis must vanish on every equality row */
        int ok = 1;
        for (long k = 0; k < *r && ok; k++) {
            _fmpz_vec_zero(acc, R);
            for (long x = 0; x < w->nent; x++)
                fmpz_addmul(acc + w->erow[x], w->eval + x, fmpz_mat_entry(X, w->ecol[x], k));
            ok = _fmpz_vec_is_zero(acc, R);
        }
        if (ok)
            break;
        if (pass == 1) {
            free(map);
            free(sel);
            _fmpz_vec_clear(acc, R);
            return hf_error(HF_ERR_INTERNAL, "exact test: R-space null space is not a kernel");
        }
    }
    free(map);
    free(sel);
    _fmpz_vec_clear(acc, R);
    (void)e;
    return HF_OK;
}

/* Witness head: keys as given, weights c / gcd(c), values u_j / c. R holds n integers. */
static hf_err_t rs_witness(hf_exact_t *e, rs_t *w, long m, const int64_t *keys, const fmpz *R,
                           hf_head_t *h, int *ok)
{
    int d = e->d, dv = e->dv;
    int64_t r[HF_D_MAX], x[HF_D_MAX];
    hf_err_t err = HF_OK;
    fmpz *c = _fmpz_vec_init(m), *u = _fmpz_vec_init(m * dv), *acc = _fmpz_vec_init(w->neq + 1);
    fmpz_t g;
    fmpz_init(g);
    /* c = pos R; every c_k > 0 */
    unsigned long polls = 0;
    *ok = 1;
    for (long i = 0; i < m; i++) {
        HF_CHECK(err, HF_STOP_EVERY(polls, 16, HF_STOP_EXACT), done);
        for (long k = 0; k < w->n; k++)
            fmpz_addmul(c + i, w->pos + i * w->n + k, R + k);
        if (fmpz_sgn(c + i) <= 0)
            *ok = 0;
    }
    /* every equality row vanishes at R */
    for (long x2 = 0; x2 < w->nent; x2++)
        fmpz_addmul(acc + w->erow[x2], w->eval + x2, R + w->ecol[x2]);
    if (!_fmpz_vec_is_zero(acc, w->neq))
        *ok = 0;
    if (!*ok || !h)
        goto done;
    /* u_j = P_j R on K (tcoef holds -P_j) */
    for (long col = 0; col < w->n; col++) {
        if (fmpz_is_zero(R + col))
            continue;
        long rest = col;
        for (int a = d - 1; a >= 0; a--) {
            r[a] = rest % w->brad[a];
            rest /= w->brad[a];
        }
        for (int j = 0; j < dv; j++)
            for (long t = e->toff[j + 1]; t < e->toff[j + 2]; t++) {
                for (int a = 0; a < d; a++)
                    x[a] = r[a] + hf_exact_texp(e, t, a) - e->qmin[a];
                long s = rs_map_slot(&w->kmap, rs_index(x, w->rad, d));
                long kpos = w->kmap.val[s];
                if (kpos >= 0)
                    fmpz_submul(u + kpos * dv + j, e->tcoef + t, R + col);
            }
    }
    if (h->d != d || h->dv != dv) {
        hf_head_clear(h);
        hf_head_init(h, d, dv);
    }
    HF_CHECK(err, hf_head_resize(h, m), done);
    _fmpz_vec_content(g, c, m);
    memcpy(h->keys, keys, (size_t)m * d * sizeof *keys);
    for (long i = 0; i < m; i++) {
        fmpz_divexact(fmpq_numref(h->weights + i), c + i, g);
        fmpz_one(fmpq_denref(h->weights + i));
        for (int j = 0; j < dv; j++)
            fmpq_set_fmpz_frac(h->values + i * dv + j, u + i * dv + j, c + i);
    }
done:
    fmpz_clear(g);
    _fmpz_vec_clear(acc, w->neq + 1);
    _fmpz_vec_clear(u, m * dv);
    _fmpz_vec_clear(c, m);
    return err;
}

hf_err_t hf_exact_rspace_decide(hf_exact_t *e, long m, const int64_t *keys, int use_mod,
                                int *feasible, hf_reason_t *reason, hf_head_t *witness,
                                int *applicable)
{
    int d = e->d;
    int64_t kmin[HF_D_MAX], kmax[HF_D_MAX], x[HF_D_MAX];
    hf_err_t err = HF_OK;
    rs_t w;
    memset(&w, 0, sizeof w);
    *applicable = 0;
    *feasible = 0;
    *reason = HF_REASON_BAD_SUPPORT;

    for (int a = 0; a < d; a++) {
        kmin[a] = kmax[a] = keys[a];
        for (long i = 1; i < m; i++) {
            int64_t k = keys[i * d + a];
            kmin[a] = k < kmin[a] ? k : kmin[a];
            kmax[a] = k > kmax[a] ? k : kmax[a];
        }
        w.rad[a] = kmax[a] - kmin[a] + 1;
    }
    if (hf_box_points(d, w.rad, RS_BOX_MAX) < 0)
        return HF_OK; /* not applicable */
    long n = hf_exact_rspace_size(e, m, keys, LONG_MAX);
    if (n < 0 || (n > 0 && (double)m * (double)n > (double)RS_POS_MAX))
        return HF_OK;
    *applicable = 1;

    HF_CHECK(err, rs_map_init(&w.kmap, m), out);
    for (long i = 0; i < m; i++) {
        for (int a = 0; a < d; a++)
            x[a] = keys[i * d + a] - kmin[a];
        long s = rs_map_slot(&w.kmap, rs_index(x, w.rad, d));
        if (w.kmap.val[s] >= 0)
            goto decided; /* repeated key */
        w.kmap.key[s] = rs_index(x, w.rad, d);
        w.kmap.val[s] = i;
    }
    if (n == 0) {
        /* some width of K is below Q's extent: no R, no C = Q R with hull conv(K) */
        *reason = HF_REASON_NULLSPACE_Q;
        goto decided;
    }
    w.n = n;
    for (int a = 0; a < d; a++)
        w.brad[a] = w.rad[a] - e->qext[a];
    int bad = 0;
    HF_CHECK(err, rs_build(e, &w, m, &bad), out);
    if (bad) {
        *applicable = 0;
        goto out;
    }

    fmpz_mat_t X;
    long r = 0;
    int modp_full = 0;
    fmpz_mat_init(X, n, n);
    fmpq *lambda = NULL;
    fmpz *Nc = NULL, *R = NULL;
    HF_CHECK(err, rs_nullspace(e, &w, use_mod, X, &r, &modp_full), cleanup);
    if (modp_full) {
        *reason = HF_REASON_MODP_RANK;
        goto cleanup;
    }
    if (r == 0) {
        *reason = HF_REASON_NULLSPACE_Q;
        goto cleanup;
    }
    /* positivity rows on the null-space coordinates: Nc = pos X (m x r) */
    Nc = _fmpz_vec_init(m * r);
    for (long i = 0; i < m; i++)
        for (long k = 0; k < n; k++) {
            const fmpz *p = w.pos + i * n + k;
            if (fmpz_is_zero(p))
                continue;
            for (long j = 0; j < r; j++)
                fmpz_addmul(Nc + i * r + j, p, fmpz_mat_entry(X, k, j));
        }
    lambda = _fmpq_vec_init(r);
    int found = 0;
    HF_CHECK(err, hf_exact_positivity(Nc, m, r, lambda, &found, reason), cleanup);
    if (!found)
        goto cleanup;
    R = _fmpz_vec_init(n);
    hf_exact_combine(X, r, lambda, n, R);
    int ok = 0;
    HF_CHECK(err, rs_witness(e, &w, m, keys, R, witness, &ok), cleanup);
    if (!ok) {
        err = hf_error(HF_ERR_INTERNAL,
                       "exact test: R-space witness failed its exact check (%ld keys)", m);
        goto cleanup;
    }
    *feasible = 1;
    *reason = HF_REASON_WITNESS;
cleanup:
    if (R)
        _fmpz_vec_clear(R, n);
    if (lambda)
        _fmpq_vec_clear(lambda, r);
    if (Nc)
        _fmpz_vec_clear(Nc, m * r);
    fmpz_mat_clear(X);
    if (err != HF_OK)
        goto out;
decided:
    e->stats.decided++;
    e->stats.feasible += *feasible;
    e->stats.by_reason[*reason]++;
out:
    if (w.pos) {
        _fmpz_vec_clear(w.pos, m * w.n);
        w.pos = NULL;
    }
    rs_free(&w);
    if (err != HF_OK)
        *feasible = 0;
    return err;
}
