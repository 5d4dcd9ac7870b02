/* What the search object (search.c) and its engines share (src/search/): the engine seam.
 *
 * The search object owns what every engine uses: the target, its fraction and exact tester,
 * the bounds and sizes, the box geometry, the units of the prepared size, and the candidate
 * sink (sink.c), through which every engine hands over its candidates. An engine is a table
 * of operations (hf_engine_ops_t) named in HF_ENGINE_TABLE (search.h); it keeps its own
 * state in s->data. search.c dispatches through the table and never asks which engine it
 * runs. docs/architecture.md, "The search's engines", says how to add one.
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
#include "headfuse/bounds.h"
#include "headfuse/core.h"
#include "headfuse/exact.h"
#include "headfuse/newton.h"
#include "headfuse/search.h"
#include "headfuse/control.h"
#include "headfuse/symmetry.h"
#include "search/subsets.h"

#define HF_SEARCH_UNIT_TARGET (1L << 15) /* aim: candidates per plain work unit */
#define HF_SEARCH_UNITS_MAX (1L << 20)   /* raise the aim rather than exceed this */
#define HF_SEARCH_POLL_EVERY 256         /* candidates between poll calls */
#define HF_SEARCH_TABLE_MAX (1L << 24)   /* largest digit table (bytes: points x d) */
#define HF_SEARCH_CONE_AUTO_MAX 64       /* auto picks the cone up to this many unknowns */

/* The search's knobs (control.h): HF_KNOB_SEARCH_SKIP_UNIT, when set, makes
 * hf_search_run_unit on a top-level search skip that unit index (does nothing, reports
 * success), a planted error that the pruned-versus-plain comparison must catch;
 * HF_KNOB_PLAIN_UNIT_TARGET and HF_KNOB_LAYERED_UNIT_TARGET replace HF_SEARCH_UNIT_TARGET
 * and HF_SEARCH_LAYERED_UNIT_TARGET, lowered by the tests to exercise the splitting of large
 * classes by their first and second points; HF_KNOB_LARGE_MIN_TERMS replaces
 * HF_SEARCH_LARGE_MIN_TERMS. */

/* certify3d.c: *feasible = 1 when supp(Q) of the reduced fraction passes the exact test
 * (the support of every head whose R is a monomial). */
hf_err_t hf_search_supp_q_feasible(const hf_fraction_t *f, int *feasible);

/* certify3d.c: hf_search_certify for d = 3 (out zeroed by the caller, m_star and lb -1). */
hf_err_t hf_search_certify_3d(const hf_target_t *t, hf_certificate_t *out);

/* A work unit, read by its engine only (the search object keeps the list). Layered:
 * triples [first, first + count) of block `block`, with the first npre middle points fixed
 * to pre[]. Plain: the m-subsets whose first npre point indices are pre[]. Cone: the
 * subtree of root ray `block`. */
typedef struct {
    long block;
    long first, count;
    int npre;
    long pre[2];
} hf_unit_t;

/* Context of one run of cells. */
typedef struct {
    hf_search_found_fn found;
    void *found_ctx;
    hf_search_poll_fn poll;
    void *poll_ctx;
    long nodes;
    hf_head_t *witness; /* NULL: no witness wanted */
    long visits;        /* layered middles visited, candidates or not (for polling) */
} hf_run_t;

/* How a search is made: hf_search_create's (top = 1), or by an engine or a shape rule for
 * a target of its own. */
typedef struct {
    int top;                   /* made by hf_search_create: UB, the within-span bound,
                                * witnesses, the test hook */
    hf_search_t *parent;       /* the search whose engine makes this one: shares its split and
                                * may share engine state (the layered tables), or NULL */
    long last;                 /* > 0: try sizes up to this one only */
    int no_lookahead;          /* prepare each size for itself: a short run of sizes that
                                * usually stops early (the cone bounds its rays by the size) */
    const hf_bounds_t *bounds; /* the target's bounds when computed already, else NULL */
} hf_search_make_t;

/* An engine: how candidates of each size are generated and cut into units and cells.
 * Every operation but level and run may be NULL (then: nothing, one cell per unit,
 * "engine NAME", no counters of its own). Every candidate goes to hf_search_candidate. */
typedef struct {
    /* auto: the engine to use for this search into *engine (s holds the target, fraction,
     * span and sizes); an error (out of memory) fails the search rather than changing the
     * choice, which every rank must make alike. No other operation is set. */
    hf_err_t (*resolve)(const hf_search_t *s, hf_engine_t *engine);
    /* the engine's own state into s->data (mk says how s is being made) */
    hf_err_t (*create)(hf_search_t *s, const hf_search_make_t *mk);
    void (*destroy)(hf_search_t *s);
    /* one-time preparation before the first size (hf_search_prepare) */
    hf_err_t (*prepare)(hf_search_t *s, hf_search_poll_fn poll, void *poll_ctx);
    /* the units of size m, appended with hf_search_add_unit; s->level_poll is the poll hook
     * while it runs (may be NULL) */
    hf_err_t (*level)(hf_search_t *s, long m);
    /* the number of cells of unit u (>= 1) */
    int64_t (*unit_cells)(const hf_search_t *s, const hf_unit_t *u);
    /* run cells lo, lo + 1, ... of unit u while they are below range->hi, setting
     * range->pos (engines without unit_cells: the whole unit, lo = 0) */
    hf_err_t (*run)(hf_search_t *s, long m, const hf_unit_t *u, int64_t lo,
                    hf_search_range_t *range, hf_run_t *run);
    /* the engine's rule on a candidate in canonical position (keys in s->keys), after the
     * canonical check and before the exact test: *ok = 0 rejects it (a face rejection) */
    hf_err_t (*filter)(hf_search_t *s, long m, const uint32_t *idx, int *ok);
    void (*describe)(const hf_search_t *s, char *buf, size_t n);
    /* the smallest size >= m that may hold a candidate (after prepare): every size between
     * holds none, by the engine's own argument (docs/search.md, "Sizes without
     * candidates"); NULL: m */
    long (*next_size)(const hf_search_t *s, long m);
    /* true when the within-span bound would change nothing but which sizes run, and the
     * engine's own sizes (next_size) already skip every size without a candidate: the
     * bound is not computed (docs/search.md, "Shape rules"); NULL: false */
    int (*span_bound_moot)(const hf_search_t *s);
    /* add the engine's counters, and its sub-searches', to st and *face_tests */
    void (*stats)(const hf_search_t *s, hf_search_stats_t *st, long *face_tests);
    /* nonzero: the engine may run a row as a large row (large.c; auto: when it resolves to
     * such an engine) */
    int large_rows;
    /* nonzero: the engine decides a small limit target exactly and cheaply when its unknowns
     * are at most HF_SEARCH_CONE_AUTO_MAX (the shape rule's counts, shape.c); its cost grows
     * with them (hf_engine_counts_unknowns) */
    int small_exact;
} hf_engine_ops_t;

/* The registry (registry.c, engine.h): an engine's table of operations, NULL outside the
 * table; the first engine that decides small targets exactly (ops->small_exact), 0 when none. */
const hf_engine_ops_t *hf_engine_ops(hf_engine_t e);
int hf_engine_small_exact(hf_engine_t *out);

/* The engines' tables, one per HF_ENGINE_TABLE row (defined in the engine's file). */
#define HF_ENGINE_OPS_DECL(code, name, prunes, ops, text) extern const hf_engine_ops_t ops;
HF_ENGINE_TABLE(HF_ENGINE_OPS_DECL)
#undef HF_ENGINE_OPS_DECL

/* What a top-level search shares with the sub-searches its engine makes. */
typedef struct {
    const hf_search_split_t *split; /* preparing split across processes, or NULL */
} hf_search_shared_t;

struct hf_search_s {
    hf_target_t t;
    hf_fraction_t frac;
    int d, dv, span;
    hf_engine_t engine;         /* resolved: never auto */
    const hf_engine_ops_t *ops; /* its table */
    void *data;                 /* its own state (ops->create) */
    int top;                    /* as hf_search_make_t.top */
    hf_search_shared_t *shared; /* the top-level search's own_shared */
    hf_search_shared_t own_shared;
    int64_t qext[HF_D_MAX]; /* extents of Newt(Q): every support is at least this wide */
    long span_lb;           /* within-span bound (0: not computed) */
    long max_atoms;
    hf_exact_t *exact;
    char *lb_str, *ub_str;
    long lb; /* LONG_MAX when it does not fit */
    long first, last;
    struct hf_newton_cache_s *newton; /* Newt(Q) while the search is made (shape.c) */

    long base;       /* S + 1 */
    long npts;       /* (S + 1)^d: above HF_SEARCH_BOX_MAX in a large row only */
    long nlayer;     /* (S + 1)^(d - 1): points per layer of the last coordinate */
    long *pw;        /* pw[j] = base^(d - 1 - j): index weight of coordinate j */
    uint8_t *digits; /* point p's coordinates (npts x d), or NULL: then divide */
    uint64_t *zmask; /* bit j set when point p has x_j = 0 (with digits) */

    /* prepared level */
    long level_m;
    /* while a level is being prepared: its poll hook and its size (0 when none) */
    hf_search_poll_fn level_poll;
    void *level_poll_ctx;
    long prep_m;
    long nunits, capunits;
    hf_unit_t *units;

    /* the sink's scratch (m entries each, for the largest m run so far; none in a large row) */
    uint32_t *cand; /* a candidate's point indices */
    int64_t *keys;  /* its keys (m d) */
    long *combo;    /* a subset being enumerated, then a cell's points (2 m) */
    long scratch_cap;

    hf_search_stats_t stats;

    /* a large row (large.c; docs/search.md, "Large rows"): P/Q in slices over the processes
     * (frac and exact stay empty), candidates decided by classes of points */
    int large;
    struct hf_large_s *lg;
};

/* ---------------------------------------------------------------- search.c */

/* Make a search of t at span with engine (auto is resolved here). */
hf_err_t hf_search_create_internal(const hf_target_t *t, int span, hf_engine_t engine,
                                   const hf_search_make_t *mk, hf_search_t **out);
hf_err_t hf_search_add_unit(hf_search_t *s, const hf_unit_t *u);
/* The split of the top-level search (hf_search_set_split), or NULL. */
const hf_search_split_t *hf_search_split(const hf_search_t *s);

/* ---------------------------------------------------------------- sink.c */

/* Room for candidates of m points in the sink's scratch. */
hf_err_t hf_search_scratch(hf_search_t *s, long m);
/* The engines' one question whether to stop (nothing else in src/search calls a poll hook
 * or core's stop check; py.code_shape checks it): the poll hook they were given (the
 * scheduler's: progress, and in a dealt step the other ranks' requests; NULL: none), then
 * core's stop flag for their phase (headfuse/stop.h; NULL: the hook alone, where the
 * caller of the hook checks the flag). Nonzero: stop now. */
static inline int hf_search_stop_asked(hf_search_poll_fn poll, void *poll_ctx, const char *phase)
{
    return (poll && poll(poll_ctx)) || (phase && hf_stop_check(phase) != HF_OK);
}

/* The same question of the flag alone, for the loops of a preparation, which have no hook
 * (the cone's rows and sizes, a large row's witness): HF_ERR_INTERRUPTED, core's message
 * saying the phase, or HF_OK. */
static inline hf_err_t hf_search_stop_flag(const char *phase)
{
    return hf_search_stop_asked(NULL, NULL, phase) ? HF_ERR_INTERRUPTED : HF_OK;
}

/* hf_search_stop_flag for hot loops: asked at the first call of *counter (it starts at 0)
 * and then every 2^k calls. */
static inline hf_err_t hf_search_stop_every(unsigned long *counter, int k, const char *phase)
{
    return ((*counter)++ & ((1UL << k) - 1)) ? HF_OK : hf_search_stop_flag(phase);
}

/* The candidate sink: every engine hands each candidate here, m distinct box points idx
 * (sorted). It is counted (run->nodes) and the poll hook called every
 * HF_SEARCH_POLL_EVERY; a candidate not in canonical position is dropped; the engine's
 * filter, if any, may reject it; the exact test decides the rest, and a feasible one is
 * reported (run->found) with its witness. idx may be s->cand. */
hf_err_t hf_search_candidate(hf_search_t *s, long m, const uint32_t *idx, hf_run_t *run);
/* A candidate given by its classes of points (a large row, docs/search.md, "Large rows"),
 * in two steps, so that the engine builds the rows only for a candidate worth testing.
 * begin: counted and polled as above; zero has bit a set when some key has x_a = 0:
 * *go = 0 when it is not in canonical position (dropped). rows: the exact test on the
 * equalities' span eq and the npos inequality rows pos (hf_exact_span_decide); a feasible
 * one is reported implicitly, by its multiplier R (hf_found_t). */
hf_err_t hf_search_candidate_begin(hf_search_t *s, long m, hf_run_t *run, uint64_t zero, int *go);
hf_err_t hf_search_candidate_rows(hf_search_t *s, long m, hf_run_t *run, const hf_rowspan_t *eq,
                                  const fmpz *pos, long npos);

/* ---------------------------------------------------------------- shape.c */

/* Extents of Newt(Q) per coordinate (max - min exponent of Q). */
void hf_search_extents(const hf_fraction_t *f, int64_t *ext);
/* Points of the box B_R = prod_j [0, S - e_j] (the cone engine's unknowns) for this span: 0
 * if some extent e_j of Newt(Q) exceeds it (then no support fits the span at all), LONG_MAX
 * when more (core's hf_box_points, saturated). The one count of B_R's points (cone.c,
 * cone_classes.c, large.c, auto.c, shape.c). */
long hf_search_rbox_points(const hf_fraction_t *f, int span);
/* The same from the extents e[d] of Newt(Q). */
long hf_search_rbox_size(const int64_t *e, int d, int span);
/* The largest size a search of t at span tries (before max_atoms): UB where the product head
 * lies inside the span box, else npts, the box's points. The one rule for hf_search_create
 * and hf_search_engine_planned, so that auto resolves alike in both. */
long hf_search_size_cap(const hf_target_t *t, int span, long npts, const fmpz_t ub);
/* Newt(Q) of s while s is being made (NULL when Q is too large for the shape rules, or
 * when no polytope was computed): computed once, with its faces for a top-level search. */
hf_err_t hf_search_newton(hf_search_t *s, const hf_newton_t **N);
void hf_search_newton_drop(hf_search_t *s);
/* The within-span bound (raises s->first): top-level pruned searches. */
hf_err_t hf_search_span_bound(hf_search_t *s);
/* An exact tester and LB for the limit target along w. */
typedef struct {
    hf_exact_t *exact;
    long lb;
} hf_facetest_t;
hf_err_t hf_search_limit_tester(const hf_target_t *t, const int64_t *w, hf_facetest_t *ft);
/* The target with only the coordinates keep[0..dkeep) (increasing); every head must be
 * flat (one layer) in the others, so each head is the same function of the rest. out
 * initialised; replaced on success, kept on failure. */
hf_err_t hf_search_target_drop(const hf_target_t *t, const int *keep, int dkeep, hf_target_t *out);

/* ---------------------------------------------------------------- shifted.c */

/* The terms of one slice of P/Q (polynomial p = 0: Q, p = 1..dv: P_p) shifted by the unknowns
 * r of R, merged in box order: each call of next gives one point k of the span box and every
 * (p, r, t) with k = (term t of p) + r. */
typedef struct {
    int p;
    long r, t;
} hf_shifted_hit_t;

typedef struct {
    uint64_t key; /* the list's head point */
    long list;
} hf_shifted_head_t;

typedef struct {
    int npoly;
    long *len;            /* per polynomial: its terms */
    const fmpz **coef;    /* and their coefficients */
    uint64_t **off, **zb; /* per term: box offset, zero coordinates */
    long nr;              /* unknowns used */
    uint64_t *rbase, *zr; /* per unknown used: box offset, zero coordinates */
    long *rr;             /* and its index in B_R */
    int *lp;              /* per list: its polynomial */
    long *pos;            /* per list: its next term, counting down */
    hf_shifted_head_t *heap;
    long nheap;
    hf_shifted_hit_t *hits; /* the current point's */
} hf_shifted_t;

/* The merge of slice f (in s's d variables, exponents within Newt(Q)'s extents: else
 * HF_ERR_INTERNAL) shifted by the unknowns r of B_R (radices brad, n of them) with use[r] != 0
 * (use NULL: all). w is filled (clear it even on error). */
hf_err_t hf_shifted_init(hf_shifted_t *w, const hf_search_t *s, const hf_fraction_t *f,
                         const uint8_t *use, long n, const int64_t *brad);
/* The next point (*point, its zero coordinates *zero) and the number of its hits (in
 * w->hits); 0 when every point was given. */
long hf_shifted_next(hf_shifted_t *w, uint64_t *point, uint64_t *zero);
void hf_shifted_clear(hf_shifted_t *w);

/* ---------------------------------------------------------------- bytes.c */

/* Bytes exchanged between processes: a growable buffer, unsigned integers in 7-bit groups
 * (varints), and integers of any size (a varint 2 z for |x| < 2^62, z its zigzag; else
 * 4 L + 2 s + 1 and L 64-bit limbs, s the sign). The reader's functions return 0 when the
 * bytes end too early or are damaged. */
typedef struct {
    unsigned char *buf;
    long len, cap;
} hf_bytes_t;

typedef struct {
    const unsigned char *at, *end;
} hf_bytes_reader_t;

hf_err_t hf_bytes_put(hf_bytes_t *k, const void *x, size_t n);
hf_err_t hf_bytes_put_varint(hf_bytes_t *k, uint64_t u);
hf_err_t hf_bytes_put_fmpz(hf_bytes_t *k, const fmpz_t x);
int hf_bytes_get(hf_bytes_reader_t *r, void *x, size_t n);
int hf_bytes_get_varint(hf_bytes_reader_t *r, uint64_t *u);
int hf_bytes_get_fmpz(hf_bytes_reader_t *r, fmpz_t x);

/* ---------------------------------------------------------------- large.c */

/* Estimated terms of Q above which a cone search is a large row (tests lower it:
 * HF_KNOB_LARGE_MIN_TERMS, HEADFUSE_LARGE_MIN_TERMS). */
#define HF_SEARCH_LARGE_MIN_TERMS (1L << 18)
long hf_search_large_min_terms(void);
/* Whether a search of t with this engine is a large row: cone (or auto) and more than
 * hf_search_large_min_terms() estimated terms of Q. */
hf_err_t hf_search_large_wanted(const hf_target_t *t, int span, hf_engine_t engine, int *large);
/* hf_search_large_wanted, and auto would take the cone (as a search made of it resolves):
 * whether a search of t at span is a large row, before it is made (the memory estimate). */
hf_err_t hf_search_large_estimated(const hf_target_t *t, int span, hf_engine_t engine, int *large);
/* The large row's state at creation: this process's slices and Newt(Q)'s extents (qext). */
hf_err_t hf_search_large_create(hf_search_t *s);
void hf_search_large_destroy(hf_search_t *s);
/* The plan of a large row's slices for nranks processes and the largest share of the slices'
 * weight one of them holds (the memory estimate's). Not collective; builds no P/Q. */
hf_err_t hf_search_large_share(const hf_target_t *t, int span, int nranks, hf_slice_plan_t *plan,
                               double *share);
/* The slices dealt to the processes of sp (NULL: one process holds them all); once. */
hf_err_t hf_search_large_deal(hf_search_t *s, const hf_search_split_t *sp);
/* This process's slices of P/Q (each in t's d variables); their number. */
long hf_search_large_slices(const hf_search_t *s, const hf_fraction_t **part);

/* Total counters over a search and all its recursive sub-searches (for benchmarks). */
void hf_search_total_stats(const hf_search_t *s, hf_search_stats_t *st, long *face_tests);

#endif
