/* Minima proven over all integer keys in three dimensions (docs/search.md, "In three
 * dimensions"; the proof is docs/math.md §11, Theorem 11.6).
 *
 * The face accounting (faces3d.h) bounds every support whose hull is not a translate of
 * Z = Newt(Q) by `bound` keys; a support whose hull is a translate of Z is supp(Q)
 * translated (R is a monomial). So when supp(Q) is feasible (the exact test) and
 * |supp Q| <= bound, m*(T) = |supp Q| over all integer keys (the only minimal support up to
 * translation when |supp Q| < bound); otherwise min(|supp Q|, bound) (bound alone when
 * supp(Q) is infeasible) is still a proven lower bound over all keys. Also the feasibility
 * of supp(Q), shared with the two-dimensional argument in certify.c. */
#include <stdlib.h>
#include <string.h>

#include "headfuse/bounds.h"
#include "headfuse/faces3d.h"
#include "search/search_impl.h"

hf_err_t hf_search_supp_q_feasible(const hf_fraction_t *f, int *feasible)
{
    long m = f->Q->length;
    int d = f->d;
    hf_exact_t *ex = NULL;
    hf_reason_t reason;
    hf_err_t err = HF_OK;
    int64_t *keys = hf_malloc((size_t)m * d * sizeof *keys);
    *feasible = 0;
    if (!keys)
        return HF_ERR_NOMEM;
    for (long i = 0; i < m; i++) {
        slong e[HF_D_MAX];
        fmpz_mpoly_get_term_exp_si(e, f->Q, i, f->ctx);
        for (int j = 0; j < d; j++)
            keys[i * d + j] = e[j];
    }
    HF_CHECK(err, hf_exact_create(f, &ex), done);
    HF_CHECK(err, hf_exact_check(ex, m, keys, feasible, &reason, NULL), done);
done:
    hf_exact_destroy(&ex);
    free(keys);
    return err;
}

hf_err_t hf_search_certify_3d(const hf_target_t *t, hf_certificate_t *out)
{
    hf_faces3d_t A;
    hf_fraction_t f;
    int feasible = 0;
    hf_err_t err;
    hf_faces3d_init(&A);
    hf_fraction_init(&f);
    HF_CHECK(err, hf_faces3d_from_target(t, &A), done);
    if (!A.ok)
        goto done;
    HF_CHECK(err, hf_fraction_from_target(&f, t), done);
    HF_CHECK(err, hf_search_supp_q_feasible(&f, &feasible), done);
    long m = f.Q->length;
    out->dim = 3;
    out->boundary = A.base;
    out->nonpoint = A.bound;
    out->shares = A.base + A.delta;
    out->zones = A.seg_bound < A.base + A.zone_delta ? A.seg_bound : A.base + A.zone_delta;
    out->supp_q = m;
    out->supp_q_feasible = feasible;
    out->lb = feasible && m < A.bound ? m : A.bound;
    hf_faces3d_describe(&A, out->faces, sizeof out->faces);
    hf_faces3d_weakest(&A, out->weakest, sizeof out->weakest);
    if (feasible && m <= A.bound) {
        out->certified = 1;
        out->m_star = m;
        out->unique = m < A.bound;
        out->rule = hf_rule_name(HF_RULE_NEWTON_3D);
    }
done:
    hf_fraction_clear(&f);
    hf_faces3d_clear(&A);
    return err;
}
