/* Declarations shared by the files of the search module (src/search/).
 *
 * Internally a key set is a sorted array of point indices in the box {0..S}^d: the index
 * of x is its base-(S+1) number with coordinate 0 the most significant digit, so index
 * order is the lexicographic order of keys, and the keys of a support sorted
 * lexicographically are its indices sorted. */
#ifndef HF_SEARCH_IMPL_H
#define HF_SEARCH_IMPL_H

#include <limits.h>
#include <stdint.h>

#include "headfuse/algebra.h"
#include "headfuse/core.h"
#include "headfuse/exact.h"
#include "headfuse/search.h"

#define HF_SEARCH_BOX_MAX (1L << 22)     /* most points in the box {0..S}^d */
#define HF_SEARCH_UNIT_TARGET (1L << 15) /* aim: candidates per plain work unit */
/* Layered units aim at 2^20 *possible* candidates: the prefix rule on F_{-e_0} skips
 * most of them, so units stay short (chain:d=3 span 4: ~2^15 candidates per unit would
 * have meant 2 million units of ~0.1 ms). */
#define HF_SEARCH_LAYERED_UNIT_TARGET (1L << 20)
#define HF_SEARCH_LAYERED_UNITS_MAX (1L << 14) /* the aim doubles above this many units */
#define HF_SEARCH_UNITS_MAX (1L << 20)         /* raise the aim rather than exceed this */
#define HF_SEARCH_GROUP_DMAX 7                 /* brute-force group (test oracle) d <= this */
#define HF_SEARCH_GROUP_POINTS_MAX (1L << 18)  /* nauty graph: most terms of P and Q */
#define HF_SEARCH_GROUP_ENUM_MAX 645120L       /* most elements tested one by one (2^7 7!) */
#define HF_SEARCH_ORBIT_BYTES (1L << 28)       /* most bytes of one orbit closure */
#define HF_SEARCH_GROUP_LIST_MAX (1L << 22)    /* above: the group's elements, when listed */
#define HF_SEARCH_POLL_EVERY 256               /* candidates between poll calls */
/* Layered middles between poll calls: a unit whose middles all fail the prefix face test
 * makes no candidate, yet may take seconds (chain:d=3 span 5: up to 9 s), and rank 0
 * answers requests only when it polls. */
#define HF_SEARCH_VISIT_POLL_EVERY 64
#define HF_SEARCH_SAT (LONG_MAX / 4)   /* saturation value of cost estimates */
#define HF_SEARCH_TABLE_MAX (1L << 24) /* largest digit table (bytes: points x d) */
#define HF_SEARCH_CONE_AUTO_MAX 64     /* auto picks the cone up to this many unknowns */
/* Layered cells fix every middle point (a cell is one subset of middles) unless a unit would
 * then have more than HF_SEARCH_CELLS_MAX cells: a cell that fixes fewer can hold a long run
 * of candidates (chain:d=3 at span 4: 0.35 s in one cell fixing three points). */
#define HF_SEARCH_CELLS_MAX ((int64_t)1 << 60)

/* Test-only hook (tests/test_search.c): when >= 0, hf_search_run_unit on a top-level
 * search skips that unit index (does nothing, reports success). A planted error that
 * the pruned-versus-plain comparison must catch. */
extern long hf_search_test_skip_unit;

/* Aims for candidates per unit (HF_SEARCH_UNIT_TARGET, HF_SEARCH_LAYERED_UNIT_TARGET);
 * tests lower them to exercise the splitting of large classes by their first and second
 * points. */
extern long hf_search_unit_target;
extern long hf_search_layered_unit_target;
/* HF_SEARCH_ORBIT_BYTES; tests lower it to run orbits over the listed group instead. */
extern long hf_search_orbit_bytes_max;

/* certify3d.c: *feasible = 1 when supp(Q) of the reduced fraction passes the exact test
 * (the support of every head whose R is a monomial). */
hf_err_t hf_search_supp_q_feasible(const hf_fraction_t *f, int *feasible);

/* certify3d.c: hf_search_certify for d = 3 (out zeroed by the caller, m_star and lb -1). */
hf_err_t hf_search_certify_3d(const hf_target_t *t, hf_certificate_t *out);

/* Feasible supports of a limit target with the layering coordinate dropped: every
 * feasible support (every size up to `done`, every placement in the box
 * {0..S}^dim), grown lazily. Entries are sorted by size, then lexicographically. */
typedef struct {
    int dim;            /* d - 1 >= 0; dim 0: the only support is the single point */
    hf_target_t target; /* the dropped target (dim >= 1) */
    hf_fraction_t frac; /* its fraction: the memo key, up to T -> alpha T + beta */
    long lb;            /* face-rule lower bound (LONG_MAX if it does not fit) */
    hf_search_t *sub;   /* recursive search over the dim-box (created lazily) */
    long done;          /* every size <= done is listed */
    long n, cap;        /* entries */
    long *start;        /* entry i is idx[start[i] .. start[i] + size) */
    long *size;         /* size of entry i */
    uint32_t *idx;      /* point indices in {0..S}^dim */
    long nidx, capidx;
    long *by_size; /* by_size[s]: first entry of size s, s = 0..done + 1 */
} hf_fs_t;

/* All FS tables of one top-level search and its recursive sub-searches: one entry per
 * dropped limit target up to affine equivalence. Owned by the top-level search. */
typedef struct {
    long n, cap;
    hf_fs_t **fs;
    const hf_search_split_t *split; /* growing the tables split across processes, or NULL */
} hf_fs_registry_t;

/* A block of the layered generation at one size m: bottom layers of size s0 (FS_lo
 * entries [lo0, lo0 + n0)), top level t, top layers of size st (FS_hi entries
 * [lot, lot + nt)), middles of r points among nmid. Triples (i0, it) are numbered
 * (i0 - lo0) * nt + (it - lot). For t = 0 (single layer) nt = 1 and there is no top. */
typedef struct {
    long s0, t, st, r;
    long lo0, n0, lot, nt;
    long nmid;
} hf_block_t;

/* A work unit. Layered: triples [first, first + count) of block `block`, with the
 * first npre middle points fixed to pre[]. Plain: the m-subsets whose first npre
 * point indices are pre[]. */
typedef struct {
    long block;
    long first, count;
    int npre;
    long pre[2];
} hf_unit_t;

/* Memo of face tests: exact answers for faces (coordinate j, side, key set translated to
 * canonical position). Cleared when large; answers never depend on it. */
typedef struct {
    long nslots, nused;
    uint64_t *hash; /* 0 = empty slot */
    long *off;      /* key set in pool[off .. off + len) */
    int32_t *len;
    int16_t *face; /* 2 j + side */
    int8_t *feasible;
    uint32_t *pool;
    long npool, cappool;
} hf_facememo_t;

/* One coordinate face tester: the limit target along +-e_j. */
typedef struct {
    hf_exact_t *exact;
    long lb;
} hf_facetest_t;

/* Binomials C(x, k) for x <= n, k <= k_max, by Pascal's rule (saturating at HF_SEARCH_SAT):
 * the ranks of cells are sums of them, computed at every subset visited. */
typedef struct {
    int64_t *v; /* v[x * (kmax + 1) + k] */
    long n, kmax;
} hf_binom_tab_t;
/* Make tab hold C(x, k) for x <= n, k <= kmax (kept when it already does; left as it is,
 * and hf_search_binom used instead, when that would take over 2^20 entries). */
hf_err_t hf_binom_tab_need(hf_binom_tab_t *tab, long n, long kmax);
void hf_binom_tab_clear(hf_binom_tab_t *tab);

/* The cone engine's rays and hyperplanes (cone.c); figures for reports. */
typedef struct hf_cone_s hf_cone_t;
typedef struct {
    int empty;            /* some extent of Newt(Q) exceeds the span: no support at all */
    long unknowns;        /* points of B_R */
    long rows;            /* box points reached by Q + B_R */
    long hyperplanes;     /* distinct rows */
    long rays;            /* extreme rays with support <= bound */
    long bound;           /* support bound of the last ray enumeration */
    long rays_max;        /* most rays kept at one step of the double description */
    long adjacencies;     /* adjacent pairs combined into new rays */
    long step, step_rays; /* progress of the double description: rows done, rays kept */
    int64_t extent[HF_D_MAX];
} hf_cone_info_t;

struct hf_search_s {
    hf_target_t t;
    int d, dv, span, prune;
    hf_engine_t engine;     /* resolved: layered, cone or plain */
    int64_t qext[HF_D_MAX]; /* extents of Newt(Q): every support is at least this wide */
    long nx;                /* facet normals of Newt(Q) checked besides +-e_j (shape.c) */
    int64_t *xw;            /* nx x d normals; their testers follow the coordinate faces */
    int64_t *xwidth;        /* width of Newt(Q) along each */
    long span_lb;           /* within-span bound (0: not computed) */
    hf_cone_t *cone;        /* cone engine state, built by hf_search_prepare */
    int cone_per_size;      /* 1: the cone's rays are computed for each size's own bound */
    long max_atoms;
    int top;             /* 1: created by hf_search_create (reports, witnesses, group) */
    int has_t, has_frac; /* which of t, frac need clearing */

    hf_fraction_t frac;
    hf_exact_t *exact;
    char *lb_str, *ub_str;
    long lb; /* LONG_MAX when it does not fit */
    long first, last;

    long base;       /* S + 1 */
    long npts;       /* (S + 1)^d */
    long nlayer;     /* (S + 1)^(d - 1): points per layer of the last coordinate */
    long *pw;        /* pw[j] = base^(d - 1 - j): index weight of coordinate j */
    uint8_t *digits; /* point p's coordinates (npts x d), or NULL: then divide */
    uint64_t *zmask; /* bit j set when point p has x_j = 0 (with digits) */

    /* pruning (prune = 1) */
    int invariant_last;    /* T does not depend on q_{d-1}: single layer possible */
    hf_fs_registry_t *reg; /* shared with sub-searches */
    int own_reg;
    hf_fs_t *fs_lo, *fs_hi; /* bottom / top layer tables (in reg) */
    hf_facetest_t *faces;   /* 2 (d - 1): j < d - 1, side 0 = -e_j, 1 = +e_j */
    hf_facememo_t memo;

    /* symmetry: verified generators as (perm, signs), key map k'_j = sign_j k_{perm_j} */
    long gorder;
    int group_unknown; /* the full group was not established: order reported as -1 */
    long ngens;
    int8_t *gperm, *gsign; /* ngens x d */

    /* prepared level */
    long level_m;
    /* while a level is being prepared: its poll hook and what it is doing (for describe) */
    hf_search_poll_fn level_poll;
    void *level_poll_ctx;
    long prep_m;           /* size being prepared, 0 when none */
    long prep_sz, prep_of; /* face-table size being grown, and the last one needed */
    long nunits, capunits;
    hf_unit_t *units;
    long nblocks, capblocks;
    hf_block_t *blocks;

    /* scratch */
    uint32_t *cand;      /* candidate indices (m) */
    uint32_t *tmp;       /* 6 rows of m: two layers, middle, face index, face points, prefix */
    int64_t *keys;       /* candidate keys (m d) */
    int64_t *fkeys;      /* face keys (m d) */
    long *combo;         /* middle combination (m), then a cell's points (m) */
    int64_t *cellpart;   /* ranks of a cell's first points (m) */
    hf_binom_tab_t ctab; /* binomials for the ranks of cells */
    int64_t *dots;       /* k.w of the candidate's keys (m) */
    long scratch_m;

    hf_search_stats_t stats;
    long face_exact_tests; /* memo misses: exact tests on faces */
    int face0_done;        /* F_{-e_0} of the current candidate already checked */
};

/* Context of one unit run. */
typedef struct {
    hf_search_found_fn found;
    void *found_ctx;
    hf_search_poll_fn poll;
    void *poll_ctx;
    long nodes;
    hf_head_t *witness; /* NULL: no witness wanted */
    long visits;        /* layered middles visited, candidates or not (for polling) */
} hf_run_t;

/* search.c */
hf_err_t hf_search_create_internal(const hf_target_t *t, int span, hf_engine_t engine, int top,
                                   hf_fs_registry_t *reg, hf_search_t **out);
hf_err_t hf_search_scratch(hf_search_t *s, long m);
/* The target with only the coordinates keep[0..dkeep) (increasing); every head must be
 * flat (one layer) in the others, so each head is the same function of the rest. out
 * initialised; replaced on success, kept on failure. */
hf_err_t hf_search_target_drop(const hf_target_t *t, const int *keep, int dkeep, hf_target_t *out);
hf_err_t hf_search_candidate(hf_search_t *s, long m, const uint32_t *idx, hf_run_t *run);
/* Is the face (2 j + side) made of the n sorted points pts (indices in the d-box, n >= 1)
 * feasible for its limit target? Memoised exact test; m = current scratch row size. */
hf_err_t hf_search_face_test(hf_search_t *s, int face, long n, const uint32_t *pts, long m,
                             int *feasible);
long hf_search_binom(long n, long k); /* saturating at HF_SEARCH_SAT */
hf_err_t hf_search_add_unit(hf_search_t *s, const hf_unit_t *u);
/* Visit the r-subsets of {0..n-1} whose first npre elements are pre[] (increasing),
 * in lexicographic order; combo[r] is scratch; fn returns an error to stop. fn may set
 * *skip (preset to r - 1) to i < r - 1: then every later subset sharing combo[0..i] is
 * skipped (i < npre: all remaining ones). */
typedef hf_err_t (*hf_combo_fn)(void *ctx, const long *combo, long *skip);
hf_err_t hf_search_combos(long n, long r, int npre, const long *pre, long *combo, hf_combo_fn fn,
                          void *ctx);
/* The cells of those subsets: one per choice of the `depth` elements after the prefix
 * (depth <= r - npre), numbered in lexicographic order. The number of cells (saturating at
 * HF_SEARCH_SAT). */
int64_t hf_search_combo_cells(long n, long r, int npre, const long *pre, int depth);

/* hf_search_combos restricted to cells: visits the subsets of cells first_cell, first_cell +
 * 1, ... in order, while base + cell < range->hi (read at every new cell, so a poll inside fn
 * may lower it), setting range->pos = base + cell before the first subset of each cell.
 * Scratch: combo[r + depth], part[depth]. */
hf_err_t hf_search_combos_cells(long n, long r, int npre, const long *pre, int depth, int64_t base,
                                int64_t first_cell, hf_search_range_t *range,
                                const hf_binom_tab_t *tab, long *combo, int64_t *part,
                                hf_combo_fn fn, void *ctx);
/* Split r-subsets of {0..n-1} with first element >= a_lo, < a_hi into prefix units
 * of at most `target` candidates each (appended with the given block and triple). */
hf_err_t hf_search_split_prefix(hf_search_t *s, long block, long triple, long n, long r, long a_hi,
                                long target);

/* plain.c */
hf_err_t hf_search_plain_level(hf_search_t *s, long m);
hf_err_t hf_search_plain_run(hf_search_t *s, long m, const hf_unit_t *u, hf_run_t *run);

/* layered.c */
hf_err_t hf_search_layered_init(hf_search_t *s);
hf_err_t hf_search_layered_level(hf_search_t *s, long m);
/* Cells of unit u, and a run of its cells [lo, range->hi) (search.h, "cells"). */
int64_t hf_search_layered_cells(const hf_search_t *s, const hf_unit_t *u);
hf_err_t hf_search_layered_run(hf_search_t *s, long m, const hf_unit_t *u, int64_t lo,
                               hf_search_range_t *range, hf_run_t *run);
void hf_fs_registry_destroy(hf_fs_registry_t **reg);

/* cone.c */
void hf_cone_destroy(hf_cone_t **c);
hf_err_t hf_search_cone_prepare(hf_search_t *s, hf_search_poll_fn poll, void *poll_ctx);
hf_err_t hf_search_cone_level(hf_search_t *s, long m);
hf_err_t hf_search_cone_run(hf_search_t *s, long m, const hf_unit_t *u, hf_run_t *run);
/* Figures of the cone engine (NULL before preparation or for another engine). */
const hf_cone_info_t *hf_search_cone_info(const hf_search_t *s);
/* hf_search_describe for the cone engine: its preparation, or its rays. */
void hf_search_cone_describe(const hf_search_t *s, char *buf, size_t n);
/* Extents of Newt(Q) per coordinate (max - min exponent of Q). */
void hf_search_extents(const hf_fraction_t *f, int64_t *ext);
/* Unknowns of the cone engine for this span (0 if some extent of Newt(Q) exceeds it). */
long hf_search_cone_unknowns(const hf_fraction_t *f, int span);

/* shape.c */
/* Facet directions of Newt(Q) for the layered engine's candidates and, with span_bound,
 * the within-span lower bound (raises s->first). Skipped for large Q (cost). */
hf_err_t hf_search_shape_init(hf_search_t *s, int span_bound);
hf_err_t hf_search_shape_check(hf_search_t *s, long m, const uint32_t *idx, int *ok);

/* facememo.c */
void hf_facememo_init(hf_facememo_t *mm);
void hf_facememo_clear(hf_facememo_t *mm);
/* *found = 1 and *feasible set when (face, key set) is memoised. */
void hf_facememo_get(const hf_facememo_t *mm, int face, long len, const uint32_t *idx, int *found,
                     int *feasible);
hf_err_t hf_facememo_put(hf_facememo_t *mm, int face, long len, const uint32_t *idx, int feasible);

/* symmetry.c */
/* 1 iff b = alpha a + beta as functions (alpha != 0 scalar, beta constant vector). */
int hf_search_fraction_affine_equal(const hf_fraction_t *a, const hf_fraction_t *b);
hf_err_t hf_search_group_compute(hf_search_t *s);
/* 1 in *yes when the target with every key mapped by (perm, sign) is alpha T + beta:
 * _exact_test builds the mapped target's fraction anew (the brute force's test),
 * _check maps the monomials of the normal form P/Q (the same answer, no gcd). */
hf_err_t hf_search_group_check(const hf_search_t *s, const int8_t *perm, const int8_t *sign,
                               int *yes);
hf_err_t hf_search_group_exact_test(const hf_search_t *s, const int8_t *perm, const int8_t *sign,
                                    int *yes);
/* The symmetries among the elements of the group generated by cand (ncand x d perms and
 * signs), each tested (modular filter, then exactly: with _exact_test when oracle, else
 * with _check). Refused with HF_ERR_LIMIT above `limit` candidates. Out: *order, the generators
 * found (*ngens, *gperm, *gsign) and, if elems is not NULL, every symmetry (*order rows of d perms
 * then d signs; identity first). The caller frees the arrays. */
hf_err_t hf_search_group_filter(const hf_search_t *s, long ncand, const int8_t *cperm,
                                const int8_t *csign, long limit, int oracle, long *order,
                                long *ngens, int8_t **gperm, int8_t **gsign, int8_t **elems);
/* The brute force (test oracle, d <= HF_SEARCH_GROUP_DMAX): hf_search_group_filter over
 * all 2^d d! signed permutations. */
hf_err_t hf_search_group_brute(const hf_search_t *s, long *order, long *ngens, int8_t **gperm,
                               int8_t **gsign, int8_t **elems);
/* Orbit representative over an explicit list of n elements (rows as in elems):
 * the test oracle for hf_search_orbit_rep. */
void hf_search_orbit_rep_list(int d, long n, const int8_t *elems, long m, const int64_t *keys,
                              int64_t *out);

/* symgraph.c */
/* Candidate generators from nauty: the automorphisms of a coloured graph built from P/Q
 * (docs/search.md, "Symmetry"). *complete = 0 when the graph was too large to build.
 * *order = the automorphism group's order (-1 if above 2^53). Caller frees the arrays. */
hf_err_t hf_search_group_nauty(const hf_search_t *s, int *complete, long *order, long *ngens,
                               int8_t **gperm, int8_t **gsign);
/* Total counters over a search and all its recursive sub-searches (for benchmarks). */
void hf_search_total_stats(const hf_search_t *s, hf_search_stats_t *st, long *face_tests);

#endif
