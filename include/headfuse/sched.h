/* The MPI scheduler: runs one search across the ranks of a communicator.
 *
 * Sizes m are decided in order. For each size, the deterministic unit list of the
 * search is dealt out dynamically as ranges of the units' cells (search.h): rank 0
 * coordinates and also works (it serves requests from inside its own ranges through the
 * search's poll hook), and a rank that runs out of work gets half of the rest of the
 * longest-running range (work stealing), so no core idles while another holds a long
 * unit. The engine's preparations (the one-time one: the cone's double description; each
 * size's: the layered engine's face tables) are dealt out the same way (hf_sched_split_t,
 * set on the search before the one-time preparation). Sizes the engine knows to hold no
 * candidate are skipped (hf_search_next_size). When a size has a feasible support, that
 * size is finished (so every minimal support is found) and the search stops. Cell ranges
 * finished in an earlier run are skipped (resume). SIGTERM/SIGUSR1 make every rank abandon
 * its range in flight and stop; the caller then exits with HF_ERR_INTERRUPTED's status.
 *
 * This module does not store anything: it hands each found support and each finished
 * range of a unit's cells to hooks (the campaign wires them to the HDF5 shard of the
 * rank). */
#ifndef HEADFUSE_SCHED_H
#define HEADFUSE_SCHED_H

#include <mpi.h>
#include <stdint.h>

#include "headfuse/search.h"
#include "headfuse/stop.h"

/* The sched module's phases for hf_stop_check (headfuse/stop.h). */
#define HF_SCHED_STOP_PHASES(X) X(UNITS, "running units")
HF_SCHED_STOP_PHASES(HF_STOP_DECLARE)

/* Cells [lo, hi) of a unit (hi may be INT64_MAX: to the end of the unit). */
typedef struct {
    long unit;
    int64_t lo, hi;
} hf_sched_item_t;

/* Cells [lo, hi) of unit (m, unit) finished in an earlier run (from the shards), with their
 * cost and yield; hi = INT64_MAX: to the end of the unit (a whole unit). */
typedef struct {
    int64_t m, unit, lo, hi, nodes, found;
} hf_sched_done_t;

typedef struct {
    /* A feasible support found by this rank in the range of unit (f->m, unit) starting at
     * cell lo. */
    hf_err_t (*found)(void *ctx, long unit, int64_t lo, const hf_found_t *f);
    /* This rank finished cells [lo, hi) of unit (m, unit): persist what it found. */
    hf_err_t (*unit_done)(void *ctx, long m, long unit, int64_t lo, int64_t hi, long nodes,
                          long found, double seconds);
    void *ctx;
} hf_sched_hooks_t;

/* What the scheduler runs for preparation, each size and each range of cells: the search
 * itself by default. bench/scaling_driver replaces them with recorded costs to simulate
 * many ranks under SimGrid SMPI; the scheduling and every MPI message stay the real ones.
 * The calls mirror hf_search_prepare, hf_search_set_split, hf_search_level_polled,
 * hf_search_unit_cells and hf_search_run_cells. */
typedef struct {
    hf_err_t (*prepare)(void *ctx, hf_search_poll_fn poll, void *poll_ctx);
    void (*set_split)(void *ctx, const hf_search_split_t *split);
    hf_err_t (*level)(void *ctx, long m, hf_search_poll_fn poll, void *poll_ctx, long *nunits);
    hf_err_t (*unit_cells)(void *ctx, long m, long unit, int64_t *cells);
    hf_err_t (*run_cells)(void *ctx, long m, long unit, int64_t lo, hf_search_range_t *range,
                          hf_search_found_fn found, void *found_ctx, hf_search_poll_fn poll,
                          void *poll_ctx, long *nodes);
    long (*next_size)(void *ctx, long m); /* hf_search_next_size; NULL: every size */
    void *ctx;
} hf_sched_runner_t;

/* A task that needs no other rank (the symmetry group, docs/architecture.md, "The idle task"):
 * in a run with several ranks it is run, instead of waiting, by the first of two ranks to
 * wait in a round: the last rank after it reported its first work, or rank 0 when it has
 * nothing left to run and the last rank has reported nothing yet (rank 0 then answers
 * nobody until it is done). `ran` is then 1 on that rank and `status` what run returned;
 * `taken` says that rank 0 has it. Rarely both run it: run must give the same on every
 * rank, and hf_sched_idle_agree fails the run if it failed on either. The caller runs it
 * itself when no rank ran it during hf_sched_run. */
typedef struct {
    hf_err_t (*run)(void *ctx);
    void *ctx;
    int ran, taken;
    hf_err_t status;
} hf_sched_idle_t;
/* Run it here unless it ran already (ran = 1, status = what run returned). */
void hf_sched_idle_run(hf_sched_idle_t *it);
/* Collective, once every rank that runs it has: the error of any rank that ran it (the
 * lowest such rank's message, headfuse/agree.h), else HF_OK. When two ranks ran it, an
 * error on either fails the run although the other's result would serve: the outcome
 * does not hang on which rank's result is taken, and a reached fault is never silent. */
hf_err_t hf_sched_idle_agree(MPI_Comm comm, const hf_sched_idle_t *it);

typedef struct {
    long first_m, last_m;        /* sizes to decide (inclusive) */
    const hf_sched_done_t *done; /* sorted by (m, unit, lo), disjoint per unit; may be NULL */
    long ndone;
    int quiet;                       /* no progress lines */
    double progress_interval;        /* seconds between progress lines on rank 0 */
    const char *label;               /* progress prefix, e.g. the target name */
    const hf_sched_runner_t *runner; /* NULL: the search passed to hf_sched_run */
    int dedicated; /* 1: rank 0 only coordinates (0: it also works, the default) */
    /* Work outside the rounds that a rank does once while it would wait (hf_sched_idle_t).
     * NULL: none. */
    hf_sched_idle_t *idle;
} hf_sched_opts_t;

typedef struct {
    long m_star;          /* first size with a feasible support; -1 if none */
    long last_m;          /* largest size fully decided (first_m - 1 if none) */
    long nfound;          /* feasible supports of size m_star (all ranks, incl. resumed) */
    long nodes;           /* candidates over all decided units (deterministic) */
    long units;           /* units of all decided sizes */
    double seconds;       /* wall time of this run */
    double idle_fraction; /* this rank: time waiting for work / wall time */
    double coord_seconds; /* rank 0: time spent answering requests */
    long coord_messages;  /* rank 0: messages handled (requests and steal replies) */
    long steals;          /* rank 0: ranges split off a running range and handed out */
    long rounds;          /* rounds dealt: one per size, one per face-table size prepared */
    int interrupted;      /* stopped by a signal before finishing */
} hf_sched_outcome_t;

/* What the deal of work to the ranks cost (every round of one hf_sched_split_t). */
typedef struct {
    double idle;          /* this rank: seconds waiting for work */
    double coord_seconds; /* rank 0: seconds handling messages */
    long coord_messages;  /* rank 0: messages handled */
    long steals;          /* rank 0: ranges split off running ones and handed out */
    long rounds;
} hf_sched_deal_stats_t;

/* The split of each size's preparation across the ranks of comm (hf_search_split_t,
 * docs/architecture.md): its deal hands the sub-units' cells out dynamically, with
 * stealing, as hf_sched_run deals a size's units; its exchange agrees on errors by the
 * rule of headfuse/agree.h, then on stop requests, then gathers the bytes. hf_sched_run
 * sets one on the search (or the runner) when comm has several ranks, before the search's
 * one-time preparation (hf_search_prepare), and takes it off at the end. Initialised by the
 * call (nothing to free); `split` is what hf_search_set_split takes. */
typedef struct {
    hf_search_split_t split;
    MPI_Comm comm;
    int dedicated;               /* as hf_sched_opts_t.dedicated */
    hf_sched_idle_t *idle;       /* as hf_sched_opts_t.idle; NULL: none */
    int last_reported;           /* rank 0: the last rank reported work (hf_sched_idle_t) */
    hf_sched_deal_stats_t stats; /* of every round dealt through it */
} hf_sched_split_t;
void hf_sched_split_init(hf_sched_split_t *sp, MPI_Comm comm);

/* Run the round `items` (the same on every rank) on the ranks of sp->comm, as
 * hf_sched_run runs a size: every cell is run once, by the rank `run` is called on, unless
 * the round is abandoned (a rank entering with status != HF_OK, or a run that fails or
 * stops: the others then take no more work). `run` gets this round's poll, which answers
 * the other ranks: it must be called often while a range runs (the search's poll hook
 * does). `done`, if set, is told on rank 0 of every range finished. Collective; returns
 * this rank's status. */
typedef hf_err_t (*hf_sched_run_fn)(void *ctx, const hf_sched_item_t *item,
                                    hf_search_range_t *range, hf_search_poll_fn poll,
                                    void *poll_ctx, long *nodes, long *found);
typedef void (*hf_sched_done_fn)(void *ctx, const hf_sched_item_t *item, long nodes, long found);
hf_err_t hf_sched_deal(hf_sched_split_t *sp, hf_err_t status, const hf_sched_item_t *items,
                       long nitems, hf_sched_run_fn run, void *run_ctx, hf_sched_done_fn done,
                       void *done_ctx);

/* Collective: every rank's len bytes at mine into all, rank r's at all + displs[r]
 * (counts[r] bytes; blocks in rank order, displs[0] = 0, each displs[r + 1] =
 * displs[r] + counts[r]; mine may be all + displs[rank]). Bruck's algorithm over
 * point-to-point messages (tags HF_SCHED_TAG_GATHER and HF_SCHED_TAG_GATHER + 1):
 * ceil(log2 n) rounds. */
enum { HF_SCHED_TAG_GATHER = 103 };
void hf_sched_allgatherv(const void *mine, int len, void *all, const int *counts, const int *displs,
                         MPI_Comm comm);

/* Where hf_sched_gather_bytes puts what it gathers (NULL fields: hf_malloc and free). */
typedef struct {
    void *(*alloc)(size_t bytes);
    void (*release)(void *p);
} hf_sched_alloc_t;

/* Collective: first an agreement on every rank's status (an error or a stop, as the
 * split's exchange reports them); then every rank's len bytes at mine (NULL: its block of
 * the result, left as the allocator gave it) gathered in rank order into one buffer,
 * *out (NULL on failure; the caller releases it) and *outlen, by hf_sched_allgatherv
 * after the lengths. A failed allocation is agreed too: every rank returns the same
 * status. Four collective calls. */
hf_err_t hf_sched_gather_bytes(MPI_Comm comm, hf_err_t status, const void *mine, size_t len,
                               const hf_sched_alloc_t *alloc, void **out, size_t *outlen);

/* Install the SIGTERM/SIGUSR1 handlers (flag only; async-signal-safe). */
void hf_sched_install_signals(void);
/* Nonzero once a stop signal arrived (a test requests one with hf_stop_request, core). */
int hf_sched_stop_requested(void);

/* Collective over comm. Every rank passes its own search (same target and options).
 * Outcome identical on all ranks except seconds/idle_fraction. */
hf_err_t hf_sched_run(MPI_Comm comm, hf_search_t *search, const hf_sched_opts_t *opts,
                      const hf_sched_hooks_t *hooks, hf_sched_outcome_t *out);

#endif
