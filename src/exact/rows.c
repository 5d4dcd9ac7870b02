/* The R-space test with its rows given directly (docs/exact-test.md §6c), and the span of a
 * set of integer rows that feeds it.
 *
 * A support K = supp(Q R) of a large row is a union of classes of box points: the points of
 * one class have rows (Q R)_k that are positive multiples of one primitive row (a hyperplane
 * of the cone engine), and the numerators' rows (P_j R)_k of a class span a subspace of Q^n.
 * Deciding K needs only, for the classes off K, the span of their Q-rows and P-rows (the
 * equalities), and for the classes on K their primitive Q-rows (the strict inequalities):
 * the same system as rspace.c's, each equality replaced by a basis of the equalities' span
 * and each inequality by one row of its class. So the decision costs a few rows of n
 * unknowns, whatever the size of K. */
#include <stdlib.h>
#include <string.h>

#include <flint/fmpq_vec.h>
#include <flint/fmpz_mat.h>
#include <flint/fmpz_vec.h>

#include "exact/exact_impl.h"

void hf_rowspan_init(hf_rowspan_t *s, long n)
{
    s->n = n;
    s->rank = 0;
    s->cap = 0;
    s->rows = NULL;
    s->pivot = NULL;
}

void hf_rowspan_clear(hf_rowspan_t *s)
{
    if (s->rows)
        _fmpz_vec_clear(s->rows, s->cap * s->n);
    free(s->pivot);
    hf_rowspan_init(s, s->n);
}

/* Room for one more row (rows grow by one: most spans of a large row hold one or two). */
static hf_err_t rowspan_room(hf_rowspan_t *s)
{
    if (s->rank < s->cap)
        return HF_OK;
    long cap = s->cap ? 2 * s->cap : 1;
    if (cap > s->n)
        cap = s->n;
    long *pv = hf_realloc(s->pivot, (size_t)cap * sizeof *pv);
    if (!pv)
        return HF_ERR_NOMEM;
    s->pivot = pv;
    fmpz *rows = _fmpz_vec_init(cap * s->n);
    for (long i = 0; i < s->rank * s->n; i++)
        fmpz_swap(rows + i, s->rows + i);
    if (s->rows)
        _fmpz_vec_clear(s->rows, s->cap * s->n);
    s->rows = rows;
    s->cap = cap;
    return HF_OK;
}

/* v = b[p] v - v[p] b for the basis row b with pivot p: v's entry p becomes zero and the
 * entries before p stay (b is zero there). */
static void eliminate(fmpz *v, const fmpz *b, long p, long n, fmpz_t x, fmpz_t y)
{
    fmpz_set(x, b + p);
    fmpz_set(y, v + p);
    _fmpz_vec_scalar_mul_fmpz(v, v, n, x);
    _fmpz_vec_scalar_submul_fmpz(v, b, n, y);
}

static void make_primitive(fmpz *v, long n, fmpz_t g)
{
    _fmpz_vec_content(g, v, n);
    if (!fmpz_is_zero(g) && !fmpz_is_one(g))
        _fmpz_vec_scalar_divexact_fmpz(v, v, n, g);
}

hf_err_t hf_rowspan_add(hf_rowspan_t *s, const fmpz *v, int *grew)
{
    long n = s->n;
    *grew = 0;
    if (s->rank == n || _fmpz_vec_is_zero(v, n))
        return HF_OK;
    fmpz *w = _fmpz_vec_init(n);
    fmpz_t x, y;
    fmpz_init(x);
    fmpz_init(y);
    _fmpz_vec_set(w, v, n);
    /* rows in increasing pivot order: eliminating one pivot never disturbs an earlier one */
    for (long i = 0; i < s->rank; i++)
        if (!fmpz_is_zero(w + s->pivot[i])) {
            eliminate(w, s->rows + i * n, s->pivot[i], n, x, y);
            make_primitive(w, n, x);
        }
    hf_err_t err = HF_OK;
    long q = 0;
    while (q < n && fmpz_is_zero(w + q))
        q++;
    if (q < n && (err = rowspan_room(s)) == HF_OK) {
        long at = s->rank;
        while (at > 0 && s->pivot[at - 1] > q)
            at--;
        for (long i = s->rank; i > at; i--) {
            _fmpz_vec_swap(s->rows + i * n, s->rows + (i - 1) * n, n);
            s->pivot[i] = s->pivot[i - 1];
        }
        _fmpz_vec_swap(s->rows + at * n, w, n);
        s->pivot[at] = q;
        s->rank++;
        *grew = 1;
    }
    fmpz_clear(y);
    fmpz_clear(x);
    _fmpz_vec_clear(w, n);
    return err;
}

void hf_rowspan_canonical(hf_rowspan_t *s)
{
    long n = s->n, r = s->rank;
    if (r == 0)
        return;
    fmpz_t x, y;
    fmpz_init(x);
    fmpz_init(y);
    /* echelon already: clear each pivot column above its pivot, last pivot first */
    for (long i = r - 1; i >= 0; i--) {
        fmpz *b = s->rows + i * n;
        make_primitive(b, n, x);
        if (fmpz_sgn(b + s->pivot[i]) < 0)
            _fmpz_vec_neg(b, b, n);
        for (long k = 0; k < i; k++) {
            fmpz *a = s->rows + k * n;
            if (fmpz_is_zero(a + s->pivot[i]))
                continue;
            eliminate(a, b, s->pivot[i], n, x, y);
            make_primitive(a, n, x);
            if (fmpz_sgn(a + s->pivot[k]) < 0)
                _fmpz_vec_neg(a, a, n);
        }
    }
    fmpz_clear(y);
    fmpz_clear(x);
}

int hf_rowspan_equal(const hf_rowspan_t *a, const hf_rowspan_t *b)
{
    if (a->n != b->n || a->rank != b->rank)
        return 0;
    for (long i = 0; i < a->rank; i++)
        if (a->pivot[i] != b->pivot[i])
            return 0;
    return _fmpz_vec_equal(a->rows, b->rows, a->rank * a->n);
}

hf_err_t hf_rowspan_copy(hf_rowspan_t *dst, const hf_rowspan_t *src)
{
    hf_rowspan_t t;
    hf_rowspan_init(&t, src->n);
    for (long i = 0; i < src->rank; i++) {
        hf_err_t err = rowspan_room(&t);
        if (err != HF_OK) {
            hf_rowspan_clear(&t);
            return err;
        }
        _fmpz_vec_set(t.rows + i * src->n, src->rows + i * src->n, src->n);
        t.pivot[i] = src->pivot[i];
        t.rank++;
    }
    hf_rowspan_clear(dst);
    *dst = t;
    return HF_OK;
}

/* The checks of a feasible R against every given row, in integers: an equality row that
 * does not vanish, or an inequality that is not positive, is an internal error (the
 * decision's own bug, never an answer). */
static int rows_hold(const hf_rowspan_t *eq, const fmpz *pos, long npos, const fmpz *R)
{
    long n = eq->n;
    fmpz_t s;
    fmpz_init(s);
    int ok = 1;
    for (long i = 0; i < eq->rank && ok; i++) {
        _fmpz_vec_dot(s, eq->rows + i * n, R, n);
        ok = fmpz_is_zero(s);
    }
    for (long i = 0; i < npos && ok; i++) {
        _fmpz_vec_dot(s, pos + i * n, R, n);
        ok = fmpz_sgn(s) > 0;
    }
    fmpz_clear(s);
    return ok;
}

hf_err_t hf_exact_span_decide(const hf_rowspan_t *eq, const fmpz *pos, long npos, int *feasible,
                              hf_reason_t *reason, fmpz *R)
{
    long n = eq->n;
    hf_err_t err = HF_OK;
    *feasible = 0;
    *reason = HF_REASON_NULLSPACE_Q;
    if (eq->rank == n)
        return HF_OK; /* only R = 0, which is positive nowhere */
    /* the canonical basis: the same span gives the same null space, so the same witness,
     * whatever order the rows came in (the number of ranks that gathered them) */
    hf_rowspan_t c;
    hf_rowspan_init(&c, n);
    HF_TRY(hf_rowspan_copy(&c, eq));
    hf_rowspan_canonical(&c);
    fmpz_mat_t M, X;
    fmpz_mat_init(M, c.rank ? c.rank : 1, n);
    fmpz_mat_init(X, n, n);
    for (long i = 0; i < c.rank; i++)
        _fmpz_vec_set(M->rows[i], c.rows + i * n, n);
    long r = fmpz_mat_nullspace(X, M);
    fmpz *Nc = _fmpz_vec_init(npos * r > 0 ? npos * r : 1);
    fmpq *lambda = _fmpq_vec_init(r > 0 ? r : 1);
    int found = 0;
    if (npos == 0) {
        /* no inequality: any nonzero R of the null space, but a support needs a key */
        *reason = HF_REASON_BAD_SUPPORT;
        goto done;
    }
    for (long i = 0; i < npos; i++)
        for (long k = 0; k < n; k++) {
            const fmpz *p = pos + i * n + k;
            if (fmpz_is_zero(p))
                continue;
            for (long j = 0; j < r; j++)
                fmpz_addmul(Nc + i * r + j, p, fmpz_mat_entry(X, k, j));
        }
    HF_CHECK(err, hf_exact_positivity(Nc, npos, r, lambda, &found, reason), done);
    if (!found)
        goto done;
    hf_exact_combine(X, r, lambda, n, R);
    if (!rows_hold(eq, pos, npos, R)) {
        err = hf_error(HF_ERR_INTERNAL,
                       "exact test: a witness of %ld unknowns failed its exact check", n);
        goto done;
    }
    *feasible = 1;
    *reason = HF_REASON_WITNESS;
done:
    _fmpq_vec_clear(lambda, r > 0 ? r : 1);
    _fmpz_vec_clear(Nc, npos * r > 0 ? npos * r : 1);
    fmpz_mat_clear(X);
    fmpz_mat_clear(M);
    hf_rowspan_clear(&c);
    return err;
}
