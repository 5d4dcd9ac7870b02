/* Tests of the exact support test against a plain, independent reference decision.
 *
 * The reference builds M densely over Q by linear search (no hashing, no term lists of
 * its own), takes the null space from fmpq_mat_rref, and decides strict positivity with
 * GLPK's exact simplex (max t s.t. N_c lambda >= t, t <= 1, |lambda| <= 1: feasible iff
 * t* > 0). Every support of several small spaces is decided by hf_exact_check, by
 * hf_exact_check_nomod and by the reference, translated and reordered; every witness is
 * checked by its own polynomial identity U_j Q == P_j C (fmpq_mpoly products, independent
 * of M) and numerically against the target's heads. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <glpk.h>

#include <flint/fmpq_mat.h>
#include <flint/fmpq_mpoly.h>
#include <flint/fmpq_vec.h>
#include <flint/fmpz_mat.h>
#include <flint/fmpz_vec.h>
#include <flint/nmod_mat.h>

#include "exact/exact_impl.h"
#include "headfuse/exact.h"
#include "families.h"
#include "unit.h"

/* ------------------------------------------------------------ seeded randomness */

/* ------------------------------------------------------------ target builders */

/* sigma(q_j) with value vector v0 at key 0 and v1 at key e_j. */
static void add_sigmoid_v(hf_target_t *t, int j, const long *v0, const long *v1)
{
    hf_head_t h;
    int64_t k[HF_D_MAX] = {0};
    hf_head_init(&h, t->d, t->dv);
    fam_atom_q(&h, k, 1, 1, v0, 1);
    k[j] = 1;
    fam_atom_q(&h, k, 1, 1, v1, 1);
    CU_ASSERT_FATAL(hf_target_add_head(t, &h) == HF_OK);
    hf_head_clear(&h);
}

static void add_sigmoid(hf_target_t *t, int j)
{
    long zero = 0, one = 1;
    add_sigmoid_v(t, j, &zero, &one);
}

/* W_d = sum_j sigma(q_j). */
static void make_wd(hf_target_t *t, int d)
{
    CU_ASSERT_FATAL(hf_target_init(t, "wd", d, 1) == HF_OK);
    for (int j = 0; j < d; j++)
        add_sigmoid(t, j);
}

/* dv = 2, values (v, 2v - 1) of W_2: an affine image, so the same feasible supports. */
static void make_w2_affine(hf_target_t *t)
{
    long v0[2] = {0, -1}, v1[2] = {1, 1};
    CU_ASSERT_FATAL(hf_target_init(t, "w2-affine", 2, 2) == HF_OK);
    add_sigmoid_v(t, 0, v0, v1);
    add_sigmoid_v(t, 1, v0, v1);
}

/* dv = 2, two different sigmoid heads stacked: (s1 + s2, s1 - 2 s2). */
static void make_stacked(hf_target_t *t)
{
    long z[2] = {0, 0}, a[2] = {1, 1}, b[2] = {1, -2};
    CU_ASSERT_FATAL(hf_target_init(t, "stacked", 2, 2) == HF_OK);
    add_sigmoid_v(t, 0, z, a);
    add_sigmoid_v(t, 1, z, b);
}

/* Head with keys (0,0), (1,0), weights 1, 3/2, values 0, -1/2, plus sigma(q2). */
static void make_rational(hf_target_t *t)
{
    hf_head_t h;
    long zero = 0, mhalf = -1;
    CU_ASSERT_FATAL(hf_target_init(t, "rational", 2, 1) == HF_OK);
    hf_head_init(&h, 2, 1);
    fam_atom_q(&h, (int64_t[]){0, 0}, 1, 1, &zero, 1);
    fam_atom_q(&h, (int64_t[]){1, 0}, 3, 2, &mhalf, 2);
    CU_ASSERT_FATAL(hf_target_add_head(t, &h) == HF_OK);
    hf_head_clear(&h);
    add_sigmoid(t, 1);
}

/* The strict-positivity trap: one head, keys 0, 1, 2, weights 1, values 0, 1, 2, so
 * Q = 1 + x + x^2 and P = x + 2x^2. Q (1 - x)^2 = 1 - x - x^3 + x^4 and
 * P (1 - x)^2 = x - 3x^3 + 2x^4, so K = {0,1,3,4} has a one-dimensional null space whose
 * weights (1, -1, -1, 1) have mixed signs. */
static void make_trap(hf_target_t *t)
{
    hf_head_t h;
    CU_ASSERT_FATAL(hf_target_init(t, "trap", 1, 1) == HF_OK);
    hf_head_init(&h, 1, 1);
    for (long k = 0; k < 3; k++)
        fam_atom_q(&h, (int64_t[]){k}, 1, 1, &k, 1);
    CU_ASSERT_FATAL(hf_target_add_head(t, &h) == HF_OK);
    hf_head_clear(&h);
}

/* A small random target in dimension d (seeded by the caller). */
static void make_random(hf_target_t *t, int d, int dv)
{
    CU_ASSERT_FATAL(hf_target_init(t, "random", d, dv) == HF_OK);
    int nh = (int)fam_rnd(1, 2);
    for (int hh = 0; hh < nh; hh++) {
        hf_head_t h;
        hf_head_init(&h, d, dv);
        long na = fam_rnd(2, 3);
        for (long i = 0; i < na; i++) {
            int64_t k[2];
            long v[2];
            for (int a = 0; a < d; a++)
                k[a] = fam_rnd(0, 1 + (d == 1));
            for (int j = 0; j < dv; j++)
                v[j] = fam_rnd(-2, 2);
            fam_atom_q(&h, k, fam_rnd(1, 3), fam_rnd(1, 2), v, fam_rnd(1, 2));
        }
        CU_ASSERT_FATAL(hf_target_add_head(t, &h) == HF_OK);
        hf_head_clear(&h);
    }
}

/* ------------------------------------------------------------ reference decision */

typedef struct {
    int feasible;
    long nullity;
} ref_t;

/* Rows are (j, exponent) pairs kept in a plain list. */
typedef struct {
    long n, cap;
    int d;
    int *j;
    ulong *e;
} rowlist_t;

static long row_of(rowlist_t *rl, int j, const ulong *e)
{
    for (long i = 0; i < rl->n; i++)
        if (rl->j[i] == j && !memcmp(rl->e + i * rl->d, e, (size_t)rl->d * sizeof *e))
            return i;
    if (rl->n == rl->cap) {
        rl->cap = rl->cap ? 2 * rl->cap : 64;
        rl->j = realloc(rl->j, (size_t)rl->cap * sizeof *rl->j);
        rl->e = realloc(rl->e, (size_t)rl->cap * rl->d * sizeof *rl->e);
    }
    rl->j[rl->n] = j;
    memcpy(rl->e + rl->n * rl->d, e, (size_t)rl->d * sizeof *e);
    return rl->n++;
}

/* GLPK exact simplex: max t s.t. Nc lambda - t >= 0, -1 <= lambda <= 1, t <= 1. */
static int glpk_positive(const fmpz *Nc, long m, long r)
{
    glp_prob *lp = glp_create_prob();
    glp_set_obj_dir(lp, GLP_MAX);
    glp_add_rows(lp, (int)m);
    glp_add_cols(lp, (int)r + 1);
    for (long k = 0; k < m; k++)
        glp_set_row_bnds(lp, (int)k + 1, GLP_LO, 0.0, 0.0);
    for (long i = 0; i < r; i++)
        glp_set_col_bnds(lp, (int)i + 1, GLP_DB, -1.0, 1.0);
    glp_set_col_bnds(lp, (int)r + 1, GLP_UP, 0.0, 1.0);
    glp_set_obj_coef(lp, (int)r + 1, 1.0);
    long ne = m * (r + 1);
    int *ia = malloc((size_t)(ne + 1) * sizeof *ia), *ja = malloc((size_t)(ne + 1) * sizeof *ja);
    double *ar = malloc((size_t)(ne + 1) * sizeof *ar);
    long x = 0;
    for (long k = 0; k < m; k++) {
        for (long i = 0; i < r; i++) {
            x++;
            ia[x] = (int)k + 1;
            ja[x] = (int)i + 1;
            ar[x] = fmpz_get_d(Nc + k * r + i); /* small integers: exact in a double */
            CU_ASSERT(fmpz_bits(Nc + k * r + i) < 50);
        }
        x++;
        ia[x] = (int)k + 1;
        ja[x] = (int)r + 1;
        ar[x] = -1.0;
    }
    glp_load_matrix(lp, (int)ne, ia, ja, ar);
    glp_smcp parm;
    glp_init_smcp(&parm);
    parm.msg_lev = GLP_MSG_OFF;
    int ret = glp_exact(lp, &parm);
    CU_ASSERT(ret == 0 && glp_get_status(lp) == GLP_OPT);
    int pos = glp_get_obj_val(lp) > 0;
    glp_delete_prob(lp);
    free(ar);
    free(ja);
    free(ia);
    return pos;
}

static ref_t ref_decide(const hf_fraction_t *f, long m, const int64_t *keys)
{
    int d = f->d, dv = f->dv;
    long n = m * (dv + 1);
    ref_t res = {0, 0};
    rowlist_t rl = {0, 0, d, NULL, NULL};
    int64_t kmin[HF_D_MAX];
    ulong e[HF_D_MAX], mono[HF_D_MAX];
    for (int a = 0; a < d; a++) {
        kmin[a] = keys[a];
        for (long i = 0; i < m; i++)
            if (keys[i * d + a] < kmin[a])
                kmin[a] = keys[i * d + a];
    }
    /* entries: (row, col, coefficient, sign) collected first, rows discovered on the way */
    long ne = 0, cap = 0;
    long *er = NULL, *ec = NULL;
    const fmpz **ev = NULL;
    int *es = NULL;
    for (int j = 0; j < dv; j++) {
        for (long k = 0; k < m; k++) {
            for (int pass = 0; pass < 2; pass++) {
                const fmpz_mpoly_struct *A = pass == 0 ? f->Q : f->P + j;
                for (slong t = 0; t < A->length; t++) {
                    fmpz_mpoly_get_term_exp_ui(e, A, t, f->ctx);
                    for (int a = 0; a < d; a++)
                        mono[a] = e[a] + (ulong)(keys[k * d + a] - kmin[a]);
                    if (ne == cap) {
                        cap = cap ? 2 * cap : 256;
                        er = realloc(er, (size_t)cap * sizeof *er);
                        ec = realloc(ec, (size_t)cap * sizeof *ec);
                        ev = realloc(ev, (size_t)cap * sizeof *ev);
                        es = realloc(es, (size_t)cap * sizeof *es);
                    }
                    er[ne] = row_of(&rl, j, mono);
                    ec[ne] = pass == 0 ? k * dv + j : m * dv + k;
                    ev[ne] = A->coeffs + t;
                    es[ne++] = pass == 0 ? 1 : -1;
                }
            }
        }
    }
    fmpq_mat_t M, B;
    fmpq_mat_init(M, rl.n, n);
    fmpq_mat_init(B, rl.n, n);
    for (long x = 0; x < ne; x++) {
        fmpq *c = fmpq_mat_entry(M, er[x], ec[x]);
        fmpz_t v;
        fmpz_init(v);
        fmpz_mul_si(v, ev[x], es[x]);
        fmpq_add_fmpz(c, c, v);
        fmpz_clear(v);
    }
    long rank = fmpq_mat_rref(B, M);
    long r = n - rank;
    res.nullity = r;
    if (r > 0) {
        long *piv = malloc((size_t)(rank + 1) * sizeof *piv);
        char *is_piv = calloc((size_t)n, 1);
        for (long i = 0; i < rank; i++) {
            long c = 0;
            while (fmpq_is_zero(fmpq_mat_entry(B, i, c)))
                c++;
            piv[i] = c;
            is_piv[c] = 1;
        }
        fmpz *Nc = _fmpz_vec_init(m * r);
        fmpq *col = _fmpq_vec_init(n);
        fmpz_t den, t;
        fmpz_init(den);
        fmpz_init(t);
        long s = 0;
        for (long fc = 0; fc < n; fc++) {
            if (is_piv[fc])
                continue;
            for (long i = 0; i < n; i++)
                fmpq_zero(col + i);
            fmpq_one(col + fc);
            for (long i = 0; i < rank; i++)
                fmpq_neg(col + piv[i], fmpq_mat_entry(B, i, fc));
            fmpz_one(den);
            for (long k = 0; k < m; k++)
                fmpz_lcm(den, den, fmpq_denref(col + m * dv + k));
            for (long k = 0; k < m; k++) {
                fmpz_divexact(t, den, fmpq_denref(col + m * dv + k));
                fmpz_mul(Nc + k * r + s, t, fmpq_numref(col + m * dv + k));
            }
            s++;
        }
        /* primitive columns; entries beyond 2^50 would not be exact doubles for GLPK, and
         * then the reference abstains (feasible = -1) */
        int small = 1;
        for (long c = 0; c < r; c++) {
            fmpz_zero(t);
            for (long k = 0; k < m; k++)
                fmpz_gcd(t, t, Nc + k * r + c);
            for (long k = 0; k < m && !fmpz_is_zero(t); k++) {
                fmpz_divexact(Nc + k * r + c, Nc + k * r + c, t);
                small = small && fmpz_bits(Nc + k * r + c) < 50;
            }
        }
        res.feasible = small ? glpk_positive(Nc, m, r) : -1;
        fmpz_clear(t);
        fmpz_clear(den);
        _fmpq_vec_clear(col, n);
        _fmpz_vec_clear(Nc, m * r);
        free(is_piv);
        free(piv);
    }
    fmpq_mat_clear(B);
    fmpq_mat_clear(M);
    free(es);
    free(ev);
    free(ec);
    free(er);
    free(rl.e);
    free(rl.j);
    return res;
}

/* ------------------------------------------------------------ witness checks */

/* Exact identity, independent of M: every weight > 0 and U_j Q == P_j C with
 * C = sum c_k x^k and U_j = sum c_k v_kj x^k (keys shifted to minimum 0). */
static int witness_identity_ok(const hf_fraction_t *f, const hf_head_t *h)
{
    int d = f->d, dv = f->dv, ok = h->natoms >= 1 && h->d == d && h->dv == dv;
    if (!ok)
        return 0;
    for (long i = 0; i < h->natoms; i++)
        ok = ok && fmpq_sgn(h->weights + i) > 0;
    fmpq_mpoly_ctx_t ctx;
    fmpq_mpoly_t C, U, Qq, Pq, L, R;
    fmpq_t cv;
    ulong e[HF_D_MAX];
    int64_t kmin[HF_D_MAX];
    fmpq_mpoly_ctx_init(ctx, d, ORD_LEX);
    fmpq_mpoly_init(C, ctx);
    fmpq_mpoly_init(U, ctx);
    fmpq_mpoly_init(Qq, ctx);
    fmpq_mpoly_init(Pq, ctx);
    fmpq_mpoly_init(L, ctx);
    fmpq_mpoly_init(R, ctx);
    fmpq_init(cv);
    for (int a = 0; a < d; a++) {
        kmin[a] = h->keys[a];
        for (long i = 0; i < h->natoms; i++)
            if (h->keys[i * d + a] < kmin[a])
                kmin[a] = h->keys[i * d + a];
    }
    for (long i = 0; i < h->natoms; i++) {
        for (int a = 0; a < d; a++)
            e[a] = (ulong)(h->keys[i * d + a] - kmin[a]);
        fmpq_mpoly_push_term_fmpq_ui(C, h->weights + i, e, ctx);
    }
    fmpq_mpoly_sort_terms(C, ctx);
    fmpq_mpoly_combine_like_terms(C, ctx);
    for (slong t = 0; t < f->Q->length; t++) {
        fmpz_mpoly_get_term_exp_ui(e, f->Q, t, f->ctx);
        fmpq_mpoly_push_term_fmpz_ui(Qq, f->Q->coeffs + t, e, ctx);
    }
    fmpq_mpoly_sort_terms(Qq, ctx);
    fmpq_mpoly_combine_like_terms(Qq, ctx); /* also puts the content in canonical form */
    for (int j = 0; j < dv && ok; j++) {
        fmpq_mpoly_zero(U, ctx);
        for (long i = 0; i < h->natoms; i++) {
            for (int a = 0; a < d; a++)
                e[a] = (ulong)(h->keys[i * d + a] - kmin[a]);
            fmpq_mul(cv, h->weights + i, h->values + i * dv + j);
            fmpq_mpoly_push_term_fmpq_ui(U, cv, e, ctx);
        }
        fmpq_mpoly_sort_terms(U, ctx);
        fmpq_mpoly_combine_like_terms(U, ctx);
        fmpq_mpoly_zero(Pq, ctx);
        for (slong t = 0; t < f->P[j].length; t++) {
            fmpz_mpoly_get_term_exp_ui(e, f->P + j, t, f->ctx);
            fmpq_mpoly_push_term_fmpz_ui(Pq, f->P[j].coeffs + t, e, ctx);
        }
        fmpq_mpoly_sort_terms(Pq, ctx);
        fmpq_mpoly_combine_like_terms(Pq, ctx);
        fmpq_mpoly_mul(L, U, Qq, ctx);
        fmpq_mpoly_mul(R, Pq, C, ctx);
        ok = fmpq_mpoly_equal(L, R, ctx);
    }
    fmpq_clear(cv);
    fmpq_mpoly_clear(R, ctx);
    fmpq_mpoly_clear(L, ctx);
    fmpq_mpoly_clear(Pq, ctx);
    fmpq_mpoly_clear(Qq, ctx);
    fmpq_mpoly_clear(U, ctx);
    fmpq_mpoly_clear(C, ctx);
    fmpq_mpoly_ctx_clear(ctx);
    return ok;
}

/* Numeric agreement with the target's own heads at a few seeded queries (evidence only:
 * the exact identity above is what decides). */
static int witness_numeric_ok(const hf_target_t *t, const hf_head_t *h)
{
    double q[HF_D_MAX], want[HF_DV_MAX], got[HF_DV_MAX], out[HF_DV_MAX];
    for (int s = 0; s < 4; s++) {
        for (int a = 0; a < t->d; a++)
            q[a] = (double)fam_rnd(-150, 150) / 100.0;
        for (int j = 0; j < t->dv; j++)
            want[j] = 0;
        for (int hh = 0; hh < t->nheads; hh++) {
            hf_head_eval(t->heads + hh, q, out);
            for (int j = 0; j < t->dv; j++)
                want[j] += out[j];
        }
        hf_head_eval(h, q, got);
        for (int j = 0; j < t->dv; j++)
            if (!(fabs(got[j] - want[j]) <= 1e-9 * (1 + fabs(want[j]))))
                return 0;
    }
    return 1;
}

/* ------------------------------------------------------------ the comparison driver */

typedef struct {
    long supports, feasible, by_reason[8];
    long trap;         /* nontrivial null space, still infeasible */
    long lp_feasible;  /* feasible with nullity >= 2 */
    long modp_decided; /* decided by the modular rank alone */
    long abstained;    /* the GLPK reference could not take the numbers */
    long rspace;       /* also decided in R-space (applicable there) */
} tally_t;

static void print_keys(const char *what, long m, int d, const int64_t *keys)
{
    fprintf(stderr, "\n  %s: {", what);
    for (long i = 0; i < m; i++) {
        fprintf(stderr, i ? "; " : "");
        for (int a = 0; a < d; a++)
            fprintf(stderr, a ? ",%lld" : "%lld", (long long)keys[i * d + a]);
    }
    fprintf(stderr, "}\n");
}

/* The R-space form (its own tester, so the counters of e stay as they are): the same
 * answer and, because R -> (P R, Q R) maps its null space onto the direct one, the same
 * nullity class of reason; a feasible answer carries a witness that passes the identity. */
static void rspace_compare(const hf_fraction_t *f, long m, const int64_t *keys, const ref_t *ref,
                           tally_t *tally)
{
    hf_exact_t *e = NULL;
    hf_head_t w;
    int fe = 0, applicable = 0;
    hf_reason_t r;
    CU_ASSERT_FATAL(hf_exact_create(f, &e) == HF_OK);
    hf_head_init(&w, f->d, f->dv);
    CU_ASSERT_FATAL(hf_exact_check_rspace(e, m, keys, &fe, &r, &w, &applicable) == HF_OK);
    if (applicable) {
        tally->rspace++;
        CU_ASSERT(fe == ref->feasible);
        if (fe != ref->feasible)
            print_keys("R-space disagrees", m, f->d, keys);
        if (fe) {
            CU_ASSERT(r == HF_REASON_WITNESS);
            CU_ASSERT(witness_identity_ok(f, &w));
            CU_ASSERT(w.natoms == m && !memcmp(w.keys, keys, (size_t)m * f->d * sizeof *keys));
        } else if (ref->nullity == 0) {
            CU_ASSERT(r == HF_REASON_MODP_RANK || r == HF_REASON_NULLSPACE_Q ||
                      r == HF_REASON_BAD_SUPPORT);
        } else if (ref->nullity > 0) {
            CU_ASSERT(r == (ref->nullity == 1 ? HF_REASON_SIGN : HF_REASON_FARKAS));
        }
    }
    hf_head_clear(&w);
    hf_exact_destroy(&e);
}

/* Decide one support every way and compare. Returns the reference decision. */
static ref_t compare_one(hf_exact_t *e, const hf_fraction_t *f, const hf_target_t *t, long m,
                         const int64_t *keys, tally_t *tally)
{
    int d = f->d, fe1, fe2, fe3;
    hf_reason_t r1, r2, r3;
    hf_head_t w1, w2, w3;
    int64_t *moved = malloc((size_t)m * d * sizeof *moved);
    int64_t shift[HF_D_MAX];
    hf_head_init(&w1, d, f->dv);
    hf_head_init(&w2, d, f->dv);
    hf_head_init(&w3, d, f->dv);

    ref_t ref = ref_decide(f, m, keys);
    CU_ASSERT_FATAL(hf_exact_check(e, m, keys, &fe1, &r1, &w1) == HF_OK);
    CU_ASSERT_FATAL(hf_exact_check_nomod(e, m, keys, &fe2, &r2, &w2) == HF_OK);
    if (ref.feasible < 0) { /* reference abstained: hold check to nomod (and witnesses) */
        ref.feasible = fe2;
        tally->abstained++;
    }
    /* the same key set translated and listed in reverse order */
    for (int a = 0; a < d; a++)
        shift[a] = fam_rnd(-7, 7);
    for (long i = 0; i < m; i++)
        for (int a = 0; a < d; a++)
            moved[i * d + a] = keys[(m - 1 - i) * d + a] + shift[a];
    CU_ASSERT_FATAL(hf_exact_check(e, m, moved, &fe3, &r3, &w3) == HF_OK);

    int agree = fe1 == ref.feasible && fe2 == ref.feasible && fe3 == ref.feasible;
    CU_ASSERT(agree);
    rspace_compare(f, m, keys, &ref, tally);
    if (!agree) {
        print_keys(t->name, m, d, keys);
        fprintf(stderr, "  reference %d (nullity %ld), check %d (%s), nomod %d (%s), moved %d\n",
                ref.feasible, ref.nullity, fe1, hf_reason_name(r1), fe2, hf_reason_name(r2), fe3);
    }
    /* the reasons must match the reference's null space */
    if (ref.feasible) {
        CU_ASSERT(r1 == HF_REASON_WITNESS && r2 == HF_REASON_WITNESS && r3 == HF_REASON_WITNESS);
    } else if (ref.nullity == 0) {
        CU_ASSERT(r1 == HF_REASON_MODP_RANK || r1 == HF_REASON_NULLSPACE_Q);
        CU_ASSERT(r2 == HF_REASON_NULLSPACE_Q);
    } else {
        hf_reason_t want = ref.nullity == 1 ? HF_REASON_SIGN : HF_REASON_FARKAS;
        CU_ASSERT(r1 == want && r2 == want && r3 == want);
        tally->trap++;
    }
    if (fe1) {
        CU_ASSERT(witness_identity_ok(f, &w1));
        CU_ASSERT(witness_identity_ok(f, &w2));
        CU_ASSERT(witness_identity_ok(f, &w3));
        CU_ASSERT(witness_numeric_ok(t, &w1));
        CU_ASSERT(w1.natoms == m && !memcmp(w1.keys, keys, (size_t)m * d * sizeof *keys));
        CU_ASSERT(w3.natoms == m && !memcmp(w3.keys, moved, (size_t)m * d * sizeof *keys));
        if (ref.nullity >= 2)
            tally->lp_feasible++;
    }
    tally->supports++;
    tally->feasible += ref.feasible;
    tally->by_reason[r1]++;
    tally->modp_decided += r1 == HF_REASON_MODP_RANK;
    hf_head_clear(&w3);
    hf_head_clear(&w2);
    hf_head_clear(&w1);
    free(moved);
    return ref;
}

/* Every subset of pts (npts points of dimension d) with 1..maxsize elements. */
static void compare_all(const hf_target_t *t, const int64_t *pts, int npts, int maxsize,
                        tally_t *tally)
{
    hf_fraction_t f;
    hf_fraction_init(&f);
    hf_exact_t *e = NULL;
    int d = t->d;
    int64_t *keys = malloc((size_t)npts * d * sizeof *keys);
    CU_ASSERT_FATAL(hf_fraction_from_target(&f, t) == HF_OK);
    CU_ASSERT_FATAL(hf_exact_create(&f, &e) == HF_OK);
    memset(tally, 0, sizeof *tally);
    for (unsigned long mask = 1; mask < (1ul << npts); mask++) {
        long m = 0;
        for (int i = 0; i < npts; i++)
            if (mask >> i & 1)
                memcpy(keys + d * m++, pts + i * d, (size_t)d * sizeof *keys);
        if (m <= maxsize)
            compare_one(e, &f, t, m, keys, tally);
    }
    /* counters: each support was decided three times (check, nomod, moved) */
    const hf_exact_stats_t *st = hf_exact_stats(e);
    long sum = 0;
    for (int r = 0; r < 8; r++)
        sum += st->by_reason[r];
    CU_ASSERT(st->decided == 3 * tally->supports && sum == st->decided);
    CU_ASSERT(st->feasible == 3 * tally->feasible &&
              st->by_reason[HF_REASON_WITNESS] == st->feasible);
    fprintf(stderr,
            "\n  %s: %ld supports, %ld feasible, %ld by modular rank, %ld traps, "
            "%ld LP-feasible, %ld without GLPK, %ld also in R-space ",
            t->name, tally->supports, tally->feasible, tally->modp_decided, tally->trap,
            tally->lp_feasible, tally->abstained, tally->rspace);
    hf_exact_destroy(&e);
    hf_fraction_clear(&f);
    free(keys);
}

/* Points of {0..s}^d, row-major. Returns the count. */
static int grid(int d, int s, int64_t *pts)
{
    int n = 1;
    for (int a = 0; a < d; a++)
        n *= s + 1;
    for (int i = 0; i < n; i++) {
        int x = i;
        for (int a = 0; a < d; a++) {
            pts[i * d + a] = x % (s + 1);
            x /= s + 1;
        }
    }
    return n;
}

/* ------------------------------------------------------------ the tests */

static void test_w1_all(void)
{
    hf_target_t t;
    tally_t ty;
    int64_t pts[4];
    make_wd(&t, 1);
    compare_all(&t, pts, grid(1, 3, pts), 4, &ty);
    CU_ASSERT(ty.supports == 15 && ty.feasible > 0);
    hf_target_clear(&t);
}

static void test_w2_all(void)
{
    hf_target_t t;
    tally_t ty;
    int64_t pts[18];
    make_wd(&t, 2);
    compare_all(&t, pts, grid(2, 2, pts), 5, &ty);
    CU_ASSERT(ty.supports == 9 + 36 + 84 + 126 + 126);
    CU_ASSERT(ty.feasible > 0 && ty.modp_decided > 0);
    hf_target_clear(&t);
}

static void test_w3_all(void)
{
    hf_target_t t;
    tally_t ty;
    int64_t pts[24];
    make_wd(&t, 3);
    compare_all(&t, pts, grid(3, 1, pts), 8, &ty);
    CU_ASSERT(ty.supports == 255);
    CU_ASSERT(ty.feasible == 1); /* only the whole cube {0,1}^3 */
    hf_target_clear(&t);
}

static void test_dv2_affine(void)
{
    hf_target_t t, w;
    hf_fraction_t fa, fw;
    hf_fraction_init(&fa);
    hf_fraction_init(&fw);
    hf_exact_t *ea = NULL, *ew = NULL;
    tally_t ty;
    int64_t pts[18], keys[18];
    int n = grid(2, 2, pts);
    make_w2_affine(&t);
    compare_all(&t, pts, n, 5, &ty);
    CU_ASSERT(ty.feasible > 0);
    /* same decisions as W_2 (values (v, 2v - 1) are an affine image) */
    make_wd(&w, 2);
    CU_ASSERT_FATAL(hf_fraction_from_target(&fa, &t) == HF_OK);
    CU_ASSERT_FATAL(hf_fraction_from_target(&fw, &w) == HF_OK);
    CU_ASSERT_FATAL(hf_exact_create(&fa, &ea) == HF_OK);
    CU_ASSERT_FATAL(hf_exact_create(&fw, &ew) == HF_OK);
    for (unsigned long mask = 1; mask < (1ul << n); mask++) {
        long m = 0;
        int a, b;
        hf_reason_t ra, rb;
        for (int i = 0; i < n; i++)
            if (mask >> i & 1)
                memcpy(keys + 2 * m++, pts + 2 * i, 2 * sizeof *keys);
        CU_ASSERT_FATAL(hf_exact_check(ea, m, keys, &a, &ra, NULL) == HF_OK);
        CU_ASSERT_FATAL(hf_exact_check(ew, m, keys, &b, &rb, NULL) == HF_OK);
        CU_ASSERT(a == b);
    }
    hf_exact_destroy(&ew);
    hf_exact_destroy(&ea);
    hf_fraction_clear(&fw);
    hf_fraction_clear(&fa);
    hf_target_clear(&w);
    hf_target_clear(&t);
}

static void test_dv2_stacked(void)
{
    hf_target_t t;
    tally_t ty;
    int64_t pts[18];
    make_stacked(&t);
    compare_all(&t, pts, grid(2, 2, pts), 5, &ty);
    CU_ASSERT(ty.feasible > 0);
    hf_target_clear(&t);
}

static void test_rational_all(void)
{
    hf_target_t t;
    tally_t ty;
    int64_t pts[18];
    make_rational(&t);
    compare_all(&t, pts, grid(2, 2, pts), 5, &ty);
    CU_ASSERT(ty.feasible > 0);
    hf_target_clear(&t);
}

static void test_trap_all(void)
{
    hf_target_t t;
    tally_t ty;
    int64_t pts[8];
    make_trap(&t);
    compare_all(&t, pts, grid(1, 7, pts), 8, &ty);
    /* supports with a nonzero null space but no positive weights exist and were refused,
     * both with nullity 1 (sign) and nullity >= 2 (Gordan certificate) */
    CU_ASSERT(ty.trap > 0);
    CU_ASSERT(ty.by_reason[HF_REASON_SIGN] > 0);
    CU_ASSERT(ty.by_reason[HF_REASON_FARKAS] > 0);
    CU_ASSERT(ty.lp_feasible > 0);
    hf_target_clear(&t);
}

/* The specific supports of the trap of docs/math.md §2.6. */
static void test_trap_named(void)
{
    hf_target_t t;
    hf_fraction_t f;
    hf_fraction_init(&f);
    hf_exact_t *e = NULL;
    hf_head_t w;
    int fe;
    hf_reason_t r;
    make_trap(&t);
    CU_ASSERT_FATAL(hf_fraction_from_target(&f, &t) == HF_OK);
    CU_ASSERT_FATAL(hf_exact_create(&f, &e) == HF_OK);
    hf_head_init(&w, 1, 1);

    int64_t k0134[] = {0, 1, 3, 4}, k03[] = {0, 3}, k012[] = {0, 1, 2};
    ref_t ref = ref_decide(&f, 4, k0134);
    CU_ASSERT(ref.nullity == 1 && !ref.feasible);
    CU_ASSERT(hf_exact_check(e, 4, k0134, &fe, &r, &w) == HF_OK);
    CU_ASSERT(!fe && r == HF_REASON_SIGN);
    CU_ASSERT(hf_exact_check(e, 2, k03, &fe, &r, &w) == HF_OK);
    CU_ASSERT(!fe);
    CU_ASSERT(hf_exact_check(e, 3, k012, &fe, &r, &w) == HF_OK);
    CU_ASSERT(fe && r == HF_REASON_WITNESS);
    CU_ASSERT(witness_identity_ok(&f, &w));
    /* the head itself: weights equal, values 0, 1, 2 */
    for (long i = 0; i < 3; i++) {
        CU_ASSERT(fmpq_is_one(w.weights + i));
        CU_ASSERT(fmpq_equal_si(w.values + i, i));
    }
    hf_head_clear(&w);
    hf_exact_destroy(&e);
    hf_fraction_clear(&f);
    hf_target_clear(&t);
}

/* A target whose coefficients vanish modulo the rank prime: Q = 1 + p x, P = p x with
 * p = 2^31 - 1, so M mod p loses the whole c block. The modular rank is then deficient
 * although the rank over Q is full, and the pivot-row subsystem is not enough: this drives
 * the fallback to the whole matrix and the nullspace_q reason on the modular path. */
static void test_unlucky_prime(void)
{
    hf_target_t t;
    hf_head_t h;
    tally_t ty;
    int64_t pts[6];
    long zero = 0, one = 1;
    CU_ASSERT_FATAL(hf_target_init(&t, "unlucky", 1, 1) == HF_OK);
    hf_head_init(&h, 1, 1);
    fam_atom_q(&h, (int64_t[]){0}, 1, 1, &zero, 1);
    fam_atom_q(&h, (int64_t[]){1}, (long)HF_MODP, 1, &one, 1);
    CU_ASSERT_FATAL(hf_target_add_head(&t, &h) == HF_OK);
    hf_head_clear(&h);
    compare_all(&t, pts, grid(1, 5, pts), 6, &ty);
    CU_ASSERT(ty.by_reason[HF_REASON_NULLSPACE_Q] > 0);
    CU_ASSERT(ty.abstained < ty.supports / 2);
    CU_ASSERT(ty.by_reason[HF_REASON_MODP_RANK] == 0);
    CU_ASSERT(ty.feasible > 0);
    hf_target_clear(&t);
}

static void test_random_targets(void)
{
    fam_rng_state = 777;
    for (int trial = 0; trial < 12; trial++) {
        int d = 1 + trial % 2, dv = 1 + (trial / 2) % 2;
        hf_target_t t;
        tally_t ty;
        int64_t pts[18];
        make_random(&t, d, dv);
        int n = d == 1 ? grid(1, 5, pts) : grid(2, 2, pts);
        compare_all(&t, pts, n, d == 1 ? 6 : 4, &ty);
        hf_target_clear(&t);
    }
}

/* {0,1}^d for W_d: feasible with equal weights and value = number of ones; removing any
 * one key makes it infeasible. */
static void test_wd_product(void)
{
    for (int d = 1; d <= 3; d++) {
        hf_target_t t;
        hf_fraction_t f;
        hf_fraction_init(&f);
        hf_exact_t *e = NULL;
        hf_head_t w;
        int fe;
        hf_reason_t r;
        int64_t pts[24], keys[24];
        int n = grid(d, 1, pts);
        make_wd(&t, d);
        CU_ASSERT_FATAL(hf_fraction_from_target(&f, &t) == HF_OK);
        CU_ASSERT_FATAL(hf_exact_create(&f, &e) == HF_OK);
        hf_head_init(&w, d, 1);
        CU_ASSERT_FATAL(hf_exact_check(e, n, pts, &fe, &r, &w) == HF_OK);
        CU_ASSERT(fe && r == HF_REASON_WITNESS);
        CU_ASSERT(witness_identity_ok(&f, &w));
        CU_ASSERT(witness_numeric_ok(&t, &w));
        for (int i = 0; fe && i < n; i++) {
            long ones = 0;
            for (int a = 0; a < d; a++)
                ones += pts[i * d + a];
            CU_ASSERT(fmpq_equal(w.weights + i, w.weights + 0));
            CU_ASSERT(fmpq_equal_si(w.values + i, ones));
        }
        for (int drop = 0; drop < n; drop++) {
            long m = 0;
            for (int i = 0; i < n; i++)
                if (i != drop)
                    memcpy(keys + d * m++, pts + d * i, (size_t)d * sizeof *keys);
            CU_ASSERT_FATAL(hf_exact_check(e, m, keys, &fe, &r, NULL) == HF_OK);
            CU_ASSERT(!fe);
            CU_ASSERT_FATAL(hf_exact_check_nomod(e, m, keys, &fe, &r, NULL) == HF_OK);
            CU_ASSERT(!fe);
        }
        hf_head_clear(&w);
        hf_exact_destroy(&e);
        hf_fraction_clear(&f);
        hf_target_clear(&t);
    }
}

/* A corrupted witness must fail the test's own identity check. */
static void test_planted_bad_witness(void)
{
    hf_target_t t;
    hf_fraction_t f;
    hf_fraction_init(&f);
    hf_exact_t *e = NULL;
    hf_head_t w;
    int fe;
    hf_reason_t r;
    int64_t pts[8];
    make_wd(&t, 2);
    CU_ASSERT_FATAL(hf_fraction_from_target(&f, &t) == HF_OK);
    CU_ASSERT_FATAL(hf_exact_create(&f, &e) == HF_OK);
    hf_head_init(&w, 2, 1);
    CU_ASSERT_FATAL(hf_exact_check(e, grid(2, 1, pts), pts, &fe, &r, &w) == HF_OK);
    CU_ASSERT_FATAL(fe);
    CU_ASSERT(witness_identity_ok(&f, &w));
    fmpq_add_si(w.values + 2, w.values + 2, 1); /* one value off by one */
    CU_ASSERT(!witness_identity_ok(&f, &w));
    CU_ASSERT(!witness_numeric_ok(&t, &w));
    fmpq_sub_si(w.values + 2, w.values + 2, 1);
    CU_ASSERT(witness_identity_ok(&f, &w));
    fmpq_neg(w.weights + 1, w.weights + 1); /* a negative weight */
    CU_ASSERT(!witness_identity_ok(&f, &w));
    hf_head_clear(&w);
    hf_exact_destroy(&e);
    hf_fraction_clear(&f);
    hf_target_clear(&t);
}

static void test_bad_supports(void)
{
    hf_target_t t;
    hf_fraction_t f;
    hf_fraction_init(&f);
    hf_exact_t *e = NULL;
    int fe = 1;
    hf_reason_t r;
    make_wd(&t, 2);
    CU_ASSERT_FATAL(hf_fraction_from_target(&f, &t) == HF_OK);
    CU_ASSERT_FATAL(hf_exact_create(&f, &e) == HF_OK);
    int64_t dup[] = {0, 0, 1, 0, 0, 1, 1, 1, 1, 0};
    CU_ASSERT(hf_exact_check(e, 5, dup, &fe, &r, NULL) == HF_OK);
    CU_ASSERT(!fe && r == HF_REASON_BAD_SUPPORT);
    CU_ASSERT(hf_exact_check_nomod(e, 5, dup, &fe, &r, NULL) == HF_OK);
    CU_ASSERT(!fe && r == HF_REASON_BAD_SUPPORT);
    fe = 1;
    CU_ASSERT(hf_exact_check(e, 0, dup, &fe, &r, NULL) == HF_OK);
    CU_ASSERT(!fe && r == HF_REASON_BAD_SUPPORT);
    int64_t far[] = {0, 0, HF_KEY_MAX + 1, 0};
    CU_ASSERT(hf_exact_check(e, 2, far, &fe, &r, NULL) == HF_ERR_LIMIT);
    CU_ASSERT(strstr(hf_error_msg(), "key") != NULL);
    /* keys at the edge of the range still work (wide packing) */
    int64_t wide[] = {-HF_KEY_MAX, -HF_KEY_MAX, HF_KEY_MAX, HF_KEY_MAX, 0, 0, 1, 1};
    CU_ASSERT(hf_exact_check(e, 4, wide, &fe, &r, NULL) == HF_OK);
    CU_ASSERT(!fe);
    hf_exact_destroy(&e);
    hf_exact_destroy(&e); /* NULL is accepted */
    hf_exact_destroy(NULL);
    hf_fraction_clear(&f);
    hf_target_clear(&t);
}

/* A constant target needs one atom, any key; far-apart keys use multi-word packing. */
static void test_constant_and_wide(void)
{
    hf_target_t t;
    hf_fraction_t f;
    hf_fraction_init(&f);
    hf_exact_t *e = NULL;
    hf_head_t h, w;
    int fe;
    hf_reason_t r;
    long v = 5;
    CU_ASSERT_FATAL(hf_target_init(&t, "const", 3, 1) == HF_OK);
    hf_head_init(&h, 3, 1);
    fam_atom_q(&h, (int64_t[]){1, 2, 3}, 1, 1, &v, 1);
    CU_ASSERT_FATAL(hf_target_add_head(&t, &h) == HF_OK);
    CU_ASSERT_FATAL(hf_fraction_from_target(&f, &t) == HF_OK);
    CU_ASSERT(hf_fraction_is_constant(&f));
    CU_ASSERT_FATAL(hf_exact_create(&f, &e) == HF_OK);
    hf_head_init(&w, 3, 1);
    CU_ASSERT(hf_exact_check(e, 1, (int64_t[]){-9, 4, 100}, &fe, &r, &w) == HF_OK);
    CU_ASSERT(fe && fmpq_equal_si(w.values, 5));
    int64_t two[] = {0, 0, 0, HF_KEY_MAX, -HF_KEY_MAX, HF_KEY_MAX};
    CU_ASSERT(hf_exact_check(e, 2, two, &fe, &r, &w) == HF_OK);
    CU_ASSERT(fe && witness_identity_ok(&f, &w));
    hf_head_clear(&w);
    hf_exact_destroy(&e);
    hf_fraction_clear(&f);
    hf_head_clear(&h);
    hf_target_clear(&t);

    /* W_3's product cube translated to the edges of the key range */
    make_wd(&t, 3);
    CU_ASSERT_FATAL(hf_fraction_from_target(&f, &t) == HF_OK);
    CU_ASSERT_FATAL(hf_exact_create(&f, &e) == HF_OK);
    int64_t pts[24];
    grid(3, 1, pts);
    for (int i = 0; i < 24; i++)
        pts[i] += i % 3 == 0 ? HF_KEY_MAX - 1 : -HF_KEY_MAX;
    hf_head_init(&w, 3, 1);
    CU_ASSERT(hf_exact_check(e, 8, pts, &fe, &r, &w) == HF_OK);
    CU_ASSERT(fe && witness_identity_ok(&f, &w));
    hf_head_clear(&w);
    hf_exact_destroy(&e);
    hf_fraction_clear(&f);
    hf_target_clear(&t);
}

/* Many coordinates: d = 40 with keys spread over most of the key range forces the
 * packing over many words. Target sigma(q_0) + sigma(q_39); with the product square
 * S = {0, e_0, e_39, e_0 + e_39} and a far point p, S u (p + S) is feasible (R = 1 + x^p)
 * and S u {p} is not. Both are compared with the reference. */
static void test_many_coordinates(void)
{
    enum { D = 40 };
    hf_target_t t;
    hf_fraction_t f;
    hf_fraction_init(&f);
    hf_exact_t *e = NULL;
    tally_t ty;
    int64_t keys[8 * D];
    memset(&ty, 0, sizeof ty);
    CU_ASSERT_FATAL(hf_target_init(&t, "d40", D, 1) == HF_OK);
    add_sigmoid(&t, 0);
    add_sigmoid(&t, D - 1);
    CU_ASSERT_FATAL(hf_fraction_from_target(&f, &t) == HF_OK);
    CU_ASSERT_FATAL(hf_exact_create(&f, &e) == HF_OK);
    for (int i = 0; i < 8; i++)
        for (int a = 0; a < D; a++) {
            int64_t base = (a == 0) ? (i & 1) : (a == D - 1) ? (i >> 1 & 1) : 0;
            int64_t far = (a == 0 || a == D - 1) ? 3 : HF_KEY_MAX - 1000 * a;
            keys[i * D + a] = base + (i >= 4 ? far : -HF_KEY_MAX + 10);
        }
    ref_t ref = compare_one(e, &f, &t, 8, keys, &ty);
    CU_ASSERT(ref.feasible);
    ref = compare_one(e, &f, &t, 5, keys, &ty); /* S u {p} */
    CU_ASSERT(!ref.feasible);
    hf_exact_destroy(&e);
    hf_fraction_clear(&f);
    hf_target_clear(&t);
}

/* The simplex alone, on hand-made and random matrices, against GLPK. */
static void test_lp(void)
{
    fmpq lam[4], y[8];
    for (int i = 0; i < 4; i++)
        fmpq_init(lam + i);
    for (int i = 0; i < 8; i++)
        fmpq_init(y + i);
    fmpz nc1[] = {1, 0, 0, 1}; /* identity: lambda = (1,1) works */
    CU_ASSERT(hf_exact_lp_positive(nc1, 2, 2, lam, y) == 1);
    fmpz nc2[] = {1, 0, -1, 0, 0, 1}; /* rows 1, -1 in lambda_1: y = (1/2, 1/2, 0) */
    CU_ASSERT(hf_exact_lp_positive(nc2, 3, 2, lam, y) == 0);
    CU_ASSERT(fmpq_equal_si(y + 2, 0) && fmpq_equal(y + 0, y + 1) && fmpq_sgn(y + 0) > 0);
    fmpz nc3[] = {1, 1, 1, -1, -1, 0}; /* lambda_1 > |lambda_2| and lambda_1 < 0 */
    CU_ASSERT(hf_exact_lp_positive(nc3, 3, 2, lam, y) == 0);

    fam_rng_state = 99;
    int seen[2] = {0, 0};
    for (int trial = 0; trial < 400; trial++) {
        long m = fam_rnd(1, 8), r = fam_rnd(1, 4);
        fmpz *Nc = _fmpz_vec_init(m * r);
        for (long i = 0; i < m * r; i++)
            fmpz_set_si(Nc + i, fam_rnd(-3, 3));
        int res = hf_exact_lp_positive(Nc, m, r, lam, y);
        CU_ASSERT(res == 0 || res == 1);
        CU_ASSERT(res == glpk_positive(Nc, m, r));
        fmpq_t s, p;
        fmpq_init(s);
        fmpq_init(p);
        if (res == 1) {
            for (long k = 0; k < m; k++) { /* Nc lambda > 0 */
                fmpq_zero(s);
                for (long i = 0; i < r; i++) {
                    fmpq_mul_fmpz(p, lam + i, Nc + k * r + i);
                    fmpq_add(s, s, p);
                }
                CU_ASSERT(fmpq_sgn(s) > 0);
            }
        } else if (res == 0) {
            fmpq_zero(s);
            for (long k = 0; k < m; k++) {
                CU_ASSERT(fmpq_sgn(y + k) >= 0);
                fmpq_add(s, s, y + k);
            }
            CU_ASSERT(fmpq_is_one(s));
            for (long i = 0; i < r; i++) { /* y^T Nc = 0 */
                fmpq_zero(s);
                for (long k = 0; k < m; k++) {
                    fmpq_mul_fmpz(p, y + k, Nc + k * r + i);
                    fmpq_add(s, s, p);
                }
                CU_ASSERT(fmpq_is_zero(s));
            }
        }
        if (res >= 0)
            seen[res]++;
        fmpq_clear(p);
        fmpq_clear(s);
        _fmpz_vec_clear(Nc, m * r);
    }
    CU_ASSERT(seen[0] > 20 && seen[1] > 20);
    for (int i = 0; i < 4; i++)
        fmpq_clear(lam + i);
    for (int i = 0; i < 8; i++)
        fmpq_clear(y + i);
}

/* The word-size elimination against FLINT's nmod_mat_rank (same prime) and the rank over Q,
 * on random sparse matrices with planted dependent columns and rows. */
static void test_rank_modp(void)
{
    fam_rng_state = 4242;
    for (int trial = 0; trial < 2000; trial++) {
        long R = fam_rnd(1, 40), n = fam_rnd(1, 20);
        nmod_mat_t A;
        fmpz_mat_t Z;
        nmod_mat_init(A, R, n, HF_MODP);
        fmpz_mat_init(Z, R, n);
        int density = (int)fam_rnd(1, 4); /* about 1 in density+1 entries nonzero */
        for (long i = 0; i < R; i++)
            for (long j = 0; j < n; j++)
                if (fam_rnd(0, density) == 0)
                    fmpz_set_si(fmpz_mat_entry(Z, i, j), fam_rnd(-5, 5));
        if (n >= 3 && fam_rnd(0, 1)) { /* column n-1 = column 0 - 2 column 1 */
            for (long i = 0; i < R; i++) {
                fmpz *z = fmpz_mat_entry(Z, i, n - 1);
                fmpz_set(z, fmpz_mat_entry(Z, i, 0));
                fmpz_submul_ui(z, fmpz_mat_entry(Z, i, 1), 2);
            }
        }
        if (R >= 2 && fam_rnd(0, 1)) /* a repeated row */
            for (long j = 0; j < n; j++)
                fmpz_set(fmpz_mat_entry(Z, R - 1, j), fmpz_mat_entry(Z, 0, j));
        uint32_t *ent = calloc((size_t)(R * n), sizeof *ent);
        uint32_t **rows = malloc((size_t)R * sizeof *rows);
        long *nz = malloc((size_t)n * sizeof *nz);
        for (long i = 0; i < R; i++) {
            rows[i] = ent + i * n;
            for (long j = 0; j < n; j++) {
                ulong v = fmpz_fdiv_ui(fmpz_mat_entry(Z, i, j), HF_MODP);
                rows[i][j] = (uint32_t)v;
                nmod_mat_entry(A, i, j) = v;
            }
        }
        long mine = hf_exact_rank_modp(rows, R, n, nz);
        CU_ASSERT(mine == nmod_mat_rank(A));
        CU_ASSERT(mine == fmpz_mat_rank(Z)); /* tiny entries: no unlucky prime here */
        free(nz);
        free(rows);
        free(ent);
        fmpz_mat_clear(Z);
        nmod_mat_clear(A);
    }
}

/* Every checked allocation of the tester made to fail in turn: the call reports
 * HF_ERR_NOMEM (or succeeds), never crashes or leaks (valgrind runs this). */
static void test_alloc_failures(void)
{
    hf_target_t t;
    hf_fraction_t f;
    hf_fraction_init(&f);
    int64_t pts[24];
    int n = grid(3, 1, pts);
    make_wd(&t, 3);
    CU_ASSERT_FATAL(hf_fraction_from_target(&f, &t) == HF_OK);
    int failures = 0;
    for (long k = 1; k < 200; k++) {
        hf_exact_t *e = NULL;
        hf_head_t w;
        int fe = 0;
        hf_reason_t r;
        hf_head_init(&w, 3, 1);
        hf_fail_after(k);
        hf_err_t err = hf_exact_create(&f, &e);
        if (err == HF_OK) {
            err = hf_exact_check(e, n, pts, &fe, &r, &w);
            if (err == HF_OK)
                err = hf_exact_check(e, n - 1, pts, &fe, &r, NULL);
        }
        hf_fail_after(0);
        CU_ASSERT(err == HF_OK || err == HF_ERR_NOMEM);
        failures += err == HF_ERR_NOMEM;
        if (err == HF_OK) {
            CU_ASSERT(!fe); /* the last call: the cube minus a key */
        }
        hf_exact_destroy(&e);
        hf_head_clear(&w);
    }
    CU_ASSERT(failures > 5);
    hf_fraction_clear(&f);
    hf_target_clear(&t);
}

static void test_reason_names(void)
{
    CU_ASSERT_STRING_EQUAL(hf_reason_name(HF_REASON_MODP_RANK), "modp_rank");
    CU_ASSERT_STRING_EQUAL(hf_reason_name(HF_REASON_FARKAS), "farkas");
    CU_ASSERT(strstr(hf_reason_text(HF_REASON_SIGN), "infeasible") != NULL);
    CU_ASSERT(strstr(hf_reason_text(HF_REASON_WITNESS), "feasible") != NULL);
}

static int suite_cleanup(void)
{
    glp_free_env();
    flint_cleanup();
    return 0;
}

int hf_register_tests(void)
{
    static const hf_unit_case_t cases[] = {
        {"reason names", test_reason_names},
        {"simplex vs GLPK on random matrices", test_lp},
        {"rank mod p vs nmod_mat_rank and rank over Q", test_rank_modp},
        {"W_1: every support in {0..3}", test_w1_all},
        {"W_2: supports in {0,1,2}^2 up to 5 keys", test_w2_all},
        {"W_3: all 255 supports in {0,1}^3", test_w3_all},
        {"dv=2 affine image of W_2", test_dv2_affine},
        {"dv=2 stacked sigmoids", test_dv2_stacked},
        {"rational weights and values", test_rational_all},
        {"strict-positivity trap: every support in {0..7}", test_trap_all},
        {"strict-positivity trap: named supports", test_trap_named},
        {"random targets", test_random_targets},
        {"coefficients divisible by the rank prime", test_unlucky_prime},
        {"W_d product support and its one-key deletions", test_wd_product},
        {"planted bad witness is rejected", test_planted_bad_witness},
        {"bad supports and limits", test_bad_supports},
        {"constant target, wide keys", test_constant_and_wide},
        {"d = 40: multi-word packing", test_many_coordinates},
        {"allocation failures", test_alloc_failures},
        {NULL, NULL},
    };
    return hf_unit_suite_with("exact", suite_cleanup, cases);
}
