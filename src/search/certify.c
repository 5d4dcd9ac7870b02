/* Minima proven over all integer keys, not only within a span (docs/math.md §9.3, §11.6), for
 * targets whose Newton polytope is a polygon (docs/search.md, "Certified over all keys"); three
 * dimensions are certify3d.c's, called from the entry point here.
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

#include "headfuse/faces3d.h"
#include "headfuse/newton.h"
#include "search/search_impl.h"

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
    memset(out, 0, sizeof *out);
    out->m_star = out->lb = out->nonpoint = -1;
    if (t->d == 3)
        return hf_search_certify_3d(t, out);
    if (t->d != 2)
        return HF_OK;
    hf_newton_init(&N);
    hf_fraction_init(&f);
    HF_CHECK(err, hf_fraction_from_target(&f, t), done);
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
        int64_t w3[HF_D_MAX] = {v[0], v[1]};
        int yes = 0;
        HF_CHECK(err, hf_faces3d_limit_is_sigmoid(t, w3, &yes), done);
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
    int feasible = 0;
    HF_CHECK(err, hf_search_supp_q_feasible(&f, &feasible), done);
    out->dim = 2;
    out->boundary = b0;
    out->nonpoint = b0 + 2;
    out->supp_q = m;
    out->supp_q_feasible = feasible;
    out->lb = feasible && m < b0 + 2 ? m : b0 + 2;
    if (feasible && m <= b0 + 2) {
        out->certified = 1;
        out->m_star = m;
        out->unique = m <= b0 + 1;
        out->rule = hf_rule_name(HF_RULE_NEWTON_2D);
    }
done:
    hf_newton_clear(&N);
    hf_fraction_clear(&f);
    return err;
}

void hf_search_best_lower(const hf_lower_t *low, const hf_certificate_t *c, fmpz_t lb,
                          const char **rule)
{
    fmpz_set(lb, low->lb);
    *rule = low->rule;
    if (c->dim && c->lb > 0 && fmpz_cmp_si(lb, c->lb) < 0) {
        fmpz_set_si(lb, c->lb);
        *rule = hf_rule_name(c->dim == 3 ? HF_RULE_NEWTON_3D : HF_RULE_NEWTON_2D);
    }
}
