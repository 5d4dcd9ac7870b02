/* Newton polytopes of targets whose heads have their keys on lines (docs/math.md §5.7) and
 * regions of central hyperplane arrangements (docs/bounds.md, "Counting at large d").
 *
 * Line decomposition. A head whose keys are k_0 + t_i u (u primitive) is, up to the
 * monomial x^k_0 in N and D alike, a univariate fraction in y = x^u. Heads are grouped
 * by the line (u and -u are one line: u is taken with its first nonzero coordinate
 * positive) and each group is summed and reduced as a univariate fraction a_u/q_u over
 * Q (FLINT fmpq_poly). The reduced denominator of the target is then prod_u q_u(x^u)
 * (proof in docs/math.md §5.7), so Newt(Q) is the zonotope sum_u [0, deg q_u] u.
 *
 * Regions. The vertices of a zonotope with generators g_i correspond to the regions of
 * the arrangement {x : g_i.x = 0}. Deletion-contraction: r(A) = r(A - v) + r(A / v)
 * where A / v is the arrangement induced on v's hyperplane, whose normals are the other
 * vectors modulo v; computed exactly on integers by x -> v_p x - x_p v (kernel Rv) and
 * dropping coordinate p. Parallel vectors are one hyperplane (deduplicated), blocks of
 * vectors on disjoint coordinates multiply, a vector alone on a coordinate is a coloop
 * (factor 2), rank-2 blocks of m lines have 2m regions; everything else is memoised on
 * the canonical configuration (primitive, sign-normalised, sorted vectors). */
#include <stdlib.h>
#include <string.h>

#include <flint/fmpq_poly.h>

#include "bounds/bounds_impl.h"

#define ARR_WORK_MAX 400000L  /* configurations counted before giving up */
#define ARR_MEMO_MAX 1000000L /* configurations remembered */
#define ARR_VECS_MAX 20000L   /* larger configurations are not attempted */

hf_err_t hf_bounds_arr_init(hf_bounds_arr_t *A)
{
    A->work = 0;
    A->work_max = ARR_WORK_MAX;
    hf_bounds_bytemap_init(&A->memo, ARR_MEMO_MAX);
    return HF_OK;
}

void hf_bounds_arr_clear(hf_bounds_arr_t *A)
{
    hf_bounds_bytemap_clear(&A->memo);
}

static hf_err_t arr_count(hf_bounds_arr_t *A, int64_t *vecs, long m, int n, fmpz_t count,
                          int *known);

/* A connected block: every coordinate used, vectors primitive, sign-normalised, sorted
 * and distinct. */
static hf_err_t arr_block(hf_bounds_arr_t *A, const int64_t *vecs, long m, int n, fmpz_t count,
                          int *known)
{
    hf_err_t err = HF_OK;
    hf_bounds_buf_t key = {0};
    int64_t *w = NULL;
    fmpz_t a;
    fmpz_init(a);
    if (m == 1 || n == 1) {
        fmpz_set_ui(count, 2);
        goto cleanup;
    }
    if (n == 2) { /* m distinct lines through the origin of the plane */
        fmpz_set_si(count, 2 * m);
        goto cleanup;
    }
    HF_CHECK(err, hf_bounds_buf_i64(&key, n), cleanup);
    HF_CHECK(err, hf_bounds_buf_put(&key, vecs, (size_t)m * n * sizeof *vecs), cleanup);
    hf_bounds_bytemap_entry_t *e = hf_bounds_bytemap_get(&A->memo, key.p, key.n);
    if (e) {
        fmpz_set(count, &e->val);
        goto cleanup;
    }
    if (++A->work > A->work_max) {
        *known = 0;
        goto cleanup;
    }
    /* the coordinate used by the fewest vectors; a vector alone there is a coloop */
    int best = 0;
    long bestuse = m + 1;
    for (int j = 0; j < n; j++) {
        long use = 0;
        for (long i = 0; i < m; i++)
            use += vecs[i * n + j] != 0;
        if (use < bestuse) {
            bestuse = use;
            best = j;
        }
    }
    /* among the vectors using it: the smallest support, then the smallest |entry| */
    long pick = -1;
    int picksupp = n + 1;
    int64_t pickabs = INT64_MAX;
    for (long i = 0; i < m; i++) {
        int64_t x = vecs[i * n + best];
        if (!x)
            continue;
        int supp = 0;
        for (int j = 0; j < n; j++)
            supp += vecs[i * n + j] != 0;
        int64_t ax = x < 0 ? -x : x;
        if (supp < picksupp || (supp == picksupp && ax < pickabs)) {
            pick = i;
            picksupp = supp;
            pickabs = ax;
        }
    }
    w = hf_malloc((size_t)m * n * sizeof *w);
    if (!w) {
        err = HF_ERR_NOMEM;
        goto cleanup;
    }
    /* deletion: the other vectors */
    long k = 0;
    for (long i = 0; i < m; i++)
        if (i != pick)
            memcpy(w + k++ * n, vecs + i * n, (size_t)n * sizeof *w);
    HF_CHECK(err, arr_count(A, w, m - 1, n, count, known), cleanup);
    if (!*known)
        goto cleanup;
    if (bestuse == 1) { /* coloop: the contraction is the deletion */
        fmpz_mul_ui(count, count, 2);
    } else {
        /* contraction by v on its smallest nonzero entry p: x -> v_p x - x_p v */
        const int64_t *v = vecs + pick * n;
        int p = -1;
        for (int j = 0; j < n; j++)
            if (v[j] && (p < 0 || (v[j] < 0 ? -v[j] : v[j]) < (v[p] < 0 ? -v[p] : v[p])))
                p = j;
        k = 0;
        for (long i = 0; i < m; i++) {
            if (i == pick)
                continue;
            const int64_t *x = vecs + i * n;
            int c = 0;
            for (int j = 0; j < n; j++) {
                if (j == p)
                    continue;
                int64_t s, t;
                if (__builtin_mul_overflow(v[p], x[j], &s) ||
                    __builtin_mul_overflow(x[p], v[j], &t) || __builtin_sub_overflow(s, t, &s)) {
                    *known = 0;
                    goto cleanup;
                }
                w[k * (n - 1) + c++] = s;
            }
            k++;
        }
        HF_CHECK(err, arr_count(A, w, m - 1, n - 1, a, known), cleanup);
        if (!*known)
            goto cleanup;
        fmpz_add(count, count, a);
    }
    HF_CHECK(err, hf_bounds_bytemap_put(&A->memo, key.p, key.n, count), cleanup);
cleanup:
    free(w);
    hf_bounds_buf_clear(&key);
    fmpz_clear(a);
    return err;
}

static int arr_find(int *parent, int i)
{
    while (parent[i] != i) {
        parent[i] = parent[parent[i]];
        i = parent[i];
    }
    return i;
}

/* Any configuration (vecs is scratch: normalised in place). */
static hf_err_t arr_count(hf_bounds_arr_t *A, int64_t *vecs, long m, int n, fmpz_t count,
                          int *known)
{
    hf_err_t err = HF_OK;
    long *order = NULL;
    int64_t *blk = NULL;
    int *parent = NULL, *cmap = NULL;
    fmpz_t c;
    fmpz_init(c);
    fmpz_one(count);
    /* primitive, first nonzero positive, zero vectors dropped */
    long k = 0;
    for (long i = 0; i < m; i++) {
        int64_t *x = vecs + i * n, g = 0;
        int first = -1;
        for (int j = 0; j < n; j++) {
            g = hf_gcd64(g, x[j]);
            if (first < 0 && x[j])
                first = j;
        }
        if (!g)
            continue;
        if (x[first] < 0)
            g = -g;
        for (int j = 0; j < n; j++)
            vecs[k * n + j] = x[j] / g;
        k++;
    }
    m = k;
    if (m == 0)
        goto cleanup;
    order = hf_malloc((size_t)m * sizeof *order);
    blk = hf_malloc((size_t)m * n * sizeof *blk);
    parent = hf_malloc((size_t)n * sizeof *parent);
    cmap = hf_malloc((size_t)n * sizeof *cmap);
    if (!order || !blk || !parent || !cmap) {
        err = HF_ERR_NOMEM;
        goto cleanup;
    }
    for (long i = 0; i < m; i++)
        order[i] = i;
    hf_rows_t o = {vecs, n};
    if (hf_sort(order, m, hf_cmp_rows, &o) != HF_OK) {
        err = HF_ERR_NOMEM;
        goto cleanup;
    }
    /* blocks: coordinates joined by a vector using both */
    for (int j = 0; j < n; j++)
        parent[j] = j;
    for (long i = 0; i < m; i++) {
        int first = -1;
        for (int j = 0; j < n; j++) {
            if (!vecs[i * n + j])
                continue;
            if (first < 0) {
                first = j;
                continue;
            }
            int a = arr_find(parent, first), b = arr_find(parent, j);
            if (a != b)
                parent[b] = a;
        }
    }
    for (int root = 0; root < n; root++) {
        if (arr_find(parent, root) != root)
            continue;
        /* this block's coordinates and its distinct vectors, in sorted order */
        int nc = 0;
        for (int j = 0; j < n; j++)
            cmap[j] = arr_find(parent, j) == root ? nc++ : -1;
        long bm = 0;
        for (long r = 0; r < m; r++) {
            const int64_t *x = vecs + order[r] * n;
            int first = 0;
            while (!x[first])
                first++;
            if (cmap[first] < 0)
                continue;
            if (r > 0 && hf_cmp_rows(&o, order[r - 1], order[r]) == 0)
                continue; /* parallel to the previous one: the same hyperplane */
            for (int j = 0; j < n; j++)
                if (cmap[j] >= 0)
                    blk[bm * nc + cmap[j]] = x[j];
            bm++;
        }
        if (bm == 0)
            continue; /* a coordinate no vector uses */
        HF_CHECK(err, arr_block(A, blk, bm, nc, c, known), cleanup);
        if (!*known)
            goto cleanup;
        fmpz_mul(count, count, c);
    }
cleanup:
    if (!*known)
        fmpz_zero(count);
    free(cmap);
    free(parent);
    free(blk);
    free(order);
    fmpz_clear(c);
    return err;
}

hf_err_t hf_bounds_arr_regions(hf_bounds_arr_t *A, const int64_t *vecs, long m, int n, fmpz_t count,
                               int *known)
{
    *known = 1;
    fmpz_zero(count);
    if (m > ARR_VECS_MAX || n < 1) {
        *known = m == 0;
        if (*known)
            fmpz_one(count);
        return HF_OK;
    }
    int64_t *w = hf_malloc((size_t)(m ? m : 1) * n * sizeof *w);
    if (!w)
        return HF_ERR_NOMEM;
    if (m)
        memcpy(w, vecs, (size_t)m * n * sizeof *w);
    hf_err_t err = arr_count(A, w, m, n, count, known);
    free(w);
    return err;
}

/* ------------------------------------------------------------------ line heads */

/* If the keys of h lie on a line k_0 + t u: u primitive with its first nonzero
 * coordinate positive, t[natoms] the positions. 0 if not (or all keys are equal). */
static int line_of_head(const hf_head_t *h, int64_t *u, int64_t *t)
{
    int d = h->d, p = -1;
    const int64_t *k0 = h->keys;
    int64_t g = 0;
    for (long a = 1; a < h->natoms && p < 0; a++) {
        g = 0;
        for (int j = 0; j < d; j++)
            g = hf_gcd64(g, h->keys[a * d + j] - k0[j]);
        if (!g)
            continue;
        for (int j = 0; j < d; j++)
            u[j] = (h->keys[a * d + j] - k0[j]) / g;
        for (int j = 0; j < d && p < 0; j++)
            if (u[j])
                p = j;
    }
    if (p < 0)
        return 0;
    if (u[p] < 0)
        for (int j = 0; j < d; j++)
            u[j] = -u[j];
    for (long a = 0; a < h->natoms; a++) {
        int64_t dp = h->keys[a * d + p] - k0[p];
        if (dp % u[p])
            return 0;
        t[a] = dp / u[p];
        for (int j = 0; j < d; j++)
            if (h->keys[a * d + j] - k0[j] != t[a] * u[j])
                return 0;
    }
    return 1;
}

/* Running sum of one line's heads: numerators P[dv] over Q, reduced. */
typedef struct {
    fmpq_poly_t Q;
    fmpq_poly_struct *P;
} line_group_t;

/* P/Q += N/D, then divide out gcd(Q, P_1..P_dv). */
static void line_group_add(line_group_t *g, const fmpq_poly_struct *N, const fmpq_poly_t D, int dv)
{
    fmpq_poly_t G, Qg, Dg, T;
    fmpq_poly_init(G);
    fmpq_poly_init(Qg);
    fmpq_poly_init(Dg);
    fmpq_poly_init(T);
    fmpq_poly_gcd(G, g->Q, D);
    fmpq_poly_div(Qg, g->Q, G);
    fmpq_poly_div(Dg, D, G);
    for (int j = 0; j < dv; j++) {
        fmpq_poly_mul(g->P + j, g->P + j, Dg);
        fmpq_poly_mul(T, N + j, Qg);
        fmpq_poly_add(g->P + j, g->P + j, T);
    }
    fmpq_poly_mul(g->Q, g->Q, Dg);
    fmpq_poly_set(G, g->Q);
    for (int j = 0; j < dv && fmpq_poly_degree(G) > 0; j++)
        fmpq_poly_gcd(G, G, g->P + j);
    if (fmpq_poly_degree(G) > 0) {
        fmpq_poly_div(g->Q, g->Q, G);
        for (int j = 0; j < dv; j++)
            fmpq_poly_div(g->P + j, g->P + j, G);
    }
    fmpq_poly_clear(T);
    fmpq_poly_clear(Dg);
    fmpq_poly_clear(Qg);
    fmpq_poly_clear(G);
}

/* The head as D(y) = sum c_a y^(t_a - tmin), N_j(y) = sum c_a v_aj y^(t_a - tmin). */
static void line_head_fraction(const hf_head_t *h, const int64_t *t, fmpq_poly_struct *N,
                               fmpq_poly_t D)
{
    int dv = h->dv;
    int64_t tmin = t[0];
    fmpq_t c, x;
    fmpq_init(c);
    fmpq_init(x);
    for (long a = 1; a < h->natoms; a++)
        if (t[a] < tmin)
            tmin = t[a];
    fmpq_poly_zero(D);
    for (int j = 0; j < dv; j++)
        fmpq_poly_zero(N + j);
    for (long a = 0; a < h->natoms; a++) {
        slong e = (slong)(t[a] - tmin);
        fmpq_poly_get_coeff_fmpq(c, D, e);
        fmpq_add(c, c, h->weights + a);
        fmpq_poly_set_coeff_fmpq(D, e, c);
        for (int j = 0; j < dv; j++) {
            fmpq_poly_get_coeff_fmpq(c, N + j, e);
            fmpq_mul(x, h->weights + a, h->values + a * dv + j);
            fmpq_add(c, c, x);
            fmpq_poly_set_coeff_fmpq(N + j, e, c);
        }
    }
    fmpq_clear(x);
    fmpq_clear(c);
}

void hf_bounds_lines_init(hf_bounds_lines_t *L, int d)
{
    L->d = d;
    L->m = 0;
    L->u = NULL;
    L->q = NULL;
    L->mask = NULL;
}

void hf_bounds_lines_clear(hf_bounds_lines_t *L)
{
    for (long i = 0; i < L->m; i++)
        fmpq_poly_clear(L->q + i);
    free(L->q);
    free(L->mask);
    free(L->u);
    hf_bounds_lines_init(L, L->d);
}

hf_err_t hf_bounds_line_factors(const hf_target_t *t, const int *heads, int nh, int *all_lines,
                                hf_bounds_lines_t *L)
{
    hf_err_t err = HF_OK;
    int d = t->d, dv = t->dv;
    hf_ivset_t dirs;
    line_group_t *groups = NULL;
    long ng = 0, cap = 0, maxatoms = 1;
    int64_t u[HF_D_MAX];
    int64_t *pos = NULL;
    fmpq_poly_struct *N = NULL;
    fmpq_poly_t D;
    int added;
    hf_bounds_lines_clear(L);
    L->d = d;
    *all_lines = 1;
    fmpq_poly_init(D);
    memset(&dirs, 0, sizeof dirs);
    for (int k = 0; k < nh; k++)
        if (t->heads[heads[k]].natoms > maxatoms)
            maxatoms = t->heads[heads[k]].natoms;
    pos = hf_malloc((size_t)maxatoms * sizeof *pos);
    N = hf_malloc((size_t)dv * sizeof *N);
    if (N)
        for (int j = 0; j < dv; j++)
            fmpq_poly_init(N + j);
    if (!pos || !N) {
        err = HF_ERR_NOMEM;
        goto cleanup;
    }
    HF_CHECK(err, hf_ivset_init(&dirs, d), cleanup);
    for (int k = 0; k < nh; k++) {
        const hf_head_t *h = t->heads + heads[k];
        if (hf_bounds_head_is_constant(h))
            continue;
        if (!line_of_head(h, u, pos)) {
            *all_lines = 0;
            goto cleanup;
        }
        long gi = hf_ivset_insert(&dirs, u, &added);
        if (gi < 0) {
            err = HF_ERR_NOMEM;
            goto cleanup;
        }
        if (added) {
            HF_CHECK(err, HF_GROW(&groups, &cap, ng + 1), cleanup);
            line_group_t *g = groups + ng;
            g->P = hf_malloc((size_t)dv * sizeof *g->P);
            if (!g->P) {
                err = HF_ERR_NOMEM;
                goto cleanup;
            }
            fmpq_poly_init(g->Q);
            fmpq_poly_one(g->Q);
            for (int j = 0; j < dv; j++)
                fmpq_poly_init(g->P + j);
            ng++;
        }
        line_head_fraction(h, pos, N, D);
        line_group_add(groups + gi, N, D, dv);
    }
    long nm = 0;
    for (long g = 0; g < ng; g++)
        nm += fmpq_poly_degree(groups[g].Q) >= 1;
    if (nm) {
        L->u = hf_malloc((size_t)nm * d * sizeof *L->u);
        L->q = hf_malloc((size_t)nm * sizeof *L->q);
        L->mask = hf_malloc((size_t)nm * sizeof *L->mask);
        if (!L->u || !L->q || !L->mask) {
            err = HF_ERR_NOMEM;
            goto cleanup;
        }
    }
    for (long g = 0; g < ng; g++) {
        if (fmpq_poly_degree(groups[g].Q) < 1)
            continue;
        long i = L->m++;
        memcpy(L->u + i * d, dirs.keys + g * d, (size_t)d * sizeof *L->u);
        fmpq_poly_init(L->q + i);
        fmpq_poly_swap(L->q + i, groups[g].Q);
        L->mask[i] = 0;
        for (int j = 0; j < d; j++)
            if (L->u[i * d + j])
                L->mask[i] |= UINT64_C(1) << j;
    }
cleanup:
    if (err != HF_OK || !*all_lines)
        hf_bounds_lines_clear(L);
    for (long g = 0; g < ng; g++) {
        for (int j = 0; j < dv; j++)
            fmpq_poly_clear(groups[g].P + j);
        free(groups[g].P);
        fmpq_poly_clear(groups[g].Q);
    }
    free(groups);
    hf_ivset_clear(&dirs);
    if (N)
        for (int j = 0; j < dv; j++)
            fmpq_poly_clear(N + j);
    free(N);
    free(pos);
    fmpq_poly_clear(D);
    return err;
}

hf_err_t hf_bounds_line_groups(const hf_target_t *t, const int *heads, int nh, int *all_lines,
                               int64_t **gens, long **lens, long *m)
{
    hf_bounds_lines_t L;
    hf_bounds_lines_init(&L, t->d);
    *gens = NULL;
    *lens = NULL;
    *m = 0;
    hf_err_t err = hf_bounds_line_factors(t, heads, nh, all_lines, &L);
    if (err == HF_OK && L.m) {
        *lens = hf_malloc((size_t)L.m * sizeof **lens);
        if (!*lens) {
            err = HF_ERR_NOMEM;
        } else {
            for (long i = 0; i < L.m; i++)
                (*lens)[i] = fmpq_poly_degree(L.q + i);
            *gens = L.u; /* handed over */
            L.u = NULL;
            *m = L.m;
        }
    }
    hf_bounds_lines_clear(&L);
    return err;
}

hf_err_t hf_bounds_line_generators(const hf_target_t *t, int *all_lines, int64_t **gens,
                                   long **lens, long *m)
{
    int *heads = hf_malloc((size_t)(t->nheads ? t->nheads : 1) * sizeof *heads);
    if (!heads)
        return HF_ERR_NOMEM;
    for (int h = 0; h < t->nheads; h++)
        heads[h] = h;
    hf_err_t err = hf_bounds_line_groups(t, heads, t->nheads, all_lines, gens, lens, m);
    free(heads);
    return err;
}
