/* The cone engine on a large row (docs/search.md, "Large rows"): the hyperplanes built from
 * the slices of P/Q each process holds, with what the exact test needs of each class of
 * box points, merged across the processes; a candidate face decided from its classes; the
 * order of two supports given by their multipliers.
 *
 * A box point k reached by Q + B_R has the row (Q_{k-r})_r; its hyperplane is that row
 * made primitive (cone.c). The points of one hyperplane h form a class: on every point of
 * the cone their rows are positive multiples of A_h, so a face either holds all of them
 * or none. What a support's exact test needs of a class (docs/exact-test.md §6c) is A_h
 * and the span of the numerators' rows (P_{j,k-r})_r over its points; the points that P
 * reaches and Q does not form one more class, never on a support, with its span. And what
 * the canonical check needs is whether some point of the class has a zero coordinate, per
 * coordinate. So the tables are a few rows per hyperplane, whatever the number of points:
 * they are built slice by slice, exchanged, merged, and put in the order of the
 * hyperplanes' smallest points, the order in which one process meets them in box order
 * (the ordinary rows' order, cone.c), so that the rays, units and supports do not depend on
 * the number of processes. */
#include <assert.h>
#include <stdlib.h>
#include <string.h>

#include <flint/fmpz_vec.h>

#include "search/cone_impl.h"

/* One process's tables while they grow (and the merged ones). */
typedef struct {
    long n;              /* unknowns */
    long nh, cap;        /* hyperplanes, room */
    fmpz *A;             /* cap x n: primitive rows */
    long *weight;        /* box points of each */
    uint64_t *minpt;     /* smallest box point of each */
    uint64_t *zmask;     /* bit a: some point of it has x_a = 0 */
    hf_rowspan_t *pspan; /* the numerators' rows at its points */
    hf_rowspan_t pfree;  /* the numerators' rows at the points Q does not reach */
    hf_index_t index;    /* hash of a row -> its hyperplane */
} cls_t;

static void cls_init(cls_t *T, long n)
{
    memset(T, 0, sizeof *T);
    T->n = n;
    hf_rowspan_init(&T->pfree, n);
    hf_index_init(&T->index);
}

static void cls_clear(cls_t *T)
{
    if (T->A)
        _fmpz_vec_clear(T->A, T->cap * T->n);
    for (long h = 0; h < T->nh; h++)
        hf_rowspan_clear(T->pspan + h);
    free(T->pspan);
    free(T->weight);
    free(T->minpt);
    free(T->zmask);
    hf_rowspan_clear(&T->pfree);
    hf_index_clear(&T->index);
    cls_init(T, T->n);
}

static uint64_t row_hash(const fmpz *a, long n)
{
    uint64_t h = HF_HASH_INIT;
    for (long i = 0; i < n; i++)
        h = hf_hash_word(h, fmpz_fdiv_ui(a + i, UINT64_C(0xFFFFFFFFFFFFFFC5)));
    return hf_hash_mix(h);
}

typedef struct {
    const cls_t *T;
    const fmpz *row;
} cls_key_t;

static int cls_eq(const void *ctx, long h)
{
    const cls_key_t *k = ctx;
    return _fmpz_vec_equal(k->T->A + h * k->T->n, k->row, k->T->n);
}

/* The hyperplane of primitive row `row`, added (weight 0, no point) when new. */
static hf_err_t cls_find(cls_t *T, const fmpz *row, long *out)
{
    long n = T->n;
    uint64_t hsh = row_hash(row, n);
    cls_key_t key = {T, row};
    long h = hf_index_find(&T->index, hsh, cls_eq, &key);
    if (h < 0) {
        if (T->nh == T->cap) {
            long cap = T->cap ? 2 * T->cap : 64;
            fmpz *A = _fmpz_vec_init(cap * n);
            for (long i = 0; i < T->nh * n; i++)
                fmpz_swap(A + i, T->A + i);
            if (T->A)
                _fmpz_vec_clear(T->A, T->cap * n);
            T->A = A;
            long c2 = T->cap, c3 = T->cap, c4 = T->cap;
            HF_TRY(HF_GROW(&T->weight, &c2, cap));
            HF_TRY(HF_GROW(&T->minpt, &c3, cap));
            HF_TRY(HF_GROW(&T->zmask, &c4, cap));
            hf_rowspan_t *ps = hf_realloc(T->pspan, (size_t)cap * sizeof *ps);
            if (!ps)
                return HF_ERR_NOMEM;
            T->pspan = ps;
            T->cap = cap;
        }
        h = T->nh;
        _fmpz_vec_set(T->A + h * n, row, n);
        T->weight[h] = 0;
        T->minpt[h] = UINT64_MAX;
        T->zmask[h] = 0;
        hf_rowspan_init(T->pspan + h, n);
        HF_TRY(hf_index_add(&T->index, hsh, h));
        T->nh++;
    }
    *out = h;
    return HF_OK;
}

/* ------------------------------------------------------------------ one slice */

/* The classes of one slice's points (Q and P of the slice, in t's d variables), added to T.
 * Every process runs it on its own slices. */
static hf_err_t cls_scan(cls_t *T, const hf_search_t *s, const hf_fraction_t *f,
                         const int64_t *brad)
{
    int dv = s->dv;
    long n = T->n;
    hf_err_t err = HF_OK;
    hf_shifted_t w;
    fmpz *row = _fmpz_vec_init((dv + 1) * n);
    char *touched = hf_calloc((size_t)dv + 1, 1);
    fmpz_t g;
    fmpz_init(g);
    err = touched ? hf_shifted_init(&w, s, f, NULL, n, brad) : HF_ERR_NOMEM;
    unsigned long polls = 0;
    uint64_t k, zb;
    long nh;
    while (err == HF_OK && (nh = hf_shifted_next(&w, &k, &zb)) > 0) {
        HF_CHECK(err, hf_search_stop_every(&polls, 14, HF_STOP_ROWS), done);
        /* every unknown r meets term t of polynomial p at k */
        for (long i = 0; i < nh; i++) {
            const hf_shifted_hit_t *h = w.hits + i;
            fmpz_set(row + h->p * n + h->r, w.coef[h->p] + h->t);
            touched[h->p] = 1;
        }
        hf_rowspan_t *span = &T->pfree;
        if (touched[0]) {
            long h;
            _fmpz_vec_content(g, row, n);
            _fmpz_vec_scalar_divexact_fmpz(row, row, n, g);
            HF_CHECK(err, cls_find(T, row, &h), done);
            T->weight[h]++;
            T->minpt[h] = k < T->minpt[h] ? k : T->minpt[h];
            T->zmask[h] |= zb;
            span = T->pspan + h;
        }
        for (int j = 0; j < dv; j++)
            if (touched[1 + j]) {
                int grew;
                HF_CHECK(err, hf_rowspan_add(span, row + (1 + j) * n, &grew), done);
            }
        _fmpz_vec_zero(row, (dv + 1) * n);
        memset(touched, 0, (size_t)dv + 1);
    }
done:
    if (touched)
        hf_shifted_clear(&w);
    fmpz_clear(g);
    free(touched);
    _fmpz_vec_clear(row, (dv + 1) * n);
    return err;
}

/* ------------------------------------------------------------------ exchange and merge */

static hf_err_t put_span(hf_bytes_t *b, const hf_rowspan_t *sp)
{
    HF_TRY(hf_bytes_put_varint(b, (uint64_t)sp->rank));
    for (long i = 0; i < sp->rank * sp->n; i++)
        HF_TRY(hf_bytes_put_fmpz(b, sp->rows + i));
    return HF_OK;
}

/* The tables as bytes: hyperplanes (row, weight, smallest point, zero mask, span), then the
 * span of the points Q does not reach. */
static hf_err_t cls_encode(const cls_t *T, hf_bytes_t *b)
{
    HF_TRY(hf_bytes_put_varint(b, (uint64_t)T->nh));
    for (long h = 0; h < T->nh; h++) {
        for (long i = 0; i < T->n; i++)
            HF_TRY(hf_bytes_put_fmpz(b, T->A + h * T->n + i));
        HF_TRY(hf_bytes_put_varint(b, (uint64_t)T->weight[h]));
        HF_TRY(hf_bytes_put(b, T->minpt + h, sizeof *T->minpt));
        HF_TRY(hf_bytes_put(b, T->zmask + h, sizeof *T->zmask));
        HF_TRY(put_span(b, T->pspan + h));
    }
    return put_span(b, &T->pfree);
}

static hf_err_t bad_bytes(void)
{
    return hf_error(HF_ERR_INTERNAL, "large row: damaged class tables from another process");
}

static hf_err_t get_span_into(hf_bytes_reader_t *r, hf_rowspan_t *sp, fmpz *v)
{
    uint64_t rank;
    if (!hf_bytes_get_varint(r, &rank) || rank > (uint64_t)sp->n)
        return bad_bytes();
    for (uint64_t i = 0; i < rank; i++) {
        for (long x = 0; x < sp->n; x++)
            if (!hf_bytes_get_fmpz(r, v + x))
                return bad_bytes();
        int grew;
        HF_TRY(hf_rowspan_add(sp, v, &grew));
    }
    return HF_OK;
}

/* Add one process's encoded tables to T. */
static hf_err_t cls_merge(cls_t *T, hf_bytes_reader_t *r)
{
    long n = T->n;
    uint64_t nh;
    fmpz *v = _fmpz_vec_init(n);
    hf_err_t err = hf_bytes_get_varint(r, &nh) ? HF_OK : bad_bytes();
    for (uint64_t i = 0; err == HF_OK && i < nh; i++) {
        uint64_t wt, mp, zm;
        long h;
        for (long x = 0; x < n && err == HF_OK; x++)
            if (!hf_bytes_get_fmpz(r, v + x))
                err = bad_bytes();
        if (err == HF_OK && (!hf_bytes_get_varint(r, &wt) || !hf_bytes_get(r, &mp, sizeof mp) ||
                             !hf_bytes_get(r, &zm, sizeof zm)))
            err = bad_bytes();
        if (err == HF_OK)
            err = cls_find(T, v, &h);
        if (err != HF_OK)
            break;
        T->weight[h] += (long)wt;
        T->minpt[h] = mp < T->minpt[h] ? mp : T->minpt[h];
        T->zmask[h] |= zm;
        err = get_span_into(r, T->pspan + h, v);
    }
    if (err == HF_OK)
        err = get_span_into(r, &T->pfree, v);
    _fmpz_vec_clear(v, n);
    return err;
}

/* ------------------------------------------------------------------ into the cone */

static int cmp_minpt(const void *ctx, long a, long b)
{
    const uint64_t *mp = ctx;
    return (mp[a] > mp[b]) - (mp[a] < mp[b]);
}

/* The merged tables into the cone, hyperplanes in the order of their smallest points. */
static hf_err_t cls_install(cls_t *T, hf_cone_t *c)
{
    long n = T->n, nh = T->nh;
    long *ord = hf_malloc((size_t)(nh ? nh : 1) * sizeof *ord);
    c->weight = hf_calloc((size_t)(nh ? nh : 1), sizeof *c->weight);
    c->minpt = hf_malloc((size_t)(nh ? nh : 1) * sizeof *c->minpt);
    c->zmask = hf_malloc((size_t)(nh ? nh : 1) * sizeof *c->zmask);
    c->pspan = hf_malloc(((size_t)nh + 1) * sizeof *c->pspan);
    if (!ord || !c->weight || !c->minpt || !c->zmask || !c->pspan) {
        free(ord);
        return HF_ERR_NOMEM;
    }
    for (long h = 0; h < nh; h++)
        ord[h] = h;
    hf_err_t err = hf_sort(ord, nh, cmp_minpt, T->minpt);
    if (err != HF_OK) {
        free(ord);
        return err;
    }
    c->A = _fmpz_vec_init((nh ? nh : 1) * n);
    long rows = 0;
    for (long i = 0; i < nh; i++) {
        long h = ord[i];
        _fmpz_vec_swap(c->A + i * n, T->A + h * n, n);
        c->weight[i] = T->weight[h];
        c->minpt[i] = T->minpt[h];
        c->zmask[i] = T->zmask[h];
        c->pspan[i] = T->pspan[h]; /* moved: T keeps the empty span */
        hf_rowspan_init(T->pspan + h, n);
        hf_rowspan_canonical(c->pspan + i);
        rows += c->weight[i];
    }
    c->pspan[nh] = T->pfree;
    hf_rowspan_init(&T->pfree, n);
    hf_rowspan_canonical(c->pspan + nh);
    c->nh = nh;
    c->words = (nh + 63) / 64;
    c->info.rows = rows;
    c->info.hyperplanes = nh;
    free(ord);
    return HF_OK;
}

hf_err_t hf_cone_classes(hf_search_t *s, hf_cone_t *c, const hf_search_split_t *sp, hf_err_t err)
{
    int d = s->d;
    int64_t brad[HF_D_MAX];
    long n = hf_search_rbox_size(s->qext, d, s->span);
    for (int a = 0; a < d; a++)
        brad[a] = s->span - s->qext[a] + 1;
    c->n = n;
    c->info.unknowns = n;
    cls_t T;
    cls_init(&T, n);
    const hf_fraction_t *part;
    long nparts = hf_search_large_slices(s, &part);
    for (long i = 0; i < nparts && err == HF_OK; i++)
        err = cls_scan(&T, s, part + i, brad);
    if (sp && sp->nranks > 1) {
        /* every process's tables to every process: each merges them in process order */
        hf_bytes_t b = {0};
        if (err == HF_OK)
            err = cls_encode(&T, &b);
        void *all = NULL;
        size_t alllen = 0;
        err = sp->allgather(sp->ctx, err, b.buf, (size_t)(err == HF_OK ? b.len : 0), &all, &alllen);
        free(b.buf);
        cls_clear(&T);
        cls_init(&T, n);
        hf_bytes_reader_t r = {all, (const unsigned char *)all + alllen};
        while (err == HF_OK && r.at < r.end)
            err = cls_merge(&T, &r);
        free(all);
    }
    if (err == HF_OK)
        err = cls_install(&T, c);
    cls_clear(&T);
    return err;
}

void hf_cone_classes_free(hf_cone_t *c)
{
    if (c->pspan)
        for (long h = 0; h <= c->nh; h++)
            hf_rowspan_clear(c->pspan + h);
    free(c->pspan);
    free(c->minpt);
    free(c->zmask);
    c->pspan = NULL;
    c->minpt = c->zmask = NULL;
}

/* ------------------------------------------------------------------ candidates */

hf_err_t hf_cone_classes_test(hf_search_t *s, const hf_cone_t *c, long m, const uint64_t *U,
                              hf_run_t *run)
{
    long n = c->n, nh = c->nh, npos = 0;
    uint64_t zero = 0;
    for (long h = 0; h < nh; h++)
        if (bit_get(U, h))
            zero |= c->zmask[h];
    int go = 0;
    HF_TRY(hf_search_candidate_begin(s, m, run, zero, &go));
    if (!go)
        return HF_OK;
    /* the equalities: the classes off the support (their rows and their numerators'
     * rows) and the points only P reaches; the inequalities: one row per class on it */
    hf_rowspan_t eq;
    hf_rowspan_init(&eq, n);
    fmpz *pos = NULL;
    hf_err_t err = HF_OK;
    int grew;
    for (long h = 0; h <= nh && err == HF_OK && eq.rank < n; h++) {
        const hf_rowspan_t *ps = c->pspan + h;
        if (h < nh && bit_get(U, h))
            continue;
        if (h < nh)
            err = hf_rowspan_add(&eq, c->A + h * n, &grew);
        for (long i = 0; i < ps->rank && err == HF_OK; i++)
            err = hf_rowspan_add(&eq, ps->rows + i * n, &grew);
    }
    if (err == HF_OK && eq.rank < n) {
        for (long h = 0; h < nh; h++)
            npos += bit_get(U, h);
        pos = _fmpz_vec_init(npos * n);
        long i = 0;
        for (long h = 0; h < nh; h++)
            if (bit_get(U, h))
                _fmpz_vec_set(pos + (i++) * n, c->A + h * n, n);
    }
    if (err == HF_OK)
        err = hf_search_candidate_rows(s, m, run, &eq, pos, npos);
    if (pos)
        _fmpz_vec_clear(pos, npos * n);
    hf_rowspan_clear(&eq);
    return err;
}

/* The hyperplanes where R's value is positive: the classes of supp(Q R), as a bitset. */
static hf_err_t classes_of(const hf_cone_t *c, const fmpz *R, uint64_t *U)
{
    fmpz_t v;
    fmpz_init(v);
    memset(U, 0, (size_t)c->words * sizeof *U);
    for (long h = 0; h < c->nh; h++) {
        _fmpz_vec_dot(v, c->A + h * c->n, R, c->n);
        if (fmpz_sgn(v) > 0)
            bit_set(U, h);
    }
    fmpz_clear(v);
    return HF_OK;
}

hf_err_t hf_cone_classes_cmp(const hf_cone_t *c, const fmpz *ra, const fmpz *rb, int *cmp)
{
    uint64_t *ua = hf_calloc((size_t)(c->words ? c->words : 1), sizeof *ua);
    uint64_t *ub = hf_calloc((size_t)(c->words ? c->words : 1), sizeof *ub);
    if (!ua || !ub) {
        free(ua);
        free(ub);
        return HF_ERR_NOMEM;
    }
    classes_of(c, ra, ua);
    classes_of(c, rb, ub);
    /* sorted key lists differ first at the smallest point of their symmetric difference,
     * and the list that holds it is the smaller (docs/search.md, "Large rows") */
    long first = -1;
    for (long h = 0; h < c->nh; h++)
        if (bit_get(ua, h) != bit_get(ub, h) && (first < 0 || c->minpt[h] < c->minpt[first]))
            first = h;
    *cmp = first < 0 ? 0 : bit_get(ua, first) ? -1 : 1;
    free(ua);
    free(ub);
    return HF_OK;
}
