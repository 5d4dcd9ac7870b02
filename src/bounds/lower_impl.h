/* Declarations shared by the lower bound's files (docs/math.md §4.3, §5, §12; the rules
 * at the top of lower.c): the caps, the compact target with sparse keys and its canonical
 * form (lower_canon.c), the context of one evaluation with its memo, the face rule's
 * recursion (lower.c) and the rules over faces and end slices (lower_faces.c). */
#ifndef HF_LOWER_IMPL_H
#define HF_LOWER_IMPL_H

#include <stdint.h>

#include <flint/fmpq.h>
#include <flint/fmpz.h>

#include "bounds/bounds_impl.h"
#include "headfuse/target.h"

/* Caps. Each only stops work early and keeps the bound found so far (sound). */
#define LB_MEMO_MAX 200000L   /* canonical targets remembered */
#define LB_WORK_MAX 10000000L /* atoms visited while building limit targets */
#define LB_DEPTH_MAX 2000     /* recursion depth (each level drops at least one atom) */
#define LB_PAIR_DIRS_D_MAX 8  /* also try e_i + e_j and e_i - e_j up to this dimension */
#define LB_PRIMES 3           /* primes tried in a non-invariance proof */
#define LB_POINTS 4           /* point pairs tried per prime */
/* Newton vertex counts of blocks whose heads are not on lines go through P/Q and
 * cddlib when the product of the block's head sizes is at most LB_CDD_TERMS and it uses
 * at most LB_CDD_DIM coordinates (cddlib's time grows quickly with both); rule (c) is
 * evaluated when the whole target's product is at most LB_PACK_TERMS, d is at most
 * LB_PACK_DIM and Newt(Q) has at most LB_PACK_FACES proper faces (chain_5 then costs
 * 0.15 s; W_8 would cost 0.14 s for nothing: 6561 faces). */
#define LB_CDD_TERMS 1024L
#define LB_CDD_DIM 6
#define LB_PACK_TERMS 512L
#define LB_PACK_DIM 5
#define LB_PACK_FACES 4096L
/* The end slices (rule (e)) on targets of at most this many coordinates whose heads lie on
 * lines: each level costs two limit targets per coordinate (memoised), and a limit target
 * in three coordinates a face accounting (faces3d.h, about 0.05 s for chain:d=3). */
#define LB_ENDS_D_MAX 6

/* The limits of the Newton vertex counts through cddlib (LB_CDD_TERMS, LB_CDD_DIM). */
extern const hf_bounds_cdd_limits_t hf_lb_cdd_limits;

/* A target with sparse keys. Head h owns atoms hstart[h] .. hstart[h+1]-1; atom a's
 * key has nonzero coordinates kidx[e] (increasing) with values kval[e] for e in
 * kstart[a] .. kstart[a+1]-1. Weights w[a], values v[a*dv + j]. */
typedef struct {
    int d, dv, nheads;
    long natoms, nnz;
    long cap_atoms, cap_nnz; /* room allocated in w/v/kstart and kidx/kval */
    long *hstart;
    long *kstart;
    int *kidx;
    int64_t *kval;
    fmpq *w, *v;
} lb_tgt_t;

typedef struct {
    hf_bounds_bytemap_t memo; /* canonical target -> LB */
    hf_bounds_bytemap_t ends; /* canonical target -> the end slices' value (hf_lb_ends) */
    hf_bounds_arr_t arr;      /* arrangement memo of the Newton vertex counts */
    int newton;               /* 0: the face rule alone (hf_bounds_lower_face_rule) */
    long work;
    int truncated;
    hf_rng_t rng;
    ulong primes[LB_PRIMES];
    /* scratch of the canonicalisation, grown as needed */
    long *S, *ord, *skstart;
    long cap_S, cap_ord, cap_skstart;
    int *skidx;
    int64_t *skval;
    long cap_skidx, cap_skval;
    int cnt[HF_D_MAX]; /* all 0 between uses */
} lb_ctx_t;

/* ---- the compact target and its canonical form (lower_canon.c) ---- */

/* An empty target (no storage): what hf_lb_tgt_clear accepts and leaves. */
void hf_lb_tgt_zero(lb_tgt_t *T);
/* Frees its storage and leaves it empty. */
void hf_lb_tgt_clear(lb_tgt_t *T);

/* out = canonical form of T restricted to the selected atoms (sel == NULL: all), and
 * ser its serialisation. Equal serialisations imply equal m*: see docs/bounds.md. */
hf_err_t hf_lb_canon(lb_ctx_t *cx, const lb_tgt_t *T, const unsigned char *sel, lb_tgt_t *out,
                     hf_bounds_buf_t *ser);

/* The target's heads with sparse keys (any signs; canonicalisation shifts them). */
hf_err_t hf_lb_from_target(const hf_target_t *t, lb_tgt_t *T);

/* The compact target as an hf_target_t (dense keys), for the Newton vertex count. */
hf_err_t hf_lb_to_target(const lb_tgt_t *C, hf_target_t *t);

/* ---- the face rule with its memo (lower.c) ---- */

/* LB of a target through the recursion (the canonical form first). try_newton = 0
 * when the caller has already found rule (b) out of reach for t. */
hf_err_t hf_lb_of_target(lb_ctx_t *cx, const hf_target_t *t, int try_newton, fmpz_t lb);

/* ---- rules over faces (lower_faces.c) ---- */

/* Rule (e), the end slices (docs/math.md, Theorem 12.8), with the bounds below it: the value
 * of the target t (any form; canonicalised here) is the best of
 *   - its vertex count and its slices (rules (b) and (d));
 *   - below the top (a limit target) in three coordinates, the face accounting's
 *     min(|supp Q|, bound) (docs/math.md, Theorem 11.13: every support is supp Q translated
 *     or has at least bound keys; no exact test needed for this form);
 *   - when its heads lie on lines and it has at most LB_ENDS_D_MAX coordinates, for each
 *     coordinate y that Q uses: the values of the limit targets along e_y and -e_y (the two
 *     end levels of a support are its faces there), plus max(N_y - 2, 0) middle levels of
 *     at least M(A_y) keys each (hf_bounds_mlb_slice, hf_bounds_mlb).
 * Every value is a lower bound on m* over all integer keys. Memoised on the canonical form
 * and top. */
hf_err_t hf_lb_ends(lb_ctx_t *cx, const hf_target_t *t, int top, fmpz_t out);

/* Rule (c) on a small target: the best total of LB(T_w) over disjoint faces of
 * Newt(Q). *done = 0 when the target is too large for it. */
hf_err_t hf_lb_disjoint_faces(lb_ctx_t *cx, const hf_target_t *t, fmpz_t out, int *done);

#endif
