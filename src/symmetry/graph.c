/* Candidate symmetries of a target from nauty (docs/search.md, "Symmetry").
 *
 * A symmetry g (group.c) maps P/Q, in its unique normal form, to alpha P/Q + beta, so
 * (with Q(1) > 0 fixed) it maps the union of the supports of P and Q onto itself up to a
 * translation, keeps every coefficient of Q, maps the ratios P(k)/Q(k) on supp(Q) by
 * r -> alpha r + beta and the vectors P(k) off supp(Q) by v -> alpha v. The graph
 * below keeps these invariants (the affine map only through colours that it cannot
 * change), so its automorphism group contains every symmetry; its generators are then
 * checked exactly by the caller.
 *
 * Vertices: per coordinate j two chains of literals (side 0: a = k_j - min, side 1:
 * b = max - k_j; values 1..width_j, coloured by the value, the sides joined at value 1);
 * one vertex per monomial k, coloured by Q(k), joined to the literal of its a on side 0
 * and of its b on side 1; one vertex per class of equal ratios on supp(Q) and per class
 * of equal vectors P(k) off supp(Q), joined to its monomials and coloured by the value
 * made invariant under the affine change (mono_normalise). An automorphism maps chains
 * to chains: (j, side 0) -> (i, side 0) is k'_i = k_j, -> (i, side 1) is k'_i = -k_j
 * (up to translation); it is fixed by this signed permutation, because a monomial is
 * fixed by its coordinates. */
#include <stdlib.h>
#include <string.h>

#include <flint/fmpq.h>

#include "symmetry/symmetry_impl.h"

#include <nausparse.h>
#include <nauty.h>

typedef struct {
    int d;
    long n, cap;
    int8_t *perm, *sign;
    long order; /* product of the indices of the stabiliser chain, -1 on overflow */
    int nomem;
    long lit0[HF_D_MAX]; /* vertex of literal (j, side 0, value 1) */
    int *coord;          /* coordinate of each literal vertex */
} collect_t;

/* nauty's callbacks carry no context; one group is computed at a time per thread */
static _Thread_local collect_t *g_collect;

static void on_autom(int count, int *p, int *orbits, int numorbits, int stabvertex, int n)
{
    (void)count;
    (void)orbits;
    (void)numorbits;
    (void)stabvertex;
    (void)n;
    collect_t *c = g_collect;
    int d = c->d;
    if (c->nomem)
        return;
    /* rows of d bytes: the arrays grow by whole rows of d elements */
    long rows = c->cap / d;
    if (c->n == rows && HF_GROW2(&c->perm, &c->sign, &c->cap, (c->n + 1) * d) != HF_OK) {
        c->nomem = 1;
        return;
    }
    int8_t *perm = c->perm + c->n * d, *sign = c->sign + c->n * d;
    for (int j = 0; j < d; j++) {
        /* (j, side 0, value 1) goes to (i, side s, value 1): its own colour */
        int im = p[c->lit0[j]], i = c->coord[im];
        perm[i] = (int8_t)j;
        sign[i] = (int8_t)(im - c->lit0[i] ? -1 : 1);
    }
    c->n++;
}

static void on_level(int *lab, int *ptn, int level, int *orbits, statsblk *stats, int tv, int index,
                     int tcellsize, int numcells, int childcount, int n)
{
    (void)lab;
    (void)ptn;
    (void)level;
    (void)orbits;
    (void)stats;
    (void)tv;
    (void)tcellsize;
    (void)numcells;
    (void)childcount;
    (void)n;
    collect_t *c = g_collect;
    if (c->order >= 0 && __builtin_mul_overflow(c->order, (long)index, &c->order))
        c->order = -1;
}

/* ---------------------------------------------------------------- monomials */

typedef struct {
    int d, dv;
    long np;
    ulong *exp; /* np x d */
    fmpz *q;    /* Q(k) */
    fmpz *p;    /* np x dv */
    fmpq *r;    /* np x dv: P(k)/Q(k) on supp(Q) */
    fmpq *t;    /* np x dv: r or P(k) normalised up to the affine change (class colour) */
} mono_t;

/* Exponent rows i and k of x (d each), lexicographically. */
static int exp_rows_cmp(const ulong *x, long i, long k, int d)
{
    for (int j = 0; j < d; j++)
        if (x[i * d + j] != x[k * d + j])
            return x[i * d + j] < x[k * d + j] ? -1 : 1;
    return 0;
}

/* The sorts below are hf_sort's (stable, with a context: no global). */
static int exp_cmp(const void *ctx, long i, long k)
{
    const mono_t *m = ctx;
    return exp_rows_cmp(m->exp, i, k, m->d);
}

/* Q(k) order: the cells of monomials */
static int q_cmp(const void *ctx, long i, long k)
{
    const mono_t *m = ctx;
    return fmpz_cmp(m->q + i, m->q + k);
}

/* class colours: on supp(Q) first, then by the normalised vector t */
static int colour_cmp_raw(const mono_t *m, long i, long k)
{
    int zi = fmpz_is_zero(m->q + i), zk = fmpz_is_zero(m->q + k);
    if (zi != zk)
        return zi - zk;
    for (int j = 0; j < m->dv; j++) {
        int c = fmpq_cmp(m->t + i * m->dv + j, m->t + k * m->dv + j);
        if (c)
            return c;
    }
    return 0;
}

/* classes: on supp(Q) by ratio vector, off it by P vector (supp(Q) first) */
static int class_cmp_raw(const mono_t *m, long i, long k)
{
    int zi = fmpz_is_zero(m->q + i), zk = fmpz_is_zero(m->q + k);
    if (zi != zk)
        return zi - zk;
    for (int j = 0; j < m->dv; j++) {
        int c = zi ? fmpz_cmp(m->p + i * m->dv + j, m->p + k * m->dv + j)
                   : fmpq_cmp(m->r + i * m->dv + j, m->r + k * m->dv + j);
        if (c)
            return c;
    }
    return 0;
}

static int class_cmp(const void *ctx, long i, long k)
{
    return class_cmp_raw(ctx, i, k);
}

static void mono_clear(mono_t *m)
{
    if (m->q)
        _fmpz_vec_clear(m->q, m->np);
    if (m->p)
        _fmpz_vec_clear(m->p, m->np * m->dv);
    if (m->r)
        _fmpq_vec_clear(m->r, m->np * m->dv);
    if (m->t)
        _fmpq_vec_clear(m->t, m->np * m->dv);
    free(m->exp);
}

/* The class colours t. On supp(Q) a symmetry maps r to alpha r + beta: per component,
 * t = (r - min) / (max - min) is kept when alpha > 0 and becomes 1 - t (every component
 * at once) when alpha < 0, so the smaller of the two vectors is invariant. Off supp(Q)
 * P(k) goes to alpha P(k): t = P(k) / max |P| or its negative, the smaller. */
static void mono_normalise(mono_t *m)
{
    int dv = m->dv;
    long np = m->np;
    fmpq_t lo, hi, x;
    fmpz_t smax;
    fmpq *flip = _fmpq_vec_init(dv);
    fmpq_init(lo);
    fmpq_init(hi);
    fmpq_init(x);
    fmpz_init(smax);
    m->t = _fmpq_vec_init(np * dv);
    for (long i = 0; i < np; i++)
        if (fmpz_is_zero(m->q + i))
            for (int j = 0; j < dv; j++)
                if (fmpz_cmpabs(m->p + i * dv + j, smax) > 0)
                    fmpz_abs(smax, m->p + i * dv + j);
    for (int j = 0; j < dv; j++) {
        int first = 1;
        for (long i = 0; i < np; i++) {
            const fmpq *r = m->r + i * dv + j;
            if (fmpz_is_zero(m->q + i))
                continue;
            if (first || fmpq_cmp(r, lo) < 0)
                fmpq_set(lo, r);
            if (first || fmpq_cmp(r, hi) > 0)
                fmpq_set(hi, r);
            first = 0;
        }
        fmpq_sub(hi, hi, lo); /* the range; 0 for a constant component */
        for (long i = 0; i < np; i++) {
            fmpq *t = m->t + i * dv + j;
            if (fmpz_is_zero(m->q + i)) {
                if (!fmpz_is_zero(smax))
                    fmpq_set_fmpz_frac(t, m->p + i * dv + j, smax);
            } else if (!fmpq_is_zero(hi)) {
                fmpq_sub(x, m->r + i * dv + j, lo);
                fmpq_div(t, x, hi);
            }
        }
        /* remember which components may flip: 1 in the range slot, via lo */
        fmpq_set_si(flip + j, !fmpq_is_zero(hi), 1);
    }
    for (long i = 0; i < np; i++) {
        fmpq *t = m->t + i * dv;
        int zero = fmpz_is_zero(m->q + i), c = 0;
        for (int j = 0; j < dv && !c; j++) {
            /* the image under alpha < 0: 1 - t (or -t off supp Q) */
            if (zero)
                fmpq_neg(x, t + j);
            else if (fmpq_is_zero(flip + j))
                fmpq_set(x, t + j);
            else
                fmpq_sub_si(x, t + j, 1), fmpq_neg(x, x);
            c = fmpq_cmp(x, t + j);
        }
        if (c < 0)
            for (int j = 0; j < dv; j++) {
                if (zero)
                    fmpq_neg(t + j, t + j);
                else if (!fmpq_is_zero(flip + j))
                    fmpq_sub_si(t + j, t + j, 1), fmpq_neg(t + j, t + j);
            }
    }
    fmpz_clear(smax);
    fmpq_clear(x);
    fmpq_clear(hi);
    fmpq_clear(lo);
    _fmpq_vec_clear(flip, dv);
}

/* The monomials of P and Q with their coefficients; *too_big when over the limit. */
static hf_err_t mono_collect(const hf_fraction_t *f, mono_t *m, int *too_big)
{
    const fmpz_mpoly_ctx_struct *ctx = f->ctx;
    int d = f->d, dv = f->dv;
    long tot = fmpz_mpoly_length(f->Q, ctx);
    memset(m, 0, sizeof *m);
    m->d = d;
    m->dv = dv;
    for (int j = 0; j < dv; j++)
        tot += fmpz_mpoly_length(f->P + j, ctx);
    *too_big = tot > HF_GROUP_POINTS_MAX;
    if (*too_big)
        return HF_OK;
    m->exp = hf_malloc((size_t)(tot ? tot : 1) * d * sizeof *m->exp);
    if (!m->exp)
        return HF_ERR_NOMEM;
    long n = 0;
    for (int j = -1; j < dv; j++) {
        const fmpz_mpoly_struct *poly = j < 0 ? f->Q : f->P + j;
        for (slong t = 0; t < fmpz_mpoly_length(poly, ctx); t++)
            fmpz_mpoly_get_term_exp_ui(m->exp + n++ * d, poly, t, ctx);
    }
    /* the distinct exponents, sorted */
    long *ord = hf_malloc((size_t)(n ? n : 1) * sizeof *ord);
    ulong *uniq = hf_malloc((size_t)(n ? n : 1) * d * sizeof *uniq);
    hf_err_t err = ord && uniq ? HF_OK : HF_ERR_NOMEM;
    for (long i = 0; err == HF_OK && i < n; i++)
        ord[i] = i;
    if (err == HF_OK)
        err = hf_sort(ord, n, exp_cmp, m);
    long u = 0;
    for (long i = 0; err == HF_OK && i < n; i++)
        if (i == 0 || exp_cmp(m, ord[i - 1], ord[i]))
            memcpy(uniq + u++ * d, m->exp + ord[i] * d, (size_t)d * sizeof *uniq);
    free(ord);
    free(m->exp);
    m->exp = uniq;
    HF_TRY(err);
    m->np = u;
    m->q = _fmpz_vec_init(u);
    m->p = _fmpz_vec_init(u * dv);
    m->r = _fmpq_vec_init(u * dv);
    for (long i = 0; i < u; i++) {
        fmpz_mpoly_get_coeff_fmpz_ui(m->q + i, f->Q, m->exp + i * d, ctx);
        for (int j = 0; j < dv; j++) {
            fmpz_mpoly_get_coeff_fmpz_ui(m->p + i * dv + j, f->P + j, m->exp + i * d, ctx);
            if (!fmpz_is_zero(m->q + i))
                fmpq_set_fmpz_frac(m->r + i * dv + j, m->p + i * dv + j, m->q + i);
        }
    }
    mono_normalise(m);
    return HF_OK;
}

/* ---------------------------------------------------------------- the graph */

/* Classes ordered by the colour of their representative monomials. */
typedef struct {
    const mono_t *m;
    const long *rep;
} class_order_t;

static int class_vertex_cmp(const void *ctx, long i, long k)
{
    const class_order_t *o = ctx;
    return colour_cmp_raw(o->m, o->rep[i], o->rep[k]);
}

/* The coloured graph of P/Q as it is built, phase by phase: literal vertices (nlit, the
 * longest chain maxw), monomial vertices (after the literals), class vertices (nclass from
 * first_class); edges eu[k] -- ev[k]; nauty's partition (lab, ptn), orbits and the
 * compressed adjacency sg; ord, cls, rep and deg are scratch. */
typedef struct {
    ulong width[HF_D_MAX]; /* largest exponent along each coordinate, minimum 0 */
    long nlit, maxw, nv, first_class, nclass, nedge;
    long *ord, *cls, *rep, *eu, *ev, *deg;
    int *lab, *ptn, *orbits;
    sparsegraph sg;
} graph_t;

static void graph_clear(graph_t *gr)
{
    free(gr->sg.e);
    free(gr->sg.d);
    free(gr->sg.v);
    free(gr->deg);
    free(gr->orbits);
    free(gr->ptn);
    free(gr->lab);
    free(gr->ev);
    free(gr->eu);
    free(gr->rep);
    free(gr->cls);
    free(gr->ord);
}

/* Every coordinate's exponents moved to minimum 0, and its width. */
static void graph_widths(mono_t *m, graph_t *gr)
{
    int d = m->d;
    long np = m->np;
    for (int j = 0; j < d; j++) {
        /* the normal form has no common monomial factor: the minimum is 0 already */
        ulong lo = m->exp[j];
        gr->width[j] = 0;
        for (long i = 0; i < np; i++)
            lo = m->exp[i * d + j] < lo ? m->exp[i * d + j] : lo;
        for (long i = 0; i < np; i++) {
            m->exp[i * d + j] -= lo;
            if (m->exp[i * d + j] > gr->width[j])
                gr->width[j] = m->exp[i * d + j];
        }
    }
}

/* The literal chains and the monomials' edges to them (and the scratch of the later
 * phases, allocated here in the order they always were). Literal chains: coordinate j,
 * side s (0: distance a from the minimum, 1: distance b from the maximum), value
 * v = 1..len_j (len_j = max(width_j, 1)) is vertex lit0[j] + 2 (v - 1) + s, coloured v;
 * chain edges v - 1 -- v on each side and one edge between the two sides at v = 1. A
 * monomial joins the vertex of its value a on side 0 and of b on side 1 (none for a
 * value 0). */
static hf_err_t graph_literals(const mono_t *m, graph_t *gr, collect_t *col)
{
    int d = m->d;
    long np = m->np, nlit = 0, maxw = 1, nedge = 0;
    const ulong *width = gr->width;
    for (int j = 0; j < d; j++) {
        long len = width[j] ? (long)width[j] : 1;
        col->lit0[j] = nlit;
        nlit += 2 * len;
        maxw = len > maxw ? len : maxw;
    }
    gr->nlit = nlit;
    gr->maxw = maxw;
    gr->ord = hf_malloc((size_t)(np ? np : 1) * sizeof *gr->ord);
    gr->cls = hf_malloc((size_t)(np ? np : 1) * sizeof *gr->cls);
    gr->rep = hf_malloc((size_t)(np ? np : 1) * sizeof *gr->rep);
    col->coord = hf_malloc((size_t)nlit * sizeof *col->coord);
    long maxe = nlit + np * (2L * d + 1);
    long *eu = gr->eu = hf_malloc((size_t)maxe * sizeof *eu);
    long *ev = gr->ev = hf_malloc((size_t)maxe * sizeof *ev);
    if (!gr->ord || !gr->cls || !gr->rep || !col->coord || !eu || !ev)
        return HF_ERR_NOMEM;
    gr->nv = nlit + np;
    for (int j = 0; j < d; j++) {
        long len = width[j] ? (long)width[j] : 1, l0 = col->lit0[j];
        for (long k = 0; k < 2 * len; k++)
            col->coord[l0 + k] = j;
        eu[nedge] = l0;
        ev[nedge++] = l0 + 1;
        for (long v = 2; v <= len; v++)
            for (int side = 0; side < 2; side++) {
                eu[nedge] = l0 + 2 * (v - 2) + side;
                ev[nedge++] = l0 + 2 * (v - 1) + side;
            }
    }
    for (long i = 0; i < np; i++)
        for (int j = 0; j < d; j++)
            for (int side = 0; side < 2; side++) {
                ulong a = side ? width[j] - m->exp[i * d + j] : m->exp[i * d + j];
                if (a) {
                    eu[nedge] = nlit + i;
                    ev[nedge++] = col->lit0[j] + 2 * ((long)a - 1) + side;
                }
            }
    gr->nedge = nedge;
    return HF_OK;
}

/* The class vertices, classes of equal ratios (on supp Q) and of equal P vectors (off
 * it), each joined to its monomials; rep[c] is a monomial of class c. */
static hf_err_t graph_classes(const mono_t *m, graph_t *gr)
{
    long np = m->np, *cls = gr->cls;
    for (long i = 0; i < np; i++)
        cls[i] = i;
    HF_TRY(hf_sort(cls, np, class_cmp, m));
    gr->first_class = gr->nv;
    gr->nclass = 0;
    for (long i = 0; i < np; i++) {
        if (i == 0 || class_cmp_raw(m, cls[i - 1], cls[i])) {
            gr->rep[gr->nclass++] = cls[i]; /* a representative monomial of the class */
            gr->nv++;
        }
        gr->eu[gr->nedge] = gr->nlit + cls[i];
        gr->ev[gr->nedge++] = gr->nv - 1;
    }
    return HF_OK;
}

/* The partition: literals by value, monomials by Q(k), classes by colour. */
static hf_err_t graph_partition(const mono_t *m, graph_t *gr, const collect_t *col)
{
    int d = m->d;
    long nv = gr->nv, np = m->np, nlit = gr->nlit, nclass = gr->nclass, pos = 0;
    long *ord = gr->ord, *cls = gr->cls, *rep = gr->rep;
    int *lab = gr->lab = hf_malloc((size_t)nv * sizeof *lab);
    int *ptn = gr->ptn = hf_malloc((size_t)nv * sizeof *ptn);
    gr->orbits = hf_malloc((size_t)nv * sizeof *gr->orbits);
    gr->deg = hf_calloc((size_t)nv, sizeof *gr->deg);
    if (!lab || !ptn || !gr->orbits || !gr->deg)
        return HF_ERR_NOMEM;
    for (long v = 1; v <= gr->maxw; v++) {
        long start = pos;
        for (int j = 0; j < d; j++)
            if (v <= (gr->width[j] ? (long)gr->width[j] : 1))
                for (int side = 0; side < 2; side++) {
                    lab[pos] = (int)(col->lit0[j] + 2 * (v - 1) + side);
                    ptn[pos++] = 1;
                }
        if (pos > start)
            ptn[pos - 1] = 0;
    }
    for (long i = 0; i < np; i++)
        ord[i] = i;
    HF_TRY(hf_sort(ord, np, q_cmp, m));
    for (long i = 0; i < np; i++) {
        lab[pos] = (int)(nlit + ord[i]);
        ptn[pos++] = 1;
        if (i + 1 == np || fmpz_cmp(m->q + ord[i], m->q + ord[i + 1]))
            ptn[pos - 1] = 0;
    }
    /* class vertices by colour: sort the representatives, keep the class index */
    for (long c = 0; c < nclass; c++)
        cls[c] = c;
    class_order_t co = {m, rep};
    HF_TRY(hf_sort(cls, nclass, class_vertex_cmp, &co));
    for (long c = 0; c < nclass; c++) {
        lab[pos] = (int)(gr->first_class + cls[c]);
        ptn[pos++] = 1;
        if (c + 1 == nclass || colour_cmp_raw(m, rep[cls[c]], rep[cls[c + 1]]))
            ptn[pos - 1] = 0;
    }
    return HF_OK;
}

/* The compressed adjacency nauty reads (sg), both directions of every edge. */
static hf_err_t graph_sparse(graph_t *gr)
{
    long nv = gr->nv, nedge = gr->nedge, *eu = gr->eu, *ev = gr->ev, *deg = gr->deg;
    sparsegraph *sg = &gr->sg;
    for (long k = 0; k < nedge; k++) {
        deg[eu[k]]++;
        deg[ev[k]]++;
    }
    sg->nv = (int)nv;
    sg->nde = (size_t)(2 * nedge);
    sg->v = hf_malloc((size_t)nv * sizeof *sg->v);
    sg->d = hf_malloc((size_t)nv * sizeof *sg->d);
    sg->e = hf_malloc((size_t)(nedge ? 2 * nedge : 1) * sizeof *sg->e);
    if (!sg->v || !sg->d || !sg->e)
        return HF_ERR_NOMEM;
    sg->vlen = sg->dlen = (size_t)nv;
    sg->elen = (size_t)(2 * nedge);
    for (long v = 0, off = 0; v < nv; v++) {
        sg->v[v] = (size_t)off;
        sg->d[v] = 0;
        off += deg[v];
    }
    for (long k = 0; k < nedge; k++) {
        sg->e[sg->v[eu[k]] + sg->d[eu[k]]++] = (int)ev[k];
        sg->e[sg->v[ev[k]] + sg->d[ev[k]]++] = (int)eu[k];
    }
    return HF_OK;
}

/* nauty on the graph: the generators and the order into col (on_autom, on_level), the
 * order checked against nauty's own. */
static hf_err_t graph_nauty(graph_t *gr, collect_t *col)
{
    long nv = gr->nv;
    DEFAULTOPTIONS_SPARSEGRAPH(opt);
    statsblk stats;
    opt.defaultptn = FALSE;
    opt.userautomproc = on_autom;
    opt.userlevelproc = on_level;
    nauty_check(WORDSIZE, SETWORDSNEEDED(nv), (int)nv, NAUTYVERSIONID);
    g_collect = col;
    sparsenauty(&gr->sg, gr->lab, gr->ptn, gr->orbits, &opt, &stats, NULL);
    g_collect = NULL;
    /* nauty keeps its work space in statics between calls: release it */
    nausparse_freedyn();
    nauty_freedyn();
    nautil_freedyn();
    if (col->nomem || stats.errstatus)
        return col->nomem ? HF_ERR_NOMEM
                          : hf_error(HF_ERR_INTERNAL, "nauty: error status %d", stats.errstatus);
    /* cross-check the exact order with nauty's own (a double, exact below 1e10) */
    if (col->order > 0 && stats.grpsize2 == 0 && stats.grpsize1 != (double)col->order)
        return hf_error(HF_ERR_INTERNAL, "nauty: group order %.0f, stabiliser chain %ld",
                        stats.grpsize1, col->order);
    return HF_OK;
}

hf_err_t hf_group_nauty(const hf_fraction_t *f, int *complete, long *order, long *ngens,
                        int8_t **gperm, int8_t **gsign)
{
    hf_err_t err = HF_OK;
    int too_big = 0;
    mono_t m;
    collect_t col = {.d = f->d, .order = 1};
    graph_t gr;
    memset(&gr, 0, sizeof gr);
    *complete = 0;
    *order = -1;
    *ngens = 0;
    *gperm = *gsign = NULL;

    HF_CHECK(err, mono_collect(f, &m, &too_big), done);
    if (too_big)
        goto done;
    graph_widths(&m, &gr);
    HF_CHECK(err, graph_literals(&m, &gr, &col), done);
    HF_CHECK(err, graph_classes(&m, &gr), done);
    if (gr.nv > NAUTY_INFINITY - 2)
        goto done; /* too large for nauty: complete stays 0 */
    HF_CHECK(err, graph_partition(&m, &gr, &col), done);
    HF_CHECK(err, graph_sparse(&gr), done);
    HF_CHECK(err, graph_nauty(&gr, &col), done);
    *complete = 1;
    *order = col.order;
    *ngens = col.n;
    *gperm = col.perm;
    *gsign = col.sign;
    col.perm = col.sign = NULL;
done:
    free(col.coord);
    free(col.perm);
    free(col.sign);
    graph_clear(&gr);
    mono_clear(&m);
    return err;
}
