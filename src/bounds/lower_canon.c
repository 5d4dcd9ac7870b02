/* The lower bound's targets (lower.c) in a compact form with sparse keys (only nonzero
 * coordinates), so that W_64 and its limits cost little, and their canonical form, the key
 * of the memo: heads shifted, merged, normalised and sorted, unused coordinates dropped and
 * the whole scaled (docs/bounds.md explains the canonical form); the conversions to and
 * from hf_target_t. */
#include <stdlib.h>
#include <string.h>

#include <flint/fmpq_vec.h>

#include "bounds/lower_impl.h"

/* ------------------------------------------------------------------ storage */

void hf_lb_tgt_zero(lb_tgt_t *T)
{
    memset(T, 0, sizeof *T);
}

void hf_lb_tgt_clear(lb_tgt_t *T)
{
    if (T->w)
        _fmpq_vec_clear(T->w, T->cap_atoms);
    if (T->v)
        _fmpq_vec_clear(T->v, T->cap_atoms * T->dv);
    free(T->kval);
    free(T->kidx);
    free(T->kstart);
    free(T->hstart);
    hf_lb_tgt_zero(T);
}

/* Room for up to `heads` heads, `atoms` atoms and `nnz` key entries (nnz may grow). */
static hf_err_t lb_tgt_alloc(lb_tgt_t *T, int d, int dv, int heads, long atoms, long nnz)
{
    hf_lb_tgt_zero(T);
    T->d = d;
    T->dv = dv;
    T->cap_atoms = atoms > 0 ? atoms : 1;
    T->cap_nnz = nnz > 0 ? nnz : 1;
    T->hstart = hf_malloc((size_t)(heads + 1) * sizeof *T->hstart);
    T->kstart = hf_malloc((size_t)(T->cap_atoms + 1) * sizeof *T->kstart);
    T->kidx = hf_malloc((size_t)T->cap_nnz * sizeof *T->kidx);
    T->kval = hf_malloc((size_t)T->cap_nnz * sizeof *T->kval);
    if (!T->hstart || !T->kstart || !T->kidx || !T->kval) {
        hf_lb_tgt_clear(T);
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
    hf_lb_tgt_zero(dst);
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
        hf_lb_tgt_clear(dst);
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

hf_err_t hf_lb_canon(lb_ctx_t *cx, const lb_tgt_t *T, const unsigned char *sel, lb_tgt_t *out,
                     hf_bounds_buf_t *ser)
{
    hf_err_t err = HF_OK;
    int dv = T->dv;
    long nsel = 0, maxhead = 0;
    lb_tgt_t tmp, tmp2;
    fmpq *scratch = _fmpq_vec_init(dv);
    hf_lb_tgt_zero(&tmp);
    hf_lb_tgt_zero(&tmp2);
    hf_lb_tgt_zero(out);
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
            hf_lb_tgt_clear(out);
            *out = tmp2;
            hf_lb_tgt_zero(&tmp2);
        }
        break;
    }
cleanup:
    if (err != HF_OK)
        hf_lb_tgt_clear(out);
    hf_lb_tgt_clear(&tmp2);
    hf_lb_tgt_clear(&tmp);
    _fmpq_vec_clear(scratch, dv);
    return err;
}

hf_err_t hf_lb_from_target(const hf_target_t *t, lb_tgt_t *T)
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

hf_err_t hf_lb_to_target(const lb_tgt_t *C, hf_target_t *t)
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
