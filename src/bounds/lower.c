/* Lower bound on m*(T): the face rule (docs/math.md §4.3), the Newton polytope of the
 * reduced denominator (docs/math.md §5.2, §5.3) and the slices (docs/math.md §12.3),
 * memoised on a canonical form.
 *
 * Rules, each proven (docs/bounds.md):
 *   (a) face rule: LB(T_w) + LB(T_-w) for a direction w along which T is proven not
 *       invariant;
 *   (b) Newton vertices: |vert Newt(Q)| (Theorem 5.2), counted by hf_bounds_newton_count;
 *   (c) disjoint faces: the best total of LB(T_w) over disjoint faces of Newt(Q)
 *       (Theorem 5.3);
 *   (d) slices: every support is the support of a positive multiple of Q, so
 *       |K| >= M(Q) >= the product over blocks of a bound on each block's M
 *       (Corollary 12.3, hf_bounds_slices: the one-variable M, the slices inside a block of
 *       line heads, the vertex count): multi:d,k=3 gets 3^d, chain:d=2 7;
 *   (e) end slices (lb_ends; hf_bounds_lower_info only): the extreme levels of a support
 *       along a coordinate represent the limit targets, and the levels between are
 *       positive multiples (Theorem 12.8): chain:d=4 gets 24 + 24 + 21.
 * By induction over the recursion every value of (a) and (c) is at most (b) (a limit
 * target's reduced denominator divides the initial form of Q, whose polytope is the
 * face; a Minkowski summand has no more vertices than the sum). So where (b) is known
 * it is the answer and the directions are not explored; (a) runs where (b) is out of
 * reach, with (b) at the limit targets below. hf_bounds_lower_info evaluates (c) too on
 * small targets (it then equals (b)). Proof: docs/math.md §5.5.
 *
 * The face rule: LB(T) = max(1, max over directions w where T is PROVEN not invariant
 * along w of LB(T_w) + LB(T_-w)). Soundness: if K represents T then F_w(K) represents T_w and
 * F_-w(K) represents T_-w, so |F_w(K)| >= m*(T_w) and the same for -w. If T is not
 * invariant along w, K does not lie in a hyperplane orthogonal to w (else the single
 * head on K would be invariant along w), so max k.w > min k.w over K and the two faces
 * are disjoint: |K| >= m*(T_w) + m*(T_-w). A direction that is not proven is skipped,
 * which can only lower the bound. Every value stored or returned is a lower bound, so
 * stopping early (caps below) stays sound.
 *
 * Targets are kept in a compact form with sparse keys (only nonzero coordinates), so
 * that W_64 and its limits cost little; docs/bounds.md explains the canonical form. */
#include <assert.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include <flint/fmpq_vec.h>
#include <flint/nmod_vec.h>
#include <flint/ulong_extras.h>

#include "bounds/bounds_impl.h"
#include "headfuse/bounds.h"
#include "headfuse/faces3d.h"
#include "headfuse/newton.h"

/* Caps. Each only stops work early and keeps the bound found so far (sound). */
#define LB_MEMO_MAX 200000L   /* canonical targets remembered */
#define LB_WORK_MAX 10000000L /* atoms visited while building limit targets */
#define LB_DEPTH_MAX 2000     /* recursion depth (each level drops at least one atom) */
#define LB_PAIR_DIRS_D_MAX 8  /* also try e_i + e_j and e_i - e_j up to this dimension */
#define LB_PRIMES 3           /* primes tried in a non-invariance proof */
#define LB_POINTS 4           /* point pairs tried per prime */
/* Newton vertex counts of blocks whose heads are not on lines go through P/Q and
 * cddlib when the product of the block's head sizes is at most LB_CDD_TERMS and it uses
 * at most LB_CDD_DIM coordinates (cddlib's time grows quickly with both); rule (c) is
 * evaluated when the whole target's product is at most LB_PACK_TERMS, d is at most
 * LB_PACK_DIM and Newt(Q) has at most LB_PACK_FACES proper faces (chain_5 then costs
 * 0.15 s; W_8 would cost 0.14 s for nothing: 6561 faces). */
#define LB_CDD_TERMS 1024L
#define LB_CDD_DIM 6
#define LB_PACK_TERMS 512L
#define LB_PACK_DIM 5
#define LB_PACK_FACES 4096L
/* The end slices (rule (e)) on targets of at most this many coordinates whose heads lie on
 * lines: each level costs two limit targets per coordinate (memoised), and a limit target
 * in three coordinates a face accounting (faces3d.h, about 0.05 s for chain:d=3). */
#define LB_ENDS_D_MAX 6

static const hf_bounds_cdd_limits_t lb_cdd_limits = {LB_CDD_TERMS, LB_CDD_DIM};

/* A target with sparse keys. Head h owns atoms hstart[h] .. hstart[h+1]-1; atom a's
 * key has nonzero coordinates kidx[e] (increasing) with values kval[e] for e in
 * kstart[a] .. kstart[a+1]-1. Weights w[a], values v[a*dv + j]. */
typedef struct {
    int d, dv, nheads;
    long natoms, nnz;
    long cap_atoms, cap_nnz; /* room allocated in w/v/kstart and kidx/kval */
    long *hstart;
    long *kstart;
    int *kidx;
    int64_t *kval;
    fmpq *w, *v;
} lb_tgt_t;

typedef struct {
    hf_bounds_bytemap_t memo; /* canonical target -> LB */
    hf_bounds_bytemap_t ends; /* canonical target -> the end slices' value (lb_ends) */
    hf_bounds_arr_t arr;      /* arrangement memo of the Newton vertex counts */
    int newton;               /* 0: the face rule alone (hf_bounds_lower_face_rule) */
    long work;
    int truncated;
    hf_rng_t rng;
    ulong primes[LB_PRIMES];
    /* scratch of the canonicalisation, grown as needed */
    long *S, *ord, *skstart;
    long cap_S, cap_ord, cap_skstart;
    int *skidx;
    int64_t *skval;
    long cap_skidx, cap_skval;
    int cnt[HF_D_MAX]; /* all 0 between uses */
} lb_ctx_t;

/* ------------------------------------------------------------------ storage */

static void lb_tgt_zero(lb_tgt_t *T)
{
    memset(T, 0, sizeof *T);
}

static void lb_tgt_clear(lb_tgt_t *T)
{
    if (T->w)
        _fmpq_vec_clear(T->w, T->cap_atoms);
    if (T->v)
        _fmpq_vec_clear(T->v, T->cap_atoms * T->dv);
    free(T->kval);
    free(T->kidx);
    free(T->kstart);
    free(T->hstart);
    lb_tgt_zero(T);
}

/* Room for up to `heads` heads, `atoms` atoms and `nnz` key entries (nnz may grow). */
static hf_err_t lb_tgt_alloc(lb_tgt_t *T, int d, int dv, int heads, long atoms, long nnz)
{
    lb_tgt_zero(T);
    T->d = d;
    T->dv = dv;
    T->cap_atoms = atoms > 0 ? atoms : 1;
    T->cap_nnz = nnz > 0 ? nnz : 1;
    T->hstart = hf_malloc((size_t)(heads + 1) * sizeof *T->hstart);
    T->kstart = hf_malloc((size_t)(T->cap_atoms + 1) * sizeof *T->kstart);
    T->kidx = hf_malloc((size_t)T->cap_nnz * sizeof *T->kidx);
    T->kval = hf_malloc((size_t)T->cap_nnz * sizeof *T->kval);
    if (!T->hstart || !T->kstart || !T->kidx || !T->kval) {
        lb_tgt_clear(T);
        return HF_ERR_NOMEM;
    }
    T->w = _fmpq_vec_init(T->cap_atoms);
    T->v = _fmpq_vec_init(T->cap_atoms * dv);
    T->hstart[0] = 0;
    T->kstart[0] = 0;
    return HF_OK;
}

static hf_err_t lb_tgt_reserve_nnz(lb_tgt_t *T, long need)
{
    return HF_GROW2(&T->kidx, &T->kval, &T->cap_nnz, need);
}

static hf_err_t lb_buf_fmpq(hf_bounds_buf_t *b, const fmpq_t x)
{
    HF_TRY(hf_bounds_buf_fmpz(b, fmpq_numref(x)));
    return hf_bounds_buf_fmpz(b, fmpq_denref(x));
}

/* ------------------------------------------------------------------ canonical form */

/* Order of atoms by their (shifted, sparse) keys: any fixed total order will do. */
static int lb_cmp_sparse(const void *ctx, long a, long b)
{
    const lb_ctx_t *cx = ctx;
    long i = cx->skstart[a], ie = cx->skstart[a + 1];
    long j = cx->skstart[b], je = cx->skstart[b + 1];
    for (; i < ie && j < je; i++, j++) {
        if (cx->skidx[i] != cx->skidx[j])
            return cx->skidx[i] < cx->skidx[j] ? -1 : 1;
        if (cx->skval[i] != cx->skval[j])
            return cx->skval[i] < cx->skval[j] ? -1 : 1;
    }
    return (i < ie) - (j < je);
}

/* Serialisations of heads, compared as byte strings. */
typedef struct {
    const unsigned char *p;
    const size_t *off;
} lb_heads_order_t;

static int lb_cmp_bytes(const void *ctx, long a, long b)
{
    const lb_heads_order_t *o = ctx;
    size_t la = o->off[a + 1] - o->off[a], lb = o->off[b + 1] - o->off[b];
    int c = memcmp(o->p + o->off[a], o->p + o->off[b], la < lb ? la : lb);
    if (c)
        return c;
    return (la > lb) - (la < lb);
}

static hf_err_t lb_serialise_head(hf_bounds_buf_t *b, const lb_tgt_t *T, int h)
{
    long a0 = T->hstart[h], a1 = T->hstart[h + 1];
    HF_TRY(hf_bounds_buf_i64(b, a1 - a0));
    for (long a = a0; a < a1; a++) {
        HF_TRY(hf_bounds_buf_i64(b, T->kstart[a + 1] - T->kstart[a]));
        for (long e = T->kstart[a]; e < T->kstart[a + 1]; e++) {
            HF_TRY(hf_bounds_buf_i64(b, T->kidx[e]));
            HF_TRY(hf_bounds_buf_i64(b, T->kval[e]));
        }
        HF_TRY(lb_buf_fmpq(b, T->w + a));
        for (int j = 0; j < T->dv; j++)
            HF_TRY(lb_buf_fmpq(b, T->v + a * T->dv + j));
    }
    return HF_OK;
}

/* dst = src with its heads sorted by their serialisations (a sum does not depend on
 * the order of its terms); ser = the serialisation of dst. src's numbers are moved out. */
static hf_err_t lb_sort_heads(lb_tgt_t *src, lb_tgt_t *dst, hf_bounds_buf_t *ser)
{
    hf_err_t err = HF_OK;
    int H = src->nheads, dv = src->dv;
    hf_bounds_buf_t hb = {0};
    size_t *off = hf_malloc((size_t)(H + 1) * sizeof *off);
    long *order = hf_malloc((size_t)(H ? H : 1) * sizeof *order);
    lb_tgt_zero(dst);
    if (!off || !order) {
        err = HF_ERR_NOMEM;
        goto cleanup;
    }
    off[0] = 0;
    for (int h = 0; h < H; h++) {
        HF_CHECK(err, lb_serialise_head(&hb, src, h), cleanup);
        off[h + 1] = hb.n;
        order[h] = h;
    }
    lb_heads_order_t o = {hb.p, off};
    if (hf_sort(order, H, lb_cmp_bytes, &o) != HF_OK) {
        err = HF_ERR_NOMEM;
        goto cleanup;
    }
    HF_CHECK(err, lb_tgt_alloc(dst, src->d, dv, H, src->natoms, src->nnz), cleanup);
    ser->n = 0;
    HF_CHECK(err, hf_bounds_buf_i64(ser, src->d), cleanup);
    HF_CHECK(err, hf_bounds_buf_i64(ser, dv), cleanup);
    HF_CHECK(err, hf_bounds_buf_i64(ser, H), cleanup);
    for (int k = 0; k < H; k++) {
        int h = (int)order[k];
        for (long a = src->hstart[h]; a < src->hstart[h + 1]; a++) {
            long m = dst->natoms++;
            fmpq_swap(dst->w + m, src->w + a);
            for (int j = 0; j < dv; j++)
                fmpq_swap(dst->v + m * dv + j, src->v + a * dv + j);
            long len = src->kstart[a + 1] - src->kstart[a];
            memcpy(dst->kidx + dst->nnz, src->kidx + src->kstart[a], (size_t)len * sizeof(int));
            memcpy(dst->kval + dst->nnz, src->kval + src->kstart[a], (size_t)len * sizeof(int64_t));
            dst->nnz += len;
            dst->kstart[m + 1] = dst->nnz;
        }
        dst->hstart[++dst->nheads] = dst->natoms;
        HF_CHECK(err, hf_bounds_buf_put(ser, hb.p + off[h], off[h + 1] - off[h]), cleanup);
    }
cleanup:
    if (err != HF_OK)
        lb_tgt_clear(dst);
    free(order);
    free(off);
    free(hb.p);
    return err;
}

/* One head of T restricted to the selected atoms, in canonical form, appended to tmp
 * (or nothing when it is constant). Steps, each keeping the head's function up to an
 * added constant (which does not change m*, docs/math.md §3.2):
 *   shift keys to per-coordinate minimum 0 (N and D gain the same monomial factor);
 *   sort atoms by key and merge repeated keys (weights add, values average by weight);
 *   divide weights by the first weight (N and D scale alike);
 *   subtract the first atom's value from every value (the head changes by a constant);
 *   drop the head if then all values are 0: it was constant. */
static hf_err_t lb_canon_head(lb_ctx_t *cx, const lb_tgt_t *T, int h, const unsigned char *sel,
                              lb_tgt_t *tmp, fmpq *scratch)
{
    int dv = T->dv;
    long ns = 0;
    for (long a = T->hstart[h]; a < T->hstart[h + 1]; a++)
        if (!sel || sel[a])
            cx->S[ns++] = a;
    cx->work += ns;
    if (ns <= 1)
        return HF_OK;
    /* all values equal: constant whatever the keys (merging keeps them equal) */
    int same = 1;
    for (long i = 1; i < ns && same; i++)
        for (int j = 0; j < dv && same; j++)
            same = fmpq_equal(T->v + cx->S[0] * dv + j, T->v + cx->S[i] * dv + j);
    if (same)
        return HF_OK;

    /* per-coordinate minimum; an atom without an entry at j has 0 there */
    int *cnt = cx->cnt, touched[HF_D_MAX], nt = 0, mj[HF_D_MAX], nm = 0;
    int64_t mnz[HF_D_MAX], mv[HF_D_MAX];
    for (long i = 0; i < ns; i++) {
        long a = cx->S[i];
        for (long e = T->kstart[a]; e < T->kstart[a + 1]; e++) {
            int j = T->kidx[e];
            if (!cnt[j]++) {
                touched[nt++] = j;
                mnz[j] = T->kval[e];
            } else if (T->kval[e] < mnz[j]) {
                mnz[j] = T->kval[e];
            }
        }
    }
    for (int t = 0; t < nt; t++) {
        int j = touched[t];
        int64_t lo = cnt[j] < ns && mnz[j] > 0 ? 0 : mnz[j];
        cnt[j] = 0;
        if (lo == 0)
            continue;
        /* keep the shift list sorted by coordinate (insertion: at most d entries) */
        int k = nm++;
        for (; k > 0 && mj[k - 1] > j; k--) {
            mj[k] = mj[k - 1];
            mv[k] = mv[k - 1];
        }
        mj[k] = j;
        mv[k] = lo;
    }

    /* shifted keys: merge each atom's entries with the shift list (both increasing) */
    long bound = 0;
    for (long i = 0; i < ns; i++)
        bound += T->kstart[cx->S[i] + 1] - T->kstart[cx->S[i]] + nm;
    HF_TRY(HF_GROW(&cx->skidx, &cx->cap_skidx, bound + 1));
    HF_TRY(HF_GROW(&cx->skval, &cx->cap_skval, bound + 1));
    long n = 0;
    for (long i = 0; i < ns; i++) {
        long a = cx->S[i], e = T->kstart[a], ee = T->kstart[a + 1];
        int k = 0;
        cx->skstart[i] = n;
        while (e < ee || k < nm) {
            int j;
            int64_t x = 0;
            if (k >= nm || (e < ee && T->kidx[e] < mj[k])) {
                j = T->kidx[e];
                x = T->kval[e++];
            } else if (e >= ee || mj[k] < T->kidx[e]) {
                j = mj[k];
                x = -mv[k++];
            } else {
                j = mj[k];
                x = T->kval[e++] - mv[k++];
            }
            if (x != 0) {
                cx->skidx[n] = j;
                cx->skval[n++] = x;
            }
        }
    }
    cx->skstart[ns] = n;

    for (long i = 0; i < ns; i++)
        cx->ord[i] = i;
    if (hf_sort(cx->ord, ns, lb_cmp_sparse, cx) != HF_OK)
        return HF_ERR_NOMEM;

    /* merge runs of equal keys into tmp */
    long base = tmp->natoms, nnz0 = tmp->nnz, m = 0;
    for (long r = 0; r < ns;) {
        long r1 = r + 1;
        while (r1 < ns && lb_cmp_sparse(cx, cx->ord[r], cx->ord[r1]) == 0)
            r1++;
        long p = cx->ord[r], at = base + m, a = cx->S[p];
        fmpq_set(tmp->w + at, T->w + a);
        for (int j = 0; j < dv; j++)
            fmpq_set(tmp->v + at * dv + j, T->v + a * dv + j);
        if (r1 - r > 1) {
            for (int j = 0; j < dv; j++)
                fmpq_mul(tmp->v + at * dv + j, tmp->v + at * dv + j, T->w + a);
            for (long r2 = r + 1; r2 < r1; r2++) {
                long a2 = cx->S[cx->ord[r2]];
                fmpq_add(tmp->w + at, tmp->w + at, T->w + a2);
                for (int j = 0; j < dv; j++)
                    fmpq_addmul(tmp->v + at * dv + j, T->w + a2, T->v + a2 * dv + j);
            }
            for (int j = 0; j < dv; j++)
                fmpq_div(tmp->v + at * dv + j, tmp->v + at * dv + j, tmp->w + at);
        }
        long len = cx->skstart[p + 1] - cx->skstart[p];
        HF_TRY(lb_tgt_reserve_nnz(tmp, tmp->nnz + len));
        memcpy(tmp->kidx + tmp->nnz, cx->skidx + cx->skstart[p], (size_t)len * sizeof(int));
        memcpy(tmp->kval + tmp->nnz, cx->skval + cx->skstart[p], (size_t)len * sizeof(int64_t));
        tmp->nnz += len;
        tmp->kstart[at + 1] = tmp->nnz;
        m++;
        r = r1;
    }

    /* normalise the first atom to weight 1 and value 0 */
    if (!fmpq_is_one(tmp->w + base)) {
        fmpq_set(scratch, tmp->w + base);
        for (long i = base; i < base + m; i++)
            fmpq_div(tmp->w + i, tmp->w + i, scratch);
    }
    int nonzero0 = 0;
    for (int j = 0; j < dv; j++)
        nonzero0 |= !fmpq_is_zero(tmp->v + base * dv + j);
    if (nonzero0) {
        for (int j = 0; j < dv; j++)
            fmpq_set(scratch + j, tmp->v + base * dv + j);
        for (long i = base; i < base + m; i++)
            for (int j = 0; j < dv; j++)
                fmpq_sub(tmp->v + i * dv + j, tmp->v + i * dv + j, scratch + j);
    }
    int constant = 1;
    for (long i = (base + 1) * dv; i < (base + m) * dv && constant; i++)
        constant = fmpq_is_zero(tmp->v + i);
    if (m <= 1 || constant) {
        tmp->natoms = base; /* roll back: the head is constant */
        tmp->nnz = nnz0;
        return HF_OK;
    }
    tmp->natoms = base + m;
    tmp->hstart[++tmp->nheads] = tmp->natoms;
    return HF_OK;
}

/* out = canonical form of T restricted to the selected atoms (sel == NULL: all), and
 * ser its serialisation. Equal serialisations imply equal m*: see docs/bounds.md. */
static hf_err_t lb_canon(lb_ctx_t *cx, const lb_tgt_t *T, const unsigned char *sel, lb_tgt_t *out,
                         hf_bounds_buf_t *ser)
{
    hf_err_t err = HF_OK;
    int dv = T->dv;
    long nsel = 0, maxhead = 0;
    lb_tgt_t tmp, tmp2;
    fmpq *scratch = _fmpq_vec_init(dv);
    lb_tgt_zero(&tmp);
    lb_tgt_zero(&tmp2);
    lb_tgt_zero(out);
    for (int h = 0; h < T->nheads; h++) {
        long n = 0;
        for (long a = T->hstart[h]; a < T->hstart[h + 1]; a++)
            n += !sel || sel[a];
        nsel += n;
        if (n > maxhead)
            maxhead = n;
    }
    /* per-head scratch: atom lists, order and key starts (one more) */
    HF_CHECK(err, HF_GROW(&cx->S, &cx->cap_S, maxhead + 1), cleanup);
    HF_CHECK(err, HF_GROW(&cx->ord, &cx->cap_ord, maxhead + 1), cleanup);
    HF_CHECK(err, HF_GROW(&cx->skstart, &cx->cap_skstart, maxhead + 1), cleanup);
    HF_CHECK(err, lb_tgt_alloc(&tmp, T->d, dv, T->nheads, nsel, T->nnz), cleanup);
    for (int h = 0; h < T->nheads; h++)
        HF_CHECK(err, lb_canon_head(cx, T, h, sel, &tmp, scratch), cleanup);

    /* Drop coordinates no head uses: T does not depend on them, and m* is unchanged
     * (the face along e_j of any representation lies in k_j = const and represents T). */
    int used[HF_D_MAX], newidx[HF_D_MAX], nd = 0;
    memset(used, 0, sizeof used);
    for (long e = 0; e < tmp.nnz; e++)
        used[tmp.kidx[e]] = 1;
    for (int j = 0; j < T->d; j++)
        newidx[j] = used[j] ? nd++ : -1;
    for (long e = 0; e < tmp.nnz; e++)
        tmp.kidx[e] = newidx[tmp.kidx[e]];
    tmp.d = nd;

    HF_CHECK(err, lb_sort_heads(&tmp, out, ser), cleanup);

    /* Global scale T -> T / alpha with alpha the first nonzero value in this order (m* of
     * alpha T equals m* of T). Then sort again: the order may change. */
    for (long i = 0; i < out->natoms * dv; i++) {
        if (fmpq_is_zero(out->v + i))
            continue;
        if (!fmpq_is_one(out->v + i)) {
            fmpq_set(scratch, out->v + i);
            for (long k = 0; k < out->natoms * dv; k++)
                fmpq_div(out->v + k, out->v + k, scratch);
            HF_CHECK(err, lb_sort_heads(out, &tmp2, ser), cleanup);
            lb_tgt_clear(out);
            *out = tmp2;
            lb_tgt_zero(&tmp2);
        }
        break;
    }
cleanup:
    if (err != HF_OK)
        lb_tgt_clear(out);
    lb_tgt_clear(&tmp2);
    lb_tgt_clear(&tmp);
    _fmpq_vec_clear(scratch, dv);
    return err;
}

/* ------------------------------------------------------------------ non-invariance */

/* Image of a rational in Z/p; 0 if its denominator is divisible by p. */
static int lb_reduce(const fmpq_t x, nmod_t mod, ulong *out)
{
    ulong den = fmpz_fdiv_ui(fmpq_denref(x), mod.n);
    if (den == 0)
        return 0;
    *out = nmod_mul(fmpz_fdiv_ui(fmpq_numref(x), mod.n), n_invmod(den, mod.n), mod);
    return 1;
}

/* T(x) mod p, head by head: sum_h N_h(x) / D_h(x). 0 if some D_h(x) = 0 mod p. */
static int lb_eval_modp(const lb_tgt_t *T, const ulong *cr, const ulong *vr, const ulong *x,
                        nmod_t mod, ulong *out)
{
    int dv = T->dv;
    ulong num[HF_DV_MAX];
    for (int j = 0; j < dv; j++)
        out[j] = 0;
    for (int h = 0; h < T->nheads; h++) {
        ulong den = 0;
        for (int j = 0; j < dv; j++)
            num[j] = 0;
        for (long a = T->hstart[h]; a < T->hstart[h + 1]; a++) {
            ulong mono = 1;
            for (long e = T->kstart[a]; e < T->kstart[a + 1]; e++)
                mono = nmod_mul(mono, nmod_pow_ui(x[T->kidx[e]], (ulong)T->kval[e], mod), mod);
            ulong cm = nmod_mul(cr[a], mono, mod);
            den = nmod_add(den, cm, mod);
            for (int j = 0; j < dv; j++)
                num[j] = nmod_add(num[j], nmod_mul(cm, vr[a * dv + j], mod), mod);
        }
        if (den == 0)
            return 0;
        ulong inv = n_invmod(den, mod.n);
        for (int j = 0; j < dv; j++)
            out[j] = nmod_add(out[j], nmod_mul(num[j], inv, mod), mod);
    }
    return 1;
}

/* 1 when T is proven not invariant along w. With all coefficients in Z_(p) and every
 * D_h invertible at both points, T(x0) and T(x1) lie in Z_(p) and reduce to the values
 * computed mod p; if those differ, T(x0) != T(x1) as rationals. x0 > 0 is an integer
 * point and x1 = lambda^w x0, so q0 = log x0 and q0 + (log lambda) w are two real
 * queries where T differs. Keys of canonical targets are >= 0. */
static hf_err_t lb_prove(lb_ctx_t *cx, const lb_tgt_t *T, const int64_t *w, int *proven)
{
    hf_err_t err = HF_OK;
    int d = T->d, dv = T->dv;
    ulong *cr = hf_malloc((size_t)(T->natoms ? T->natoms : 1) * sizeof *cr);
    ulong *vr = hf_malloc((size_t)(T->natoms ? T->natoms : 1) * dv * sizeof *vr);
    ulong x0[HF_D_MAX], x1[HF_D_MAX], t0[HF_DV_MAX], t1[HF_DV_MAX];
    *proven = 0;
    if (!cr || !vr) {
        err = HF_ERR_NOMEM;
        goto cleanup;
    }
    for (int pi = 0; pi < LB_PRIMES && !*proven; pi++) {
        nmod_t mod;
        nmod_init(&mod, cx->primes[pi]);
        int ok = 1;
        for (long a = 0; a < T->natoms && ok; a++) {
            ok = lb_reduce(T->w + a, mod, cr + a);
            for (int j = 0; j < dv && ok; j++)
                ok = lb_reduce(T->v + a * dv + j, mod, vr + a * dv + j);
        }
        if (!ok)
            continue; /* a denominator divisible by p: another prime */
        for (int pt = 0; pt < LB_POINTS && !*proven; pt++) {
            ulong lam = 2 + hf_rng_next(&cx->rng) % 65535, laminv = n_invmod(lam, mod.n);
            for (int j = 0; j < d; j++) {
                x0[j] = 2 + hf_rng_next(&cx->rng) % (mod.n - 2);
                ulong f = w[j] >= 0 ? nmod_pow_ui(lam, (ulong)w[j], mod)
                                    : nmod_pow_ui(laminv, (ulong)(-w[j]), mod);
                x1[j] = nmod_mul(x0[j], f, mod);
            }
            if (!lb_eval_modp(T, cr, vr, x0, mod, t0) || !lb_eval_modp(T, cr, vr, x1, mod, t1))
                continue;
            for (int j = 0; j < dv; j++)
                if (t0[j] != t1[j])
                    *proven = 1;
        }
    }
cleanup:
    free(vr);
    free(cr);
    return err;
}

/* ------------------------------------------------------------------ recursion */

/* The compact target as an hf_target_t (dense keys), for the Newton vertex count. */
static hf_err_t lb_to_target(const lb_tgt_t *C, hf_target_t *t)
{
    hf_err_t err;
    hf_head_t h;
    HF_TRY(hf_target_init(t, "limit", C->d, C->dv));
    hf_head_init(&h, C->d, C->dv);
    for (int k = 0; k < C->nheads; k++) {
        long a0 = C->hstart[k], n = C->hstart[k + 1] - a0;
        HF_CHECK(err, hf_head_resize(&h, n), fail);
        memset(h.keys, 0, (size_t)n * C->d * sizeof *h.keys);
        for (long i = 0; i < n; i++) {
            for (long e = C->kstart[a0 + i]; e < C->kstart[a0 + i + 1]; e++)
                h.keys[i * C->d + C->kidx[e]] = C->kval[e];
            fmpq_set(h.weights + i, C->w + a0 + i);
            for (int j = 0; j < C->dv; j++)
                fmpq_set(h.values + i * C->dv + j, C->v + (a0 + i) * C->dv + j);
        }
        HF_CHECK(err, hf_target_add_head(t, &h), fail);
    }
    hf_head_clear(&h);
    return HF_OK;
fail:
    hf_head_clear(&h);
    hf_target_clear(t);
    return err;
}

/* Rule (b) at a canonical target: *known = 0 when the count is out of reach. */
static hf_err_t lb_newton(lb_ctx_t *cx, const lb_tgt_t *C, fmpz_t v, int *known)
{
    hf_target_t t;
    HF_TRY(lb_to_target(C, &t));
    cx->work += C->natoms;
    hf_err_t err = hf_bounds_newton_count(&t, &cx->arr, &lb_cdd_limits, v, known);
    hf_target_clear(&t);
    return err;
}

/* LB of the canonical compact target C (ser: its serialisation, the memo key) into out,
 * by the rules at the top of this file, recursively:
 *   1. a memo hit returns the remembered bound; a constant target needs one atom;
 *   2. past LB_DEPTH_MAX or LB_WORK_MAX the bound is 1 (valid, not remembered) and
 *      cx->truncated records that it was cut short;
 *   3. rule (b), when try_newton: the Newton vertex count, if within reach, is the
 *      bound (rules (a) and (c) cannot exceed it);
 *   4. else rule (a): along each direction w (coordinate axes, then e_i +- e_j for
 *      small d) where not every head is flat, LB(T_w) + LB(T_-w) by recursion on the
 *      two canonicalised faces, taken only when lb_prove shows T is not invariant
 *      along w; it stops once the bound reaches the product of the head sizes (an
 *      upper bound on m*, so no direction can give more).
 * The result is remembered under ser. */
static hf_err_t lb_rec(lb_ctx_t *cx, const lb_tgt_t *C, const hf_bounds_buf_t *ser, int depth,
                       int try_newton, fmpz_t out)
{
    hf_err_t err = HF_OK;
    const hf_bounds_bytemap_entry_t *e = hf_bounds_bytemap_get(&cx->memo, ser->p, ser->n);
    if (e) {
        fmpz_set(out, &e->val);
        return HF_OK;
    }
    fmpz_one(out);
    if (C->nheads == 0) /* a constant target: one atom */
        return hf_bounds_bytemap_put(&cx->memo, ser->p, ser->n, out);
    if (depth >= LB_DEPTH_MAX || cx->work > LB_WORK_MAX) {
        cx->truncated = 1;
        return HF_OK; /* 1 is a lower bound; not remembered */
    }
    if (cx->newton && try_newton) {
        int known;
        HF_TRY(lb_newton(cx, C, out, &known));
        if (known) /* (a) and (c) cannot exceed it (see the top of this file) */
            return hf_bounds_bytemap_put(&cx->memo, ser->p, ser->n, out);
        fmpz_one(out);
    }

    int d = C->d;
    int64_t w[HF_D_MAX], dot = 0;
    unsigned char *selp = hf_malloc((size_t)C->natoms);
    unsigned char *seln = hf_malloc((size_t)C->natoms);
    lb_tgt_t A, B;
    hf_bounds_buf_t sa = {0}, sb = {0};
    fmpz_t a, b, cap;
    fmpz_init(a);
    fmpz_init(b);
    fmpz_init(cap);
    lb_tgt_zero(&A);
    lb_tgt_zero(&B);
    if (!selp || !seln) {
        err = HF_ERR_NOMEM;
        goto cleanup;
    }
    /* m* <= product of head sizes (the product construction), so no direction can give
     * more: stop as soon as the bound reaches it (W_d then needs one direction a level). */
    fmpz_one(cap);
    for (int h = 0; h < C->nheads; h++)
        fmpz_mul_ui(cap, cap, (ulong)(C->hstart[h + 1] - C->hstart[h]));
    long ndirs = d + (d <= LB_PAIR_DIRS_D_MAX ? (long)d * (d - 1) : 0);
    for (long k = 0; k < ndirs && fmpz_cmp(out, cap) < 0; k++) {
        memset(w, 0, sizeof w);
        if (k < d) {
            w[k] = 1;
        } else { /* pairs i < j: e_i + e_j then e_i - e_j */
            long r = (k - d) / 2, i = 0;
            while (r >= d - 1 - i) {
                r -= d - 1 - i;
                i++;
            }
            w[i] = 1;
            w[i + 1 + r] = (k - d) % 2 ? -1 : 1;
        }
        /* faces F_w and F_-w of every head; skip w if every head is flat along w */
        int flat = 1;
        for (int h = 0; h < C->nheads; h++) {
            int64_t hi = 0, lo = 0;
            for (long at = C->hstart[h]; at < C->hstart[h + 1]; at++) {
                dot = 0;
                for (long q = C->kstart[at]; q < C->kstart[at + 1]; q++)
                    dot += w[C->kidx[q]] * C->kval[q];
                if (at == C->hstart[h] || dot > hi)
                    hi = dot;
                if (at == C->hstart[h] || dot < lo)
                    lo = dot;
            }
            for (long at = C->hstart[h]; at < C->hstart[h + 1]; at++) {
                dot = 0;
                for (long q = C->kstart[at]; q < C->kstart[at + 1]; q++)
                    dot += w[C->kidx[q]] * C->kval[q];
                selp[at] = dot == hi;
                seln[at] = dot == lo;
            }
            flat &= hi == lo;
        }
        if (flat)
            continue;
        HF_CHECK(err, lb_canon(cx, C, selp, &A, &sa), cleanup);
        HF_CHECK(err, lb_canon(cx, C, seln, &B, &sb), cleanup);
        HF_CHECK(err, lb_rec(cx, &A, &sa, depth + 1, 1, a), cleanup);
        HF_CHECK(err, lb_rec(cx, &B, &sb, depth + 1, 1, b), cleanup);
        lb_tgt_clear(&A);
        lb_tgt_clear(&B);
        fmpz_add(a, a, b);
        if (fmpz_cmp(a, out) > 0) {
            int proven;
            HF_CHECK(err, lb_prove(cx, C, w, &proven), cleanup);
            if (proven)
                fmpz_set(out, a);
        }
        if (cx->work > LB_WORK_MAX) {
            cx->truncated = 1;
            break;
        }
    }
    /* a lower bound never exceeds the product construction's size */
    assert(fmpz_cmp_ui(out, 1) >= 0 && fmpz_cmp(out, cap) <= 0);
    HF_CHECK(err, hf_bounds_bytemap_put(&cx->memo, ser->p, ser->n, out), cleanup);
cleanup:
    fmpz_clear(cap);
    fmpz_clear(b);
    fmpz_clear(a);
    hf_bounds_buf_clear(&sb);
    hf_bounds_buf_clear(&sa);
    lb_tgt_clear(&B);
    lb_tgt_clear(&A);
    free(seln);
    free(selp);
    return err;
}

/* The target's heads with sparse keys (any signs; canonicalisation shifts them). */
static hf_err_t lb_from_target(const hf_target_t *t, lb_tgt_t *T)
{
    int d = t->d, dv = t->dv;
    long natoms = 0, nnz = 0;
    for (int h = 0; h < t->nheads; h++) {
        natoms += t->heads[h].natoms;
        for (long i = 0; i < t->heads[h].natoms * d; i++)
            nnz += t->heads[h].keys[i] != 0;
    }
    HF_TRY(lb_tgt_alloc(T, d, dv, t->nheads, natoms, nnz));
    for (int h = 0; h < t->nheads; h++) {
        const hf_head_t *hd = t->heads + h;
        for (long i = 0; i < hd->natoms; i++) {
            long m = T->natoms++;
            fmpq_set(T->w + m, hd->weights + i);
            for (int j = 0; j < dv; j++)
                fmpq_set(T->v + m * dv + j, hd->values + i * dv + j);
            for (int j = 0; j < d; j++) {
                if (hd->keys[i * d + j] == 0)
                    continue;
                T->kidx[T->nnz] = j;
                T->kval[T->nnz++] = hd->keys[i * d + j];
            }
            T->kstart[m + 1] = T->nnz;
        }
        T->hstart[++T->nheads] = T->natoms;
    }
    return HF_OK;
}

static hf_err_t lb_ctx_init(lb_ctx_t *cx, int newton)
{
    memset(cx, 0, sizeof *cx);
    cx->newton = newton;
    hf_rng_seed(&cx->rng, 0x5eed0f1a5eULL); /* fixed: the same bound on every run and machine */
    cx->primes[0] = n_nextprime(UWORD(1) << 61, 1);
    for (int i = 1; i < LB_PRIMES; i++)
        cx->primes[i] = n_nextprime(cx->primes[i - 1], 1);
    hf_bounds_bytemap_init(&cx->memo, LB_MEMO_MAX);
    hf_bounds_bytemap_init(&cx->ends, LB_MEMO_MAX);
    return hf_bounds_arr_init(&cx->arr);
}

static void lb_ctx_clear(lb_ctx_t *cx)
{
    hf_bounds_arr_clear(&cx->arr);
    hf_bounds_bytemap_clear(&cx->ends);
    hf_bounds_bytemap_clear(&cx->memo);
    free(cx->skval);
    free(cx->skidx);
    free(cx->skstart);
    free(cx->ord);
    free(cx->S);
}

/* LB of a target through the recursion (the canonical form first). try_newton = 0
 * when the caller has already found rule (b) out of reach for t. */
static hf_err_t lb_of_target(lb_ctx_t *cx, const hf_target_t *t, int try_newton, fmpz_t lb)
{
    hf_err_t err = HF_OK;
    lb_tgt_t raw, C;
    hf_bounds_buf_t ser = {0};
    lb_tgt_zero(&raw);
    lb_tgt_zero(&C);
    HF_CHECK(err, lb_from_target(t, &raw), cleanup);
    HF_CHECK(err, lb_canon(cx, &raw, NULL, &C, &ser), cleanup);
    HF_CHECK(err, lb_rec(cx, &C, &ser, 0, try_newton, lb), cleanup);
cleanup:
    hf_bounds_buf_clear(&ser);
    lb_tgt_clear(&C);
    lb_tgt_clear(&raw);
    return err;
}

/* Rule (e), the end slices (docs/math.md, Theorem 12.8), with the bounds below it: the value
 * of the target t (any form; canonicalised here) is the best of
 *   - its vertex count and its slices (rules (b) and (d));
 *   - below the top (a limit target) in three coordinates, the face accounting's
 *     min(|supp Q|, bound) (docs/math.md, Theorem 11.13: every support is supp Q translated
 *     or has at least bound keys; no exact test needed for this form);
 *   - when its heads lie on lines and it has at most LB_ENDS_D_MAX coordinates, for each
 *     coordinate y that Q uses: the values of the limit targets along e_y and -e_y (the two
 *     end levels of a support are its faces there), plus max(N_y - 2, 0) middle levels of
 *     at least M(A_y) keys each (hf_bounds_mlb_slice, hf_bounds_mlb).
 * Every value is a lower bound on m* over all integer keys. Memoised on the canonical form
 * and top. */
static hf_err_t lb_ends(lb_ctx_t *cx, const hf_target_t *t, int top, fmpz_t out)
{
    hf_err_t err = HF_OK;
    lb_tgt_t raw, C;
    hf_bounds_buf_t ser = {0};
    hf_target_t tc, lim;
    hf_bounds_mlb_t *mc = NULL;
    hf_faces3d_t A;
    int known = 0;
    fmpz_t v, a, w2;
    lb_tgt_zero(&raw);
    lb_tgt_zero(&C);
    hf_target_init_empty(&tc);
    hf_target_init_empty(&lim);
    hf_faces3d_init(&A);
    fmpz_init(v);
    fmpz_init(a);
    fmpz_init(w2);
    fmpz_one(out);
    HF_CHECK(err, lb_from_target(t, &raw), cleanup);
    HF_CHECK(err, lb_canon(cx, &raw, NULL, &C, &ser), cleanup);
    HF_CHECK(err, hf_bounds_buf_i64(&ser, top), cleanup);
    const hf_bounds_bytemap_entry_t *e = hf_bounds_bytemap_get(&cx->ends, ser.p, ser.n);
    if (e) {
        fmpz_set(out, &e->val);
        goto cleanup;
    }
    if (C.nheads == 0) /* a constant target: one atom */
        goto store;
    HF_CHECK(err, lb_to_target(&C, &tc), cleanup);
    HF_CHECK(err, hf_bounds_newton_count(&tc, &cx->arr, &lb_cdd_limits, v, &known), cleanup);
    if (known && fmpz_cmp(v, out) > 0)
        fmpz_set(out, v);
    HF_CHECK(err, hf_bounds_slices(&tc, &cx->arr, v, known, a), cleanup);
    if (fmpz_cmp(a, out) > 0)
        fmpz_set(out, a);
    if (!top && tc.d == 3) {
        HF_CHECK(err, hf_faces3d_from_target(&tc, &A), cleanup);
        if (A.ok && fmpz_cmp_si(out, A.supp_q < A.bound ? A.supp_q : A.bound) < 0)
            fmpz_set_si(out, A.supp_q < A.bound ? A.supp_q : A.bound);
    }
    if (tc.d > LB_ENDS_D_MAX)
        goto store;
    int heads[HF_D_MAX > 64 ? HF_D_MAX : 64], nh = 0;
    int *hs = tc.nheads <= 64 ? heads : NULL;
    if (!hs)
        goto store;
    for (int h = 0; h < tc.nheads; h++)
        hs[nh++] = h;
    HF_CHECK(err, hf_bounds_mlb_create(&tc, hs, nh, &cx->arr, &mc), cleanup);
    if (!mc)
        goto store;
    uint64_t all = hf_bounds_mlb_coords(mc);
    for (int y = 0; y < tc.d; y++) {
        if (!(all >> y & 1))
            continue; /* Q does not use y: T is invariant along e_y */
        long n = 1;
        int64_t w[HF_D_MAX] = {0};
        HF_CHECK(err, hf_bounds_mlb_slice(mc, y, &n), cleanup);
        HF_CHECK(err, hf_bounds_mlb(mc, all & ~(UINT64_C(1) << y), a), cleanup);
        fmpz_mul_si(a, a, n > 2 ? n - 2 : 0);
        for (int side = 0; side < 2; side++) {
            w[y] = side ? 1 : -1;
            HF_CHECK(err, hf_bounds_limit_target(&tc, w, &lim), cleanup);
            HF_CHECK(err, lb_ends(cx, &lim, 0, w2), cleanup);
            fmpz_add(a, a, w2);
        }
        if (fmpz_cmp(a, out) > 0)
            fmpz_set(out, a);
    }
store:
    HF_CHECK(err, hf_bounds_bytemap_put(&cx->ends, ser.p, ser.n, out), cleanup);
cleanup:
    hf_bounds_mlb_destroy(&mc);
    fmpz_clear(w2);
    fmpz_clear(a);
    fmpz_clear(v);
    hf_faces3d_clear(&A);
    hf_target_clear(&lim);
    hf_target_clear(&tc);
    hf_bounds_buf_clear(&ser);
    lb_tgt_clear(&C);
    lb_tgt_clear(&raw);
    return err;
}

/* Rule (c) on a small target: the best total of LB(T_w) over disjoint faces of
 * Newt(Q). *done = 0 when the target is too large for it. */
static hf_err_t lb_disjoint_faces(lb_ctx_t *cx, const hf_target_t *t, fmpz_t out, int *done)
{
    hf_err_t err = HF_OK;
    hf_fraction_t f;
    hf_newton_t N;
    long *value = NULL, bound = 1;
    double terms = 1;
    fmpz_t v;
    fmpz_init(v);
    hf_fraction_init(&f);
    hf_newton_init(&N);
    *done = 0;
    for (int h = 0; h < t->nheads; h++)
        terms *= (double)t->heads[h].natoms;
    if (terms > (double)LB_PACK_TERMS || t->d > LB_PACK_DIM)
        goto cleanup;
    HF_CHECK(err, hf_fraction_from_target(&f, t), cleanup);
    HF_CHECK(err, hf_newton_from_fraction(&f, LB_PACK_FACES, &N), cleanup);
    if (!N.faces_complete)
        goto cleanup;
    value = hf_malloc((size_t)(N.nfaces ? N.nfaces : 1) * sizeof *value);
    if (!value) {
        err = HF_ERR_NOMEM;
        goto cleanup;
    }
    for (long i = 0; i < N.nfaces; i++) {
        hf_target_t lim;
        hf_target_init_empty(&lim);
        HF_CHECK(err, hf_bounds_limit_target(t, N.faces[i].w, &lim), cleanup);
        err = lb_of_target(cx, &lim, 1, v);
        hf_target_clear(&lim);
        if (err != HF_OK)
            goto cleanup;
        value[i] = fmpz_fits_si(v) ? fmpz_get_si(v) : LONG_MAX;
    }
    HF_CHECK(err, hf_newton_packing_bound(&N, value, &bound), cleanup);
    fmpz_set_si(out, bound);
    *done = 1;
cleanup:
    free(value);
    hf_newton_clear(&N);
    hf_fraction_clear(&f);
    fmpz_clear(v);
    return err;
}

void hf_lower_init(hf_lower_t *L)
{
    fmpz_init(L->lb);
    fmpz_init(L->newton_vertices);
    fmpz_init(L->slices);
    fmpz_one(L->lb);
    fmpz_one(L->slices);
    L->rule = hf_rule_name(HF_RULE_TRIVIAL);
    L->newton_known = 0;
    L->complete = 0;
}

void hf_lower_clear(hf_lower_t *L)
{
    fmpz_clear(L->slices);
    fmpz_clear(L->newton_vertices);
    fmpz_clear(L->lb);
}

/* lb and complete by rules (a) and (b); info (may be NULL) gets the rule and (b). */
static hf_err_t lb_best(const hf_target_t *t, int disjoint, hf_lower_t *info, fmpz_t lb,
                        int *complete)
{
    hf_err_t err = HF_OK;
    lb_ctx_t cx;
    const char *rule = hf_rule_name(HF_RULE_TRIVIAL);
    int known = 0, done = 0;
    fmpz_t v, c, s;
    fmpz_init(v);
    fmpz_init(c);
    fmpz_init(s);
    fmpz_one(lb);
    *complete = 0;
    HF_CHECK(err, hf_bounds_check_target(t, "lower bound"), cleanup0);
    HF_CHECK(err, lb_ctx_init(&cx, 1), cleanup);
    HF_CHECK(err, hf_bounds_newton_count(t, &cx.arr, &lb_cdd_limits, v, &known), cleanup);
    if (known) {
        /* (b); (a) and (c) cannot exceed it, so the directions are not explored */
        fmpz_set(lb, v);
        rule = hf_rule_name(fmpz_cmp_si(v, 1) > 0 ? HF_RULE_NEWTON_VERTICES : HF_RULE_TRIVIAL);
        *complete = 1;
        if (disjoint) {
            err = lb_disjoint_faces(&cx, t, c, &done);
            if (err == HF_ERR_LIMIT) { /* (c) is optional: skip it */
                hf_error_clear();
                err = HF_OK;
                done = 0;
            }
            if (err != HF_OK)
                goto cleanup;
            if (done && fmpz_cmp(c, lb) > 0) {
                fmpz_set(lb, c);
                rule = hf_rule_name(HF_RULE_DISJOINT_FACES);
            }
        }
    } else {
        HF_CHECK(err, lb_of_target(&cx, t, 0, lb), cleanup);
        rule = hf_rule_name(fmpz_cmp_si(lb, 1) > 0 ? HF_RULE_FACE : HF_RULE_TRIVIAL);
        *complete = !cx.truncated;
    }
    /* slices (Corollary 12.3): at least the vertex count when that is known, larger when a
     * block on one coordinate has M >= 3; sound alongside the face rule otherwise */
    HF_CHECK(err, hf_bounds_slices(t, &cx.arr, v, known, s), cleanup);
    if (fmpz_cmp(s, lb) > 0) {
        fmpz_set(lb, s);
        rule = hf_rule_name(HF_RULE_SLICES);
    }
    /* (e), for the reported bound only (hf_bounds_lower_info): its limit targets cost a
     * face accounting each, too much for the search's many calls on limit targets */
    if (disjoint) {
        HF_CHECK(err, lb_ends(&cx, t, 1, c), cleanup);
        if (fmpz_cmp(c, lb) > 0) {
            fmpz_set(lb, c);
            rule = hf_rule_name(HF_RULE_END_SLICES);
        }
    }
    if (info) {
        fmpz_set(info->slices, s);
        fmpz_set(info->lb, lb);
        info->rule = rule;
        info->newton_known = known;
        if (known)
            fmpz_set(info->newton_vertices, v);
        else
            fmpz_zero(info->newton_vertices);
        info->complete = *complete;
    }
cleanup:
    lb_ctx_clear(&cx);
cleanup0:
    fmpz_clear(s);
    fmpz_clear(c);
    fmpz_clear(v);
    return err;
}

hf_err_t hf_bounds_lower_info(const hf_target_t *t, hf_lower_t *out)
{
    int complete;
    fmpz_t lb;
    fmpz_init(lb);
    hf_err_t err = lb_best(t, 1, out, lb, &complete);
    fmpz_clear(lb);
    return err;
}

hf_err_t hf_bounds_lower(const hf_target_t *t, fmpz_t lb)
{
    int complete;
    return hf_bounds_lower_ex(t, lb, &complete);
}

hf_err_t hf_bounds_lower_ex(const hf_target_t *t, fmpz_t lb, int *complete)
{
    return lb_best(t, 0, NULL, lb, complete);
}

/* One of the internal variants in a fresh context: newton = 0 for the face rule alone. */
typedef hf_err_t (*lb_variant_t)(lb_ctx_t *cx, const hf_target_t *t, fmpz_t out, int *flag);

static hf_err_t lb_run(const hf_target_t *t, int newton, lb_variant_t fn, fmpz_t out, int *flag)
{
    hf_err_t err = HF_OK;
    lb_ctx_t cx;
    fmpz_one(out);
    *flag = 0;
    HF_TRY(hf_bounds_check_target(t, "lower bound"));
    HF_CHECK(err, lb_ctx_init(&cx, newton), cleanup);
    HF_CHECK(err, fn(&cx, t, out, flag), cleanup);
cleanup:
    lb_ctx_clear(&cx);
    return err;
}

static hf_err_t lb_face_rule_only(lb_ctx_t *cx, const hf_target_t *t, fmpz_t lb, int *complete)
{
    HF_TRY(lb_of_target(cx, t, 0, lb));
    *complete = !cx->truncated;
    return HF_OK;
}

hf_err_t hf_bounds_lower_face_rule(const hf_target_t *t, fmpz_t lb, int *complete)
{
    return lb_run(t, 0, lb_face_rule_only, lb, complete);
}

hf_err_t hf_bounds_lower_disjoint(const hf_target_t *t, fmpz_t out, int *done)
{
    return lb_run(t, 1, lb_disjoint_faces, out, done);
}
