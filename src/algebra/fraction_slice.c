/* P/Q held in slices, each slice built on its own (algebra.h; docs/exact-test.md §1b).
 *
 * Slice e of a polynomial: its terms whose exponents in the sliced coordinates Sigma
 * are e. When the groups' primitive denominators M_g are pairwise coprime and no factor
 * of L = prod M_g divides its own group's numerators (every factor held by one group,
 * may_cancel = 0: "windowed"), nothing cancels and, with C = lcm(c_g), s_g = C / c_g,
 *     Q' = C L,    P'_j = sum_g s_g N_g,j prod_{g' != g} M_g'
 * is the normal form times its content. It is built by the recurrence of docs/exact-test.md §1 with
 * no division (L_k = L_{k-1} M_k, P_k = P_{k-1} M_k + s_k N_k L_{k-1}), and every factor still to
 * come has exponents in [0, its Sigma-degree], so a term of L_k or P_k outside the window [e - E_k,
 * e] (E_k: the Sigma-degrees of the groups still to come) can never reach slice e: L_k and P_k are
 * cut to it after each step. The groups whose M touches Sigma come first; after them the window is
 * {e}, and the remaining steps multiply slice-sized polynomials by small ones. Otherwise the whole
 * P/Q is built and cut. */
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include <flint/fmpz_vec.h>

#include "algebra/algebra_impl.h"
#include "headfuse/stop.h"

/* What the slices of one target start from: the heads' groups and factors and whether
 * each slice can be built alone. */
typedef struct {
    int ready; /* ctx and b initialised */
    int d, dv;
    const char *name;
    fmpz_mpoly_ctx_t ctx;
    hf_fraction_groups_t b;
    int factored, windowed;
    char why[160];
} prep_t;

static void prep_clear(prep_t *p)
{
    if (!p->ready)
        return;
    hf_fraction_groups_clear(&p->b);
    fmpz_mpoly_ctx_clear(p->ctx);
    p->ready = 0;
}

/* The first group (in b's order) whose factor list holds factor i, from group `from` on;
 * -1 when none. */
static long holder_from(const hf_fraction_groups_t *b, long i, long from)
{
    for (long g = from; g < b->ngroups; g++)
        for (long k = 0; k < b->groups[g].nf; k++)
            if (b->groups[g].fidx[k] == i)
                return g;
    return -1;
}

/* Why a target whose denominators were not all factored is not windowed. */
static void why_not_factored(prep_t *p)
{
    slong deg[HF_D_MAX];
    for (long g = 0; g < p->b.ngroups; g++) {
        fmpz_mpoly_degrees_si(deg, p->b.groups[g].M, p->ctx);
        for (int a = 0; a < p->d; a++)
            if (deg[a] > HF_FRACTION_FACTOR_DEGREE_MAX) {
                snprintf(p->why, sizeof p->why,
                         "heads[%ld]'s denominator has degree %ld > %d in coordinate %d: not "
                         "factored",
                         p->b.groups[g].first, (long)deg[a], HF_FRACTION_FACTOR_DEGREE_MAX, a);
                return;
            }
    }
    snprintf(p->why, sizeof p->why, "a denominator could not be factored");
}

/* The conditions of docs/exact-test.md §1b: factored, every factor held by one group, none may
 * cancel. */
static void prep_verdict(prep_t *p)
{
    const hf_fraction_groups_t *b = &p->b;
    p->windowed = 0;
    if (!p->factored) {
        why_not_factored(p);
        return;
    }
    for (long i = 0; i < b->nfactors; i++) {
        long g1 = holder_from(b, i, 0), g2 = holder_from(b, i, g1 + 1);
        if (g2 >= 0) {
            snprintf(p->why, sizeof p->why,
                     "the denominators of heads[%ld] and heads[%ld] share a factor",
                     b->groups[g1].first, b->groups[g2].first);
            return;
        }
    }
    for (long i = 0; i < b->nfactors; i++)
        if (b->factors[i].may_cancel) {
            snprintf(p->why, sizeof p->why,
                     "a factor of heads[%ld]'s denominator divides its numerators: it may "
                     "cancel",
                     b->groups[holder_from(b, i, 0)].first);
            return;
        }
    p->windowed = 1;
    p->why[0] = '\0';
}

/* p (uninitialised) from t: checked, grouped, factored, judged. Clear with prep_clear
 * even on error. */
static hf_err_t prep_make(prep_t *p, const hf_target_t *t)
{
    memset(p, 0, sizeof *p);
    HF_TRY(hf_fraction_check_target(t, &p->name));
    p->d = t->d;
    p->dv = t->dv;
    fmpz_mpoly_ctx_init(p->ctx, t->d, ORD_LEX);
    hf_fraction_groups_init(&p->b, p->ctx, t->dv);
    p->ready = 1;
    HF_TRY(hf_fraction_groups_make(&p->b, t, &p->factored));
    prep_verdict(p);
    return HF_OK;
}

/* ------------------------------------------------------------ Q's degrees */

/* How often factor i cancels from the sum over the lcm: min(m, min_j v_f(R_j)) with
 * R_j = sum_{g in H} s_g N_g,j f^(m - e_g) prod_{g' in H, g' != g} M_g' / f^(e_g'), H the
 * groups holding f (s_g = C_H / c_g, C_H = lcm over H). Only the groups holding f enter:
 * every other term of P_j is a multiple of f^m (docs/exact-test.md §1b, "Q's degrees").
 * R_j = 0 for every j (a zero target) cancels f fully. */
static hf_err_t cancelled_power(const prep_t *p, long i, slong *out)
{
    hf_err_t err = HF_OK;
    const hf_fraction_groups_t *b = &p->b;
    const hf_fraction_factor_t *fa = b->factors + i;
    long nh = 0, *H = NULL;
    slong *e = NULL;
    fmpz_mpoly_struct *rest = NULL, *R = NULL;
    fmpz_mpoly_t T, U, fp;
    fmpz_t CH, s;
    fmpz_mpoly_init(T, p->ctx);
    fmpz_mpoly_init(U, p->ctx);
    fmpz_mpoly_init(fp, p->ctx);
    fmpz_init_set_ui(CH, 1);
    fmpz_init(s);
    *out = 0;

    H = hf_malloc((size_t)b->ngroups * sizeof *H);
    e = hf_malloc((size_t)b->ngroups * sizeof *e);
    rest = hf_fraction_polys_new((int)b->ngroups, p->ctx);
    R = hf_fraction_polys_new(p->dv, p->ctx);
    if (!H || !e || !rest || !R) {
        err = HF_ERR_NOMEM;
        goto cleanup;
    }
    for (long g = 0; g < b->ngroups; g++)
        for (long k = 0; k < b->groups[g].nf; k++)
            if (b->groups[g].fidx[k] == i) {
                H[nh] = g;
                e[nh] = b->groups[g].fexp[k];
                /* rest = M_g / f^e_g: the group's denominator without f */
                fmpz_mpoly_pow_ui(fp, fa->poly, (ulong)e[nh], p->ctx);
                if (!fmpz_mpoly_divides(rest + nh, b->groups[g].M, fp, p->ctx)) {
                    err = hf_error(HF_ERR_INTERNAL, "%s: a factor does not divide its group",
                                   p->name);
                    goto cleanup;
                }
                fmpz_lcm(CH, CH, b->groups[g].c);
                nh++;
            }
    for (long h = 0; h < nh; h++) {
        const hf_fraction_group_t *gr = b->groups + H[h];
        /* U = s_g f^(m - e_g) prod of the other holders' rest */
        fmpz_divexact(s, CH, gr->c);
        fmpz_mpoly_pow_ui(U, fa->poly, (ulong)(fa->mult - e[h]), p->ctx);
        fmpz_mpoly_scalar_mul_fmpz(U, U, s, p->ctx);
        for (long o = 0; o < nh; o++)
            if (o != h)
                fmpz_mpoly_mul(U, U, rest + o, p->ctx);
        for (int j = 0; j < p->dv; j++) {
            fmpz_mpoly_mul(T, gr->N + j, U, p->ctx);
            fmpz_mpoly_add(R + j, R + j, T, p->ctx);
        }
    }
    /* divide f out of every R_j while it divides them all, at most m times */
    for (int divides = 1; divides && *out < fa->mult;) {
        for (int j = 0; j < p->dv && divides; j++)
            divides = fmpz_mpoly_divides(T, R + j, fa->poly, p->ctx);
        for (int j = 0; j < p->dv && divides; j++)
            fmpz_mpoly_divides(R + j, R + j, fa->poly, p->ctx);
        *out += divides;
    }
cleanup:
    hf_fraction_polys_free(R, p->dv, p->ctx);
    hf_fraction_polys_free(rest, (int)b->ngroups, p->ctx);
    free(e);
    free(H);
    fmpz_clear(s);
    fmpz_clear(CH);
    fmpz_mpoly_clear(fp, p->ctx);
    fmpz_mpoly_clear(U, p->ctx);
    fmpz_mpoly_clear(T, p->ctx);
    return err;
}

/* Q's degree in every coordinate. Q = C L / prod f^(cancelled) up to its content, and a
 * degree in one variable adds over a product: sum_f (m(f) - cancelled(f)) deg_a f. A
 * target not factored is built (by gcds) to read it. */
static hf_err_t prep_qdeg(const prep_t *p, const hf_target_t *t, int64_t *qdeg)
{
    slong deg[HF_D_MAX];
    for (int a = 0; a < p->d; a++)
        qdeg[a] = 0;
    if (!p->factored) {
        hf_fraction_t f;
        hf_fraction_init(&f);
        hf_err_t err = hf_fraction_from_target(&f, t);
        if (err == HF_OK) {
            fmpz_mpoly_degrees_si(deg, f.Q, f.ctx);
            for (int a = 0; a < p->d; a++)
                qdeg[a] = deg[a] > 0 ? deg[a] : 0;
        }
        hf_fraction_clear(&f);
        return err;
    }
    for (long i = 0; i < p->b.nfactors; i++) {
        const hf_fraction_factor_t *fa = p->b.factors + i;
        slong cancelled = 0;
        if (fa->may_cancel)
            HF_TRY(cancelled_power(p, i, &cancelled));
        fmpz_mpoly_degrees_si(deg, fa->poly, p->ctx);
        for (int a = 0; a < p->d; a++)
            qdeg[a] += (int64_t)(fa->mult - cancelled) * deg[a];
    }
    return HF_OK;
}

/* ------------------------------------------------------------ the plan */

hf_err_t hf_fraction_slice_plan(const hf_target_t *t, const int *allowed, long want,
                                hf_slice_plan_t *plan)
{
    hf_err_t err = HF_OK;
    prep_t p;
    hf_slice_plan_t pl;
    memset(&pl, 0, sizeof pl);
    HF_CHECK(err, prep_make(&p, t), cleanup);
    HF_CHECK(err, prep_qdeg(&p, t, pl.qdeg), cleanup);
    pl.d = p.d;
    pl.windowed = p.windowed;
    snprintf(pl.why, sizeof pl.why, "%s", p.why);
    pl.nslices = 1;
    for (int a = 0; a < p.d && pl.nslices < want; a++) {
        if ((allowed && !allowed[a]) || pl.qdeg[a] == 0)
            continue;
        if (pl.qdeg[a] >= LONG_MAX / pl.nslices) {
            err = hf_error(HF_ERR_LIMIT, "%s: slices: more than %ld slices", p.name, LONG_MAX);
            goto cleanup;
        }
        pl.coord[pl.ns] = a;
        pl.ext[pl.ns++] = pl.qdeg[a];
        pl.nslices *= (long)pl.qdeg[a] + 1;
    }
    *plan = pl;
cleanup:
    prep_clear(&p);
    return err;
}

void hf_fraction_slice_values(const hf_slice_plan_t *plan, long index, int64_t *e)
{
    for (int i = plan->ns - 1; i >= 0; i--) {
        long radix = (long)plan->ext[i] + 1;
        e[i] = index % radix;
        index /= radix;
    }
}

/* The plan was made for a target of t's shape (coordinates in range and increasing, the
 * slice count the product of the extents). */
static hf_err_t plan_check(const hf_slice_plan_t *plan, const char *name)
{
    long n = 1;
    int ok = plan->d >= 1 && plan->d <= HF_D_MAX && plan->ns >= 0 && plan->ns <= plan->d;
    for (int i = 0; ok && i < plan->ns; i++) {
        ok = plan->coord[i] >= 0 && plan->coord[i] < plan->d && plan->ext[i] >= 0 &&
             (i == 0 || plan->coord[i] > plan->coord[i - 1]) && plan->ext[i] < LONG_MAX / n;
        n *= ok ? (long)plan->ext[i] + 1 : 1;
    }
    if (!ok || n != plan->nslices)
        return hf_error(HF_ERR_INPUT, "%s: slices: the plan is not a valid plan", name);
    return HF_OK;
}

static hf_err_t prep_for_plan(prep_t *p, const hf_target_t *t, const hf_slice_plan_t *plan)
{
    HF_TRY(prep_make(p, t));
    HF_TRY(plan_check(plan, p->name));
    int same = plan->d == p->d && plan->windowed == p->windowed;
    if (same && p->windowed) { /* Q's degrees are cheap here: compare them */
        int64_t qdeg[HF_D_MAX];
        HF_TRY(prep_qdeg(p, t, qdeg));
        for (int a = 0; a < p->d; a++)
            same = same && qdeg[a] == plan->qdeg[a];
    }
    for (int i = 0; same && i < plan->ns; i++)
        same = plan->ext[i] == plan->qdeg[plan->coord[i]];
    if (!same)
        return hf_error(HF_ERR_INPUT, "%s: slices: the plan was made for another target", p->name);
    return HF_OK;
}

/* ------------------------------------------------------------ weights and estimate */

/* 1 if M has a nonzero exponent in a sliced coordinate. */
static int touches(const fmpz_mpoly_t M, const hf_slice_plan_t *plan, const fmpz_mpoly_ctx_t ctx)
{
    slong deg[HF_D_MAX];
    fmpz_mpoly_degrees_si(deg, M, ctx);
    for (int i = 0; i < plan->ns; i++)
        if (deg[plan->coord[i]] > 0)
            return 1;
    return 0;
}

/* The slice index of values e, or -1 when e is outside the plan's box. */
static long index_of(const hf_slice_plan_t *plan, const int64_t *e)
{
    long index = 0;
    for (int i = 0; i < plan->ns; i++) {
        if (e[i] < 0 || e[i] > plan->ext[i])
            return -1;
        index = index * ((long)plan->ext[i] + 1) + (long)e[i];
    }
    return index;
}

/* w = w convolved with the Sigma-exponents of M's terms, cut to the box; next: scratch. */
static void convolve_terms(double *w, double *next, const fmpz_mpoly_t M,
                           const hf_slice_plan_t *plan, const fmpz_mpoly_ctx_t ctx)
{
    int64_t e[HF_D_MAX];
    memset(next, 0, (size_t)plan->nslices * sizeof *next);
    for (long x = 0; x < plan->nslices; x++) {
        if (w[x] == 0)
            continue;
        for (slong i = 0; i < M->length; i++) {
            hf_fraction_slice_values(plan, x, e);
            for (int c = 0; c < plan->ns; c++)
                e[c] += (int64_t)fmpz_mpoly_get_term_var_exp_ui(M, i, plan->coord[c], ctx);
            long y = index_of(plan, e);
            if (y >= 0)
                next[y] += w[x];
        }
    }
    memcpy(w, next, (size_t)plan->nslices * sizeof *w);
}

hf_err_t hf_fraction_slice_weights(const hf_target_t *t, const hf_slice_plan_t *plan, double *w)
{
    hf_err_t err = HF_OK;
    prep_t p;
    double *next = NULL, others = 1;
    HF_CHECK(err, prep_for_plan(&p, t, plan), cleanup);
    next = hf_malloc((size_t)plan->nslices * sizeof *next);
    if (!next) {
        err = HF_ERR_NOMEM;
        goto cleanup;
    }
    memset(w, 0, (size_t)plan->nslices * sizeof *w);
    w[0] = 1; /* the empty product, at e = 0 */
    for (long g = 0; g < p.b.ngroups; g++) {
        const fmpz_mpoly_struct *M = p.b.groups[g].M;
        if (touches(M, plan, p.ctx))
            convolve_terms(w, next, M, plan, p.ctx);
        else
            others *= (double)M->length; /* the same factor for every slice */
    }
    for (long x = 0; x < plan->nslices; x++)
        w[x] *= others;
cleanup:
    free(next);
    prep_clear(&p);
    return err;
}

hf_err_t hf_fraction_slices_estimate(const hf_target_t *t, const hf_slice_plan_t *plan,
                                     double *bytes)
{
    double whole, *w = NULL, wmax = 0, wsum = 0;
    *bytes = 0;
    HF_TRY(hf_fraction_estimate(t, &whole));
    w = hf_malloc((size_t)plan->nslices * sizeof *w);
    if (!w)
        return HF_ERR_NOMEM;
    hf_err_t err = hf_fraction_slice_weights(t, plan, w);
    for (long x = 0; err == HF_OK && x < plan->nslices; x++) {
        wsum += w[x];
        wmax = w[x] > wmax ? w[x] : wmax;
    }
    free(w);
    if (err != HF_OK)
        return err;
    double share = wsum > 0 ? wmax / wsum : 1;
    /* a windowed slice's build holds what the whole's does, each polynomial cut to the
     * slice: measured 0.48 to 0.68 of this on chain:d=12..14 (docs/exact-test.md §1b) */
    *bytes = plan->windowed ? whole * share : whole * (1 + share);
    return HF_OK;
}

/* ------------------------------------------------------------ building slices */

/* The order of the windowed sum and its windows: the groups touching Sigma first (each
 * part in the order of docs/exact-test.md §1), rest[k * ns + i] = E_k in coord[i], the Sigma-degree
 * still to come after step k, s[k] = C / c_g of step k's group. */
typedef struct {
    long n;
    long *order;
    int *touch;
    int64_t *rest;
    fmpz *s;
    fmpz_t C;
} steps_t;

static void steps_clear(steps_t *st)
{
    free(st->order);
    free(st->touch);
    free(st->rest);
    if (st->s)
        _fmpz_vec_clear(st->s, st->n);
    fmpz_clear(st->C);
}

static hf_err_t steps_make(steps_t *st, const prep_t *p, const hf_slice_plan_t *plan)
{
    long G = p->b.ngroups, k = 0;
    int ns = plan->ns;
    slong deg[HF_D_MAX];
    memset(st, 0, sizeof *st);
    fmpz_init_set_ui(st->C, 1);
    st->n = G;
    st->order = hf_malloc((size_t)(G ? G : 1) * sizeof *st->order);
    st->touch = hf_malloc((size_t)(G ? G : 1) * sizeof *st->touch);
    st->rest = hf_calloc((size_t)(G ? G : 1) * (size_t)(ns ? ns : 1), sizeof *st->rest);
    st->s = _fmpz_vec_init(G ? G : 1);
    if (!st->order || !st->touch || !st->rest)
        return HF_ERR_NOMEM;
    for (int pass = 1; pass >= 0; pass--)
        for (long g = 0; g < G; g++)
            if (touches(p->b.groups[g].M, plan, p->ctx) == pass) {
                st->touch[k] = pass;
                st->order[k++] = g;
            }
    for (long g = 0; g < G; g++)
        fmpz_lcm(st->C, st->C, p->b.groups[g].c);
    /* E_k from the last step back: E_{G-1} = 0 */
    for (k = G - 1; k >= 0; k--) {
        const hf_fraction_group_t *gr = p->b.groups + st->order[k];
        fmpz_divexact(st->s + k, st->C, gr->c);
        if (k == 0)
            break;
        fmpz_mpoly_degrees_si(deg, gr->M, p->ctx);
        for (int i = 0; i < ns; i++)
            st->rest[(k - 1) * ns + i] =
                st->rest[k * ns + i] + (deg[plan->coord[i]] > 0 ? deg[plan->coord[i]] : 0);
    }
    return HF_OK;
}

/* The Sigma-exponent c of A's term i. */
static int64_t sigma_exp(const fmpz_mpoly_t A, slong i, int coord, const fmpz_mpoly_ctx_t ctx)
{
    return (int64_t)fmpz_mpoly_get_term_var_exp_ui(A, i, coord, ctx);
}

/* Keep A's terms whose Sigma-exponents lie in [lo, hi] (in place: the terms stay sorted). */
static void window_cut(fmpz_mpoly_t A, const hf_slice_plan_t *plan, const int64_t *lo,
                       const int64_t *hi, const fmpz_mpoly_ctx_t ctx)
{
    slong N = mpoly_words_per_exp(A->bits, ctx->minfo), k = 0;
    for (slong i = 0; i < A->length; i++) {
        int keep = 1;
        for (int c = 0; c < plan->ns && keep; c++) {
            int64_t x = sigma_exp(A, i, plan->coord[c], ctx);
            keep = x >= lo[c] && x <= hi[c];
        }
        if (!keep)
            continue;
        if (k != i) {
            fmpz_swap(A->coeffs + k, A->coeffs + i);
            mpoly_monomial_set(A->exps + N * k, A->exps + N * i, N);
        }
        k++;
    }
    _fmpz_mpoly_set_length(A, k, ctx);
}

/* The gcd of all of f's coefficients (0 when f is zero). */
static void fraction_content(fmpz_t content, const hf_fraction_t *f)
{
    fmpz_t c;
    fmpz_init(c);
    _fmpz_vec_content(content, f->Q->coeffs, f->Q->length);
    for (int j = 0; j < f->dv; j++) {
        _fmpz_vec_content(c, f->P[j].coeffs, f->P[j].length);
        fmpz_gcd(content, content, c);
    }
    fmpz_clear(c);
}

/* Workspace of one windowed slice: the partial lcm and the buffers every product and sum
 * goes to before it is swapped in (as fraction_factor.c's sum_over_lcm). */
typedef struct {
    fmpz_mpoly_t L, W, T, S;
} work_t;

/* One step of the recurrence on f (the partial sums P) and w->L with group gr and
 * multiplier s: P_j = P_j M + s N_j L, L = L M. */
static void slice_step(hf_fraction_t *f, work_t *w, const hf_fraction_group_t *gr, const fmpz_t s)
{
    int one = fmpz_mpoly_is_one(gr->M, f->ctx);
    for (int j = 0; j < f->dv; j++) {
        if (!one && f->P[j].length) {
            fmpz_mpoly_mul(w->W, f->P + j, gr->M, f->ctx);
            fmpz_mpoly_swap(f->P + j, w->W, f->ctx);
        }
        if (gr->N[j].length) {
            fmpz_mpoly_scalar_mul_fmpz(w->S, gr->N + j, s, f->ctx);
            fmpz_mpoly_mul(w->T, w->S, w->L, f->ctx);
            fmpz_mpoly_add(w->W, f->P + j, w->T, f->ctx);
            fmpz_mpoly_swap(f->P + j, w->W, f->ctx);
        }
    }
    if (!one) {
        fmpz_mpoly_mul(w->W, w->L, gr->M, f->ctx);
        fmpz_mpoly_swap(w->L, w->W, f->ctx);
    }
}

/* Slice `index` of (P', Q') built alone into f (uninitialised; initialised by the call,
 * clear it even on error), its content into content. */
static hf_err_t slice_windowed(hf_fraction_t *f, const prep_t *p, const steps_t *st,
                               const hf_slice_plan_t *plan, long index, int narrow, fmpz_t content)
{
    hf_err_t err = HF_OK;
    int64_t e[HF_D_MAX], lo[HF_D_MAX];
    work_t w;
    HF_TRY(hf_fraction_alloc(f, p->d, p->dv));
    hf_fraction_slice_values(plan, index, e);
    fmpz_mpoly_init(w.L, f->ctx);
    fmpz_mpoly_init(w.W, f->ctx);
    fmpz_mpoly_init(w.T, f->ctx);
    fmpz_mpoly_init(w.S, f->ctx);
    fmpz_mpoly_one(w.L, f->ctx);
    int cut = 0; /* a window was applied; the last one is {e} (E = 0 after it) */
    for (long k = 0; k < st->n; k++) {
        /* a step multiplies a slice by a factor: up to a second at the largest targets */
        HF_CHECK(err, hf_stop_check(HF_STOP_FRACTION), cleanup);
        slice_step(f, &w, p->b.groups + st->order[k], st->s + k);
        if (!st->touch[k])
            continue; /* Sigma-exponents unchanged: nothing leaves the window {e} */
        for (int i = 0; i < plan->ns; i++)
            lo[i] = e[i] - st->rest[k * plan->ns + i] + narrow;
        window_cut(w.L, plan, lo, e, f->ctx);
        for (int j = 0; j < f->dv; j++)
            window_cut(f->P + j, plan, lo, e, f->ctx);
        cut = 1;
    }
    if (!cut) { /* no group touches Sigma (no heads): every term has Sigma-exponents 0 */
        window_cut(w.L, plan, e, e, f->ctx);
        for (int j = 0; j < f->dv; j++)
            window_cut(f->P + j, plan, e, e, f->ctx);
    }
    fmpz_mpoly_scalar_mul_fmpz(f->Q, w.L, st->C, f->ctx);
    fraction_content(content, f);
cleanup:
    fmpz_mpoly_clear(w.S, f->ctx);
    fmpz_mpoly_clear(w.T, f->ctx);
    fmpz_mpoly_clear(w.W, f->ctx);
    fmpz_mpoly_clear(w.L, f->ctx);
    return err;
}

/* B = the terms of A (in an equal context) whose Sigma-exponents are e, exponent words
 * copied as they are. */
static void cut_poly(fmpz_mpoly_t B, const fmpz_mpoly_t A, const hf_slice_plan_t *plan,
                     const int64_t *e, const fmpz_mpoly_ctx_t ctx)
{
    slong N = mpoly_words_per_exp(A->bits, ctx->minfo), n = 0, k = 0;
    for (int pass = 0; pass < 2; pass++) {
        if (pass == 1)
            fmpz_mpoly_fit_length_reset_bits(B, n, A->bits, ctx);
        for (slong i = 0; i < A->length; i++) {
            int keep = 1;
            for (int c = 0; c < plan->ns && keep; c++)
                keep = sigma_exp(A, i, plan->coord[c], ctx) == e[c];
            if (keep && pass == 0)
                n++;
            else if (keep) {
                fmpz_set(B->coeffs + k, A->coeffs + i);
                mpoly_monomial_set(B->exps + N * k, A->exps + N * i, N);
                k++;
            }
        }
    }
    _fmpz_mpoly_set_length(B, k, ctx);
}

/* Slice `index` cut from the whole fraction F into f (uninitialised; initialised by the
 * call), its content into content. */
static hf_err_t slice_cut(hf_fraction_t *f, const hf_fraction_t *F, const hf_slice_plan_t *plan,
                          long index, fmpz_t content)
{
    int64_t e[HF_D_MAX];
    HF_TRY(hf_fraction_alloc(f, F->d, F->dv));
    hf_fraction_slice_values(plan, index, e);
    cut_poly(f->Q, F->Q, plan, e, f->ctx);
    for (int j = 0; j < f->dv; j++)
        cut_poly(f->P + j, F->P + j, plan, e, f->ctx);
    fraction_content(content, f);
    return HF_OK;
}

/* The whole Q's degrees are the plan's: a plan that says less would lose terms. */
static hf_err_t check_degrees(const hf_fraction_t *F, const hf_slice_plan_t *plan, const char *name)
{
    slong deg[HF_D_MAX];
    fmpz_mpoly_degrees_si(deg, F->Q, F->ctx);
    for (int a = 0; a < F->d; a++)
        if ((deg[a] > 0 ? deg[a] : 0) != plan->qdeg[a])
            return hf_error(HF_ERR_INPUT, "%s: slices: the plan was made for another target", name);
    return HF_OK;
}

/* Build the n slices into tmp (n fractions, uninitialised; each initialised by the
 * call: clear the first *made of them) and their contents. */
/* A with no room beyond its terms and exponents as narrow as they allow: a slice is held for
 * a whole search, and a product leaves up to twice its terms allocated and its exponents as
 * wide as the factors' degrees could need (the freed room serves the next slice's build). */
static void poly_compact(fmpz_mpoly_t A, const fmpz_mpoly_ctx_t ctx)
{
    slong deg[HF_D_MAX], top = 0;
    int d = (int)fmpz_mpoly_ctx_nvars(ctx);
    if (A->length == 0) {
        fmpz_mpoly_clear(A, ctx);
        fmpz_mpoly_init(A, ctx);
        return;
    }
    fmpz_mpoly_degrees_si(deg, A, ctx);
    for (int a = 0; a < d; a++)
        top = deg[a] > top ? deg[a] : top;
    flint_bitcnt_t bits = mpoly_fix_bits(FLINT_BIT_COUNT((ulong)top) + 1, ctx->minfo);
    fmpz_mpoly_t B;
    fmpz_mpoly_init3(B, A->length, bits, ctx);
    if (fmpz_mpoly_repack_bits(B, A, bits, ctx))
        fmpz_mpoly_swap(A, B, ctx);
    fmpz_mpoly_clear(B, ctx);
}

static void slice_compact(hf_fraction_t *f)
{
    poly_compact(f->Q, f->ctx);
    for (int j = 0; j < f->dv; j++)
        poly_compact(f->P + j, f->ctx);
}

static hf_err_t build_all(const prep_t *p, const hf_target_t *t, const hf_slice_plan_t *plan,
                          const long *idx, long n, int narrow, hf_fraction_t *tmp, fmpz *cont,
                          long *made)
{
    hf_err_t err = HF_OK;
    *made = 0;
    if (p->windowed) {
        steps_t st;
        err = steps_make(&st, p, plan);
        for (long i = 0; err == HF_OK && i < n; i++) {
            err = slice_windowed(tmp + i, p, &st, plan, idx[i], narrow, cont + i);
            (*made)++; /* initialised even on error */
            if (err == HF_OK)
                slice_compact(tmp + i);
        }
        steps_clear(&st);
        return err;
    }
    hf_fraction_t whole;
    hf_fraction_init(&whole);
    err = hf_fraction_from_target(&whole, t);
    if (err == HF_OK)
        err = check_degrees(&whole, plan, p->name);
    for (long i = 0; err == HF_OK && i < n; i++) {
        err = slice_cut(tmp + i, &whole, plan, idx[i], cont + i);
        (*made)++;
        if (err == HF_OK)
            slice_compact(tmp + i);
    }
    hf_fraction_clear(&whole);
    return err;
}

hf_err_t hf_fraction_slices_build(const hf_target_t *t, const hf_slice_plan_t *plan,
                                  const long *idx, long n, hf_fraction_t *out, fmpz *contents)
{
    return hf_fraction_slices_build_narrow(t, plan, idx, n, 0, out, contents);
}

hf_err_t hf_fraction_slices_build_narrow(const hf_target_t *t, const hf_slice_plan_t *plan,
                                         const long *idx, long n, int narrow, hf_fraction_t *out,
                                         fmpz *contents)
{
    hf_err_t err = HF_OK;
    prep_t p;
    hf_fraction_t *tmp = NULL;
    fmpz *cont = NULL;
    long made = 0;
    HF_CHECK(err, prep_for_plan(&p, t, plan), cleanup);
    for (long i = 0; i < n; i++)
        if (idx[i] < 0 || idx[i] >= plan->nslices) {
            err = hf_error(HF_ERR_INPUT, "%s: slices: index %ld out of 0..%ld", p.name, idx[i],
                           plan->nslices - 1);
            goto cleanup;
        }
    tmp = hf_malloc((size_t)(n ? n : 1) * sizeof *tmp);
    if (!tmp) {
        err = HF_ERR_NOMEM;
        goto cleanup;
    }
    cont = _fmpz_vec_init(n ? n : 1);
    err = build_all(&p, t, plan, idx, n, narrow, tmp, cont, &made);
    for (long i = 0; err == HF_OK && i < n; i++) {
        hf_fraction_t old = out[i]; /* swapped in: the old value is cleared below */
        out[i] = tmp[i];
        tmp[i] = old;
        fmpz_swap(contents + i, cont + i);
    }
cleanup:
    for (long i = 0; i < made; i++)
        hf_fraction_clear(tmp + i);
    free(tmp);
    if (cont)
        _fmpz_vec_clear(cont, n ? n : 1);
    prep_clear(&p);
    return err;
}

void hf_fraction_slice_divide(hf_fraction_t *slice, const fmpz_t g)
{
    if (fmpz_is_one(g))
        return;
    fmpz_mpoly_scalar_divexact_fmpz(slice->Q, slice->Q, g, slice->ctx);
    for (int j = 0; j < slice->dv; j++)
        fmpz_mpoly_scalar_divexact_fmpz(slice->P + j, slice->P + j, g, slice->ctx);
}
