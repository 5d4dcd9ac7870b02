/* Minima proven over all integer keys, not only within a span (MATH.md 7.5), for targets
 * whose Newton polytope is a polygon (docs/search.md, "Certified over all keys").
 *
 * Let T = P/Q (reduced) depend on two coordinates with Z = Newt(Q) a polygon, and let K
 * represent T: conv(K) = X = Z + P' for a lattice polygon, segment or point P'.
 *  (a) Boundary count: every vertex of X lies on exactly two edges, so
 *      |K ∩ ∂X| = sum over edges e of X of (|K ∩ e| - 1).
 *  (b) Edges: the edge of X with outer normal v is F_v(Z) + F_v(P'); K ∩ e represents the
 *      limit target T_v. If T_v is p/q reduced with q of degree 1 in y = x^u (u the
 *      edge's primitive direction; "sigmoid-type"), then K ∩ e ⊇ {0, 1, s-1, s} (s its
 *      lattice length): |K ∩ e| >= min(s + 1, 4). Any edge holds its two endpoints.
 *  (c) If P' is not a point it has at least two outer normals v with F_v(P') an edge (a
 *      segment has two, a polygon at least three). At each, either Z has an edge there,
 *      made longer by at least 1 (which adds a point when that edge is sigmoid-type of
 *      length <= 2: min(s + 1, 4) grows from s = 1 or 2), or Z has a vertex there and X
 *      gains an edge (at least one more term in (a)).
 *  (d) If P' is a point, C = Q R with R a monomial: K = supp(Q), translated.
 * So when every edge of Z is sigmoid-type of length <= 2, every K other than supp(Q) has
 * |K| >= B0 + 2 with B0 = sum over Z's edges of (min(len + 1, 4) - 1); if supp(Q) is
 * feasible (exact test) and |supp Q| <= B0 + 2, then m*(T) = |supp Q| over all integer
 * keys, and supp(Q) is the only minimal support (up to translation) when
 * |supp Q| <= B0 + 1. */
#include <stdlib.h>
#include <string.h>

#include "headfuse/bounds.h"
#include "headfuse/newton.h"
#include "search/search_impl.h"

/* The reduced limit target along v is sigmoid-type: its denominator has two terms whose
 * exponents differ by a primitive vector, and it is not constant. */
static hf_err_t edge_is_sigmoid(const hf_target_t *t, const int64_t *v, int *yes)
{
    hf_target_t lim;
    hf_target_init_empty(&lim);
    hf_fraction_t f;
    slong e0[HF_D_MAX], e1[HF_D_MAX];
    *yes = 0;
    HF_TRY(hf_bounds_limit_target(t, v, &lim));
    hf_err_t err = hf_fraction_from_target(&f, &lim);
    if (err == HF_OK) {
        if (f.Q->length == 2 && !hf_fraction_is_constant(&f)) {
            fmpz_mpoly_get_term_exp_si(e0, f.Q, 0, f.ctx);
            fmpz_mpoly_get_term_exp_si(e1, f.Q, 1, f.ctx);
            fmpz_t g;
            fmpz_init(g);
            for (int j = 0; j < f.d; j++)
                fmpz_gcd_ui(g, g, (ulong)labs((long)(e0[j] - e1[j])));
            *yes = fmpz_is_one(g);
            fmpz_clear(g);
        }
        hf_fraction_clear(&f);
    }
    hf_target_clear(&lim);
    return err;
}

static long gcd_l(long a, long b)
{
    a = labs(a);
    b = labs(b);
    while (b) {
        long r = a % b;
        a = b;
        b = r;
    }
    return a;
}

hf_err_t hf_search_certify(const hf_target_t *t, hf_certificate_t *out)
{
    hf_err_t err = HF_OK;
    hf_fraction_t f;
    hf_newton_t N;
    hf_exact_t *ex = NULL;
    int64_t *keys = NULL;
    memset(out, 0, sizeof *out);
    out->m_star = -1;
    if (t->d != 2)
        return HF_OK;
    hf_newton_init(&N);
    HF_TRY(hf_fraction_from_target(&f, t));
    err = hf_newton_from_fraction(&f, 0, &N);
    if (err == HF_ERR_LIMIT) {
        hf_error_clear();
        err = HF_OK;
        goto done;
    }
    if (err != HF_OK || N.dim != 2)
        goto done;
    /* edges: the facets of the polygon; the two vertices on each */
    long b0 = 0;
    for (long k = 0; k < N.nfacets; k++) {
        const int64_t *v = N.facet_w + 2 * k;
        int yes = 0;
        HF_CHECK(err, edge_is_sigmoid(t, v, &yes), done);
        long on[2], c = 0;
        for (long i = 0; i < N.nverts && c < 2; i++)
            if (v[0] * N.verts[2 * i] + v[1] * N.verts[2 * i + 1] == N.facet_b[k])
                on[c++] = i;
        if (!yes || c != 2)
            goto done;
        long len = gcd_l((long)(N.verts[2 * on[0]] - N.verts[2 * on[1]]),
                         (long)(N.verts[2 * on[0] + 1] - N.verts[2 * on[1] + 1]));
        if (len > 2)
            goto done;
        b0 += (len + 1 < 4 ? len + 1 : 4) - 1;
    }
    /* the only support with a point for P': supp(Q) itself */
    long m = f.Q->length;
    keys = hf_malloc((size_t)m * 2 * sizeof *keys);
    if (!keys) {
        err = HF_ERR_NOMEM;
        goto done;
    }
    for (long i = 0; i < m; i++) {
        slong e[2];
        fmpz_mpoly_get_term_exp_si(e, f.Q, i, f.ctx);
        keys[2 * i] = e[0];
        keys[2 * i + 1] = e[1];
    }
    int feasible = 0;
    hf_reason_t reason;
    HF_CHECK(err, hf_exact_create(&f, &ex), done);
    HF_CHECK(err, hf_exact_check(ex, m, keys, &feasible, &reason, NULL), done);
    out->boundary = b0;
    if (feasible && m <= b0 + 2) {
        out->certified = 1;
        out->m_star = m;
        out->unique = m <= b0 + 1;
        out->rule = hf_rule_name(HF_RULE_NEWTON_2D);
    }
done:
    free(keys);
    hf_exact_destroy(&ex);
    hf_newton_clear(&N);
    hf_fraction_clear(&f);
    return err;
}
