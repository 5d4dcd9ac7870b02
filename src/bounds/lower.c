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
 *   (e) end slices (hf_lb_ends; hf_bounds_lower_info only): the extreme levels of a support
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
 * that W_64 and its limits cost little, and memoised on their canonical form
 * (lower_canon.c; docs/bounds.md explains it); rules (c) and (e) are lower_faces.c. */
#include <assert.h>
#include <stdlib.h>
#include <string.h>

#include <flint/nmod_vec.h>
#include <flint/ulong_extras.h>

#include "bounds/lower_impl.h"
#include "headfuse/bounds.h"
#include "headfuse/newton.h"

const hf_bounds_cdd_limits_t hf_lb_cdd_limits = {LB_CDD_TERMS, LB_CDD_DIM};

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

/* Rule (b) at a canonical target: *known = 0 when the count is out of reach. */
static hf_err_t lb_newton(lb_ctx_t *cx, const lb_tgt_t *C, fmpz_t v, int *known)
{
    hf_target_t t;
    HF_TRY(hf_lb_to_target(C, &t));
    cx->work += C->natoms;
    hf_err_t err = hf_bounds_newton_count(&t, &cx->arr, &hf_lb_cdd_limits, v, known);
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
    hf_lb_tgt_zero(&A);
    hf_lb_tgt_zero(&B);
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
        HF_CHECK(err, hf_lb_canon(cx, C, selp, &A, &sa), cleanup);
        HF_CHECK(err, hf_lb_canon(cx, C, seln, &B, &sb), cleanup);
        HF_CHECK(err, lb_rec(cx, &A, &sa, depth + 1, 1, a), cleanup);
        HF_CHECK(err, lb_rec(cx, &B, &sb, depth + 1, 1, b), cleanup);
        hf_lb_tgt_clear(&A);
        hf_lb_tgt_clear(&B);
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
    hf_lb_tgt_clear(&B);
    hf_lb_tgt_clear(&A);
    free(seln);
    free(selp);
    return err;
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

hf_err_t hf_lb_of_target(lb_ctx_t *cx, const hf_target_t *t, int try_newton, fmpz_t lb)
{
    hf_err_t err = HF_OK;
    lb_tgt_t raw, C;
    hf_bounds_buf_t ser = {0};
    hf_lb_tgt_zero(&raw);
    hf_lb_tgt_zero(&C);
    HF_CHECK(err, hf_lb_from_target(t, &raw), cleanup);
    HF_CHECK(err, hf_lb_canon(cx, &raw, NULL, &C, &ser), cleanup);
    HF_CHECK(err, lb_rec(cx, &C, &ser, 0, try_newton, lb), cleanup);
cleanup:
    hf_bounds_buf_clear(&ser);
    hf_lb_tgt_clear(&C);
    hf_lb_tgt_clear(&raw);
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
    HF_CHECK(err, hf_bounds_newton_count(t, &cx.arr, &hf_lb_cdd_limits, v, &known), cleanup);
    if (known) {
        /* (b); (a) and (c) cannot exceed it, so the directions are not explored */
        fmpz_set(lb, v);
        rule = hf_rule_name(fmpz_cmp_si(v, 1) > 0 ? HF_RULE_NEWTON_VERTICES : HF_RULE_TRIVIAL);
        *complete = 1;
        if (disjoint) {
            err = hf_lb_disjoint_faces(&cx, t, c, &done);
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
        HF_CHECK(err, hf_lb_of_target(&cx, t, 0, lb), cleanup);
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
        HF_CHECK(err, hf_lb_ends(&cx, t, 1, c), cleanup);
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
    HF_TRY(hf_lb_of_target(cx, t, 0, lb));
    *complete = !cx->truncated;
    return HF_OK;
}

hf_err_t hf_bounds_lower_face_rule(const hf_target_t *t, fmpz_t lb, int *complete)
{
    return lb_run(t, 0, lb_face_rule_only, lb, complete);
}

hf_err_t hf_bounds_lower_disjoint(const hf_target_t *t, fmpz_t out, int *done)
{
    return lb_run(t, 1, hf_lb_disjoint_faces, out, done);
}
