/* The minimal-support search over one target and one span (docs/math.md §3, §4, §7, §8).
 *
 * Search space: key sets K inside the box {0..S}^d in canonical position (every
 * coordinate's minimum over K is 0). Sizes m = 1, 2, ... are decided in order. For
 * each size the space is cut into work units; a unit is deterministic (the same unit
 * list on every rank, whatever the number of ranks), so units can be handed out
 * dynamically, logged, and skipped on resume. This module is pure computation: no
 * MPI, no files (the scheduler and the store do those).
 *
 * Every engine but plain prunes, and only by proven rules (docs/search.md):
 *  - sizes below the face-rule lower bound LB(T) hold no feasible support;
 *  - layered generation along one coordinate: the bottom and top layers of K are faces
 *    of K, so they must be feasible supports of the limit targets (found recursively);
 *  - every other coordinate face of a candidate must be feasible for its limit target;
 *  - the exact test (with its modular-rank rejection) decides each survivor.
 * The plain engine tests every m-subset of the box in canonical position: the reference
 * enumerator. */
#ifndef HEADFUSE_SEARCH_H
#define HEADFUSE_SEARCH_H

#include <stddef.h>
#include <stdint.h>

#include "headfuse/bounds.h" /* hf_bounds_t, hf_lower_t */
#include "headfuse/engine.h" /* hf_engine_t: the registry */
#include "headfuse/target.h" /* HF_SPAN_MAX */
#include "headfuse/stop.h"

/* The search module's phases for hf_stop_check (headfuse/stop.h). */
#define HF_SEARCH_STOP_PHASES(X)                                                                   \
    X(ROWS, "building the cone's rows")                                                            \
    X(RAYS, "computing the cone's rays")                                                           \
    X(SIZES, "listing the sizes of the cone's faces")                                              \
    X(TABLES, "building the layered engine's face tables")
HF_SEARCH_STOP_PHASES(HF_STOP_DECLARE)

/* The box limits HF_SEARCH_BOX_MAX and HF_SEARCH_LARGE_BOX_MAX: target.h. */
/* (S + 1)^d, the points of the box {0..S}^d, or -1 above LONG_MAX (core's hf_box_points; the
 * limits are the callers'). */
long hf_search_box_points(int d, int span);

typedef struct {
    int span;           /* S >= 1: keys in {0..S}^d */
    long max_atoms;     /* largest size tried; 0 = no limit (up to the upper bound) */
    hf_engine_t engine; /* auto (0, the default), cone, layered, or plain: no pruning */
} hf_search_opts_t;

/* Called every few thousand candidates; return nonzero to abandon the unit
 * (then hf_search_run_unit returns HF_ERR_INTERRUPTED and the unit counts as not done). */
typedef int (*hf_search_poll_fn)(void *ctx);

/* A feasible support as the search reports it. Explicit (every support of an ordinary
 * search): keys[m*d] in canonical position, sorted lexicographically, and witness, the exact
 * weights and values for those keys (NULL when the caller asked for none). Implicit (a
 * large row of the cone engine, docs/search.md, "Large rows"): keys and witness are NULL
 * and r holds the multiplier R, nr integers on the box B_R = prod_a [0, S - e_a] (index of
 * (r_0, ..., r_{d-1}) in mixed radix, r_0 most significant): the support is supp(Q R) with
 * Q shifted to per-coordinate minimum 0, each key k weighted (Q R)_k and valued
 * (P_j R)_k / (Q R)_k (docs/math.md §7.7); hf_search_large_emit streams it. */
typedef struct {
    long m;
    const int64_t *keys;
    const hf_head_t *witness;
    long nr;
    const fmpz *r;
} hf_found_t;

/* Called for each feasible support found. */
typedef hf_err_t (*hf_search_found_fn)(void *ctx, const hf_found_t *f);

/* Opaque search state; one per rank. */
typedef struct hf_search_s hf_search_t;

/* The one check of a search's options against its target (the options' ranges, the
 * target's dimensions, the box's size: above HF_SEARCH_BOX_MAX points only for a large row,
 * decided as hf_search_create decides it), without building anything. Every other function
 * here that takes opts expects options that passed it: the caller checks them once, before
 * (the campaign at a row's admission, hf_campaign_check_row). Bad options (span out of
 * 1..HF_SPAN_MAX, an unknown engine, max_atoms < 0, box too large) -> HF_ERR_INPUT. */
hf_err_t hf_search_check(const hf_target_t *t, const hf_search_opts_t *opts);

/* Prepare a search of t with opts (checked: hf_search_check): fraction, exact tester,
 * bounds, limit targets, symmetry group. bounds: the target's bounds when the caller
 * computed them already (its row needs them too), else NULL: the search computes LB and
 * UB itself; read here only. */
hf_err_t hf_search_create(const hf_target_t *t, const hf_search_opts_t *opts,
                          const hf_bounds_t *bounds, hf_search_t **out);
void hf_search_destroy(hf_search_t **s);

/* An estimate of the peak memory of one rank of a search (bytes), from its parts, before
 * anything is built (docs/targets.md, "Limits"; the constants and their measurements:
 * src/search/memory.c and docs/performance.md §15):
 *     total = base + fraction + box + keys * (search_per_key + witness_per_key)
 * keys bounds both |supp Q| (the terms of Q: the exact tester's and the engine's tables
 * are sized by them) and the largest support the search may test and hold a witness of:
 * UB (|supp Q| <= UB: Q divides the product of the heads' denominators), or the box's
 * points when UB does not cap the sizes (the product head does not fit the span) and
 * neither max_atoms. Not counted: the layered engine's tables of feasible supports (they
 * grow with what is found) and many minimal supports held by rank 0 at the end. */
typedef struct {
    double base;     /* the process: libraries, MPI, the target */
    double fraction; /* building and holding P/Q (hf_fraction_estimate) */
    double box;      /* the box's digit tables, when built: (d + 8) bytes a point */
    double keys;     /* K above */
    double search_per_key, witness_per_key; /* bytes a key */
    double total;
    /* A large row (docs/search.md, "Large rows") holds no key lists: per rank,
     *     total = base + fraction + buffers,  fraction = held,
     * held its share of the slices of P/Q (the deal's, for `ranks` ranks), buffers the
     * witness's rounds and the class tables; keys and the per-key figures are then 0. */
    int ranks, large;
    double held, buffers;
    double share; /* the largest share of the slices one rank holds (large rows) */
    long slices;  /* the slices of P/Q dealt over the ranks (large rows) */
} hf_search_memory_t;

/* Fill m for a search of t with opts (checked: hf_search_check) on `ranks` ranks (>= 1: a
 * large row's share depends on it), its UB from bounds (or computed when NULL). Builds
 * nothing: milliseconds for every built-in family. */
hf_err_t hf_search_memory(const hf_target_t *t, const hf_search_opts_t *opts,
                          const hf_bounds_t *bounds, int ranks, hf_search_memory_t *m);

/* The engine in use (auto resolved at creation). */
hf_engine_t hf_search_engine(const hf_search_t *s);
/* The engine a search of t with opts (checked: hf_search_check) will run, before it is
 * made: opts->engine, or the one auto resolves to as hf_search_create resolves it
 * (docs/search.md, "Which engine auto takes"), and the cone's unknowns n = |B_R| (0: no
 * support fits the span), from Newt(Q)'s extents and the bounds (UB from bounds, or
 * computed when NULL) without building P/Q. Not collective. */
hf_err_t hf_search_engine_planned(const hf_target_t *t, const hf_search_opts_t *opts,
                                  const hf_bounds_t *bounds, hf_engine_t *engine, long *unknowns);

/* One-time preparation before the first size (the cone engine's extreme rays; nothing for
 * the others). Deterministic; calls poll now and then and stops with HF_ERR_INTERRUPTED
 * when it answers nonzero. hf_search_level prepares on its own if this was not called. */
hf_err_t hf_search_prepare(hf_search_t *s, hf_search_poll_fn poll, void *poll_ctx);

/* One line for progress reports: the engine and its preparation so far ("engine cone: 48
 * unknowns, 170 rows; rays: row 120/170, 4855 kept; pairs: ..."). */
void hf_search_describe(const hf_search_t *s, char *buf, size_t n);

/* Bounds computed at creation, as decimal strings (may exceed 64 bits). */
const char *hf_search_lb(const hf_search_t *s);
const char *hf_search_ub(const hf_search_t *s);

/* Smallest size worth enumerating: every smaller support is infeasible by a proven
 * rule (LB, raised by the within-span bound, for a pruning engine; 1 for plain). */
long hf_search_first_size(const hf_search_t *s);

/* Largest size the search will try: max_atoms if set, else min(UB, box points). */
long hf_search_last_size(const hf_search_t *s);

/* The smallest size >= m that may hold a candidate, after hf_search_prepare: m itself,
 * unless the engine knows that the sizes between hold none (the cone engine knows the
 * sizes of its faces: docs/search.md, "Sizes without candidates"). Deterministic: the same
 * on every rank and in every run of the same search, so skipping those sizes changes
 * neither the table nor what a resumed run does. */
long hf_search_next_size(const hf_search_t *s, long m);

/* Prepare size m and return its number of work units (may be 0). Deterministic. */
hf_err_t hf_search_level(hf_search_t *s, long m, long *nunits);

/* The same, calling poll now and then while the size is prepared (the layered engine
 * grows its face tables by sub-searches here) and stopping with HF_ERR_INTERRUPTED when it
 * answers nonzero; the size is then left unprepared. hf_search_describe reports the
 * preparation meanwhile. poll may be NULL. */
hf_err_t hf_search_level_polled(hf_search_t *s, long m, hf_search_poll_fn poll, void *poll_ctx,
                                long *nunits);

/* ---- cells: the pieces of a unit that can be run apart ----
 * A unit's candidates are cut into cells 0..C-1 (C from hf_search_unit_cells), in the
 * order the unit visits them. Cells hold disjoint candidates, so the ranges of any
 * partition of [0, C) run one by one examine exactly the unit's candidates: the same
 * supports with the same witnesses, and nodes adding up to the unit's. The scheduler runs
 * ranges and hands the rest of a long one to another process by lowering its end while it
 * runs (work stealing). Layered units have a cell per triple (bottom layer, top level and
 * top layer) and choice of the next few middle points; cone and plain units are one cell. */
typedef struct {
    int64_t pos; /* the cell being run: set by the search before it starts each cell */
    int64_t hi;  /* the range ends before cell hi: read by the search at every new cell, so
                  * the poll hook may lower it to any value > pos while the range runs */
} hf_search_range_t;

/* Number of cells (>= 1) of unit `unit` of the prepared size m. */
hf_err_t hf_search_unit_cells(const hf_search_t *s, long m, long unit, int64_t *cells);

/* Run cells lo, lo + 1, ... of a unit while they are below range->hi (lo < range->hi <= the
 * unit's cells), as hf_search_run_unit runs them all; range->pos says where it is.
 * *nodes = candidates examined in the cells run. */
hf_err_t hf_search_run_cells(hf_search_t *s, long m, long unit, int64_t lo,
                             hf_search_range_t *range, hf_search_found_fn found, void *found_ctx,
                             hf_search_poll_fn poll, void *poll_ctx, long *nodes);

/* Runs cells [lo, range->hi) of sub-unit `unit` of a round of hf_search_split_t.deal,
 * calling poll (the round's own: it answers the other processes) as often as the search's
 * poll hook. */
typedef hf_err_t (*hf_search_deal_fn)(void *ctx, long unit, int64_t lo, hf_search_range_t *range,
                                      hf_search_poll_fn poll, void *poll_ctx);

/* Preparing a size split across processes (set by the scheduler, which owns the MPI side:
 * this module calls no MPI). The layered engine grows its face tables by running the
 * units of sub-searches; with a split set, the units of each table size are dealt out to
 * the processes by `deal` (dynamically, a process running the cell ranges it is given),
 * and the tables are completed by an exchange. The tables (and so the units and supports)
 * are the same for every process count. */
typedef struct {
    int rank, nranks;
    /* Collective over the nranks processes, reached by every one with its own status
     * (HF_OK, an error, or HF_ERR_INTERRUPTED after a stop request), so a stop or an
     * error on one process never leaves the others waiting. Returns the agreed status:
     * an error of some process when one failed (the rule of headfuse/agree.h: the lowest
     * process's own error wins), else HF_ERR_INTERRUPTED when one stopped, else HF_OK.
     * With out == NULL it only agrees (len must be 0). Otherwise, on HF_OK, *out
     * (hf_malloc'd; the caller frees it) holds every process's len bytes in process
     * order and *outlen their total; on any other status *out is NULL. */
    hf_err_t (*allgather)(void *ctx, hf_err_t status, const void *buf, size_t len, void **out,
                          size_t *outlen);
    /* Collective: one round over nunits units with cells[u] cells each (the same on every
     * process; process 0's are used). Every cell is run by exactly one process, through
     * run, unless the round is abandoned: a process that enters with status != HF_OK, or
     * whose run fails or is stopped, makes the others stop taking work. Returns this
     * process's status (its own error, HF_ERR_INTERRUPTED, or HF_OK); the exchange after
     * it agrees across processes. */
    hf_err_t (*deal)(void *ctx, hf_err_t status, long nunits, const int64_t *cells,
                     hf_search_deal_fn run, void *run_ctx);
    void *ctx;
} hf_search_split_t;

/* Use split (NULL: none, the default) for every later size's preparation by s and its
 * sub-searches. Every process must then prepare the same sizes in the same order, as
 * the scheduler does. split must outlive its use; s keeps the pointer. */
void hf_search_set_split(hf_search_t *s, const hf_search_split_t *split);

/* Run unit `unit` (0 <= unit < nunits) of the prepared size m. *nodes = candidate
 * supports examined (deterministic). found/poll may be NULL. */
hf_err_t hf_search_run_unit(hf_search_t *s, long m, long unit, hf_search_found_fn found,
                            void *found_ctx, hf_search_poll_fn poll, void *poll_ctx, long *nodes);

/* P/Q (headfuse/algebra.h, which needs FLINT's polynomials: not included here, so that this
 * header stays usable beside PETSc's, whose complex I clashes with them). */
typedef struct hf_fraction_s hf_fraction_t;
/* What the target's symmetry group is built from (the search never needs the group: the
 * campaign makes it, hf_campaign_group): P/Q as the search holds it, NULL for a large row,
 * which holds only its slices; a large row's estimated terms of P and Q together
 * (LONG_MAX when not known; 0 for another search). */
const hf_fraction_t *hf_search_fraction(const hf_search_t *s);
long hf_search_large_terms(const hf_search_t *s);

/* A minimum proven over all integer keys, not only within a span (docs/search.md,
 * "Certified over all keys"). Two dimensions: when the Newton polygon has only
 * sigmoid-type edges of lattice length <= 2, every support other than supp(Q) has at least
 * boundary + 2 keys, so a feasible supp(Q) no larger than that is the minimum. Three
 * dimensions (faces3d.h): every support other than supp(Q) has at least `nonpoint` keys
 * (the face accounting), so a feasible supp(Q) no larger than that is the minimum; when it
 * is larger, lb = min(|supp Q|, nonpoint) is still a proven span-free lower bound. */
typedef struct {
    int certified;       /* 1: m_star is m*(T) over all integer keys */
    long m_star;         /* -1 when not certified */
    int unique;          /* 1: supp(Q) is the only minimal support, up to translation */
    long boundary;       /* 2-D: the bound B0; 3-D: keys forced on the boundary when the hull
                          * is a translate of Newt(Q) (0: not reached) */
    const char *rule;    /* "newton_2d" or "newton_3d" when certified, else NULL */
    int dim;             /* which argument ran to the end: 2, 3, or 0 (none applies) */
    long lb;             /* a lower bound on m*(T) over all integer keys from it (-1: none) */
    long nonpoint;       /* every support other than supp(Q) translated has at least this many
                          * keys (-1: not reached) */
    long supp_q;         /* |supp Q| (0: not computed) */
    int supp_q_feasible; /* supp(Q) passed the exact test */
    char faces[320];     /* 3-D: the face types of Newt(Q) in words ("" otherwise) */
    char weakest[96];    /* 3-D: the kind of hull that gives `nonpoint`, in words */
    long shares, zones;  /* 3-D: nonpoint is the larger of the shares' count (base + delta)
                          * and the zone count's (docs/math.md §11.13) */
} hf_certificate_t;

/* Whether the product head's keys fit the box {0..span}^d (each coordinate's extents of the
 * heads add up to at most span): then UB caps a search's sizes, and LB = UB is the minimum
 * within the span too. */
int hf_search_product_fits(const hf_target_t *t, int span);

/* *none = 1 when some extent of Newt(Q) exceeds the span: then no support fits the span box
 * (widths add under Minkowski sums, docs/math.md §5.6). From the heads' factors, without P/Q
 * (hf_fraction_slice_plan). */
hf_err_t hf_search_span_holds_none(const hf_target_t *t, int span, int *none);

/* Try to certify T's minimum (not collective; exact; cheap). *out says whether. */
hf_err_t hf_search_certify(const hf_target_t *t, hf_certificate_t *out);

/* The best proven lower bound on m*(T) over all integer keys, from the bounds' LB (low,
 * hf_bounds_lower_info) and the 2-D or 3-D argument (c, hf_search_certify): lb (initialised
 * by the caller) and its rule (a static name of HF_RULE_TABLE): c's lb with newton_2d or
 * newton_3d when it is larger, else low's. What `headfuse target` reports as lb. */
void hf_search_best_lower(const hf_lower_t *low, const hf_certificate_t *c, fmpz_t lb,
                          const char **rule);

/* ---- large rows (docs/search.md, "Large rows") ----
 * A cone search whose Q has more than 2^18 terms holds P/Q in slices over the processes,
 * decides each candidate from its classes of points and reports a support implicitly, by
 * its multiplier R (hf_found_t). These calls are for writing such a support. */

/* 1 when s is a large row. */
int hf_search_is_large(const hf_search_t *s);
/* Unknowns of R (nr of an implicit support). */
long hf_search_large_unknowns(const hf_search_t *s);
/* The order of two implicit supports of s (after preparation): *cmp < 0, 0 or > 0 as the
 * first's sorted key list comes before, equals or comes after the second's. Not collective. */
hf_err_t hf_search_large_cmp(const hf_search_t *s, const fmpz *ra, const fmpz *rb, int *cmp);
/* The part of the implicit support R that this process's slices hold: emit is called for each
 * key, in increasing box point within each slice, with its box point index, its coordinates
 * x[d], its weight c = (Q R)_k > 0 and u[dv] = (P_j R)_k (its value times c). Not collective;
 * every process streams its own part. HF_ERR_INTERNAL when R is not a witness (a negative
 * (Q R)_k, or P R nonzero where Q R is zero). */
typedef hf_err_t (*hf_search_emit_fn)(void *ctx, uint64_t point, const int64_t *x, const fmpz_t c,
                                      const fmpz *u);
hf_err_t hf_search_large_emit(const hf_search_t *s, const fmpz *R, hf_search_emit_fn emit,
                              void *ctx);
/* The keys one process emits come in runs of equal (point / D) for this D, and the runs of
 * all processes, in increasing point / D, are the support's keys in order. */
uint64_t hf_search_large_run_divisor(const hf_search_t *s);

/* Counters for reports: exact tests run, by reason, face-rule rejections. */
typedef struct {
    long exact_tests;
    long face_rejections;
    long canonical_rejections;
} hf_search_stats_t;
const hf_search_stats_t *hf_search_stats(const hf_search_t *s);

#endif
