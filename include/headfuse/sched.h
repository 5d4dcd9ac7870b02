/* The MPI scheduler: runs one search across the ranks of a communicator.
 *
 * Sizes m are decided in order. For each size, the deterministic unit list of the
 * search is handed out dynamically: rank 0 coordinates and also works (it serves
 * requests from inside its own units through the search's poll hook), so no core
 * idles. When a size has a feasible support, that size is finished (so every minimal
 * support is found) and the search stops. Units finished in an earlier run are
 * skipped (resume). SIGTERM/SIGUSR1 make every rank abandon its unit in flight and
 * stop; the caller then exits with HF_ERR_INTERRUPTED's status.
 *
 * This module does not store anything: it hands each found support and each finished
 * unit to hooks (the command line wires them to the HDF5 shard of the rank). */
#ifndef HEADFUSE_SCHED_H
#define HEADFUSE_SCHED_H

#include <mpi.h>
#include <stdint.h>

#include "headfuse/search.h"

/* A unit finished in an earlier run (from the shards), with its cost and yield. */
typedef struct {
    int64_t m, unit, nodes, found;
} hf_sched_done_t;

typedef struct {
    /* A feasible support found by this rank in unit (m, unit). */
    hf_err_t (*found)(void *ctx, long m, long unit, const int64_t *keys, const hf_head_t *w);
    /* This rank finished unit (m, unit): persist what it found. */
    hf_err_t (*unit_done)(void *ctx, long m, long unit, long nodes, long found, double seconds);
    void *ctx;
} hf_sched_hooks_t;

/* What the scheduler runs for preparation, each size and each unit: the search itself
 * by default. bench/scaling_driver replaces them with recorded costs to simulate many
 * ranks under SimGrid SMPI; the scheduling and every MPI message stay the real ones.
 * The calls mirror hf_search_prepare, hf_search_level and hf_search_run_unit. */
typedef struct {
    hf_err_t (*prepare)(void *ctx, hf_search_poll_fn poll, void *poll_ctx);
    hf_err_t (*level)(void *ctx, long m, long *nunits);
    hf_err_t (*run_unit)(void *ctx, long m, long unit, hf_search_found_fn found, void *found_ctx,
                         hf_search_poll_fn poll, void *poll_ctx, long *nodes);
    void *ctx;
} hf_sched_runner_t;

typedef struct {
    long first_m, last_m;        /* sizes to decide (inclusive) */
    const hf_sched_done_t *done; /* sorted by (m, unit); may be NULL */
    long ndone;
    int quiet;                       /* no progress lines */
    double progress_interval;        /* seconds between progress lines on rank 0 */
    const char *label;               /* progress prefix, e.g. the target name */
    const hf_sched_runner_t *runner; /* NULL: the search passed to hf_sched_run */
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
    long coord_messages;  /* rank 0: requests answered */
    int interrupted;      /* stopped by a signal before finishing */
} hf_sched_outcome_t;

/* The split of each size's preparation across the ranks of comm (hf_search_split_t,
 * docs/architecture.md): its exchange agrees on errors by the rule of headfuse/agree.h,
 * then on stop requests, then gathers the bytes. hf_sched_run sets one on the search
 * when comm has several ranks and no runner replaces the search. Initialised by the call
 * (nothing to free); `split` is what hf_search_set_split takes. */
typedef struct {
    hf_search_split_t split;
    MPI_Comm comm;
} hf_sched_split_t;
void hf_sched_split_init(hf_sched_split_t *sp, MPI_Comm comm);

/* Install the SIGTERM/SIGUSR1 handlers (flag only; async-signal-safe). */
void hf_sched_install_signals(void);
/* Nonzero once a stop signal arrived (also settable for tests). */
int hf_sched_stop_requested(void);
void hf_sched_request_stop(void);

/* Collective over comm. Every rank passes its own search (same target and options).
 * Outcome identical on all ranks except seconds/idle_fraction. */
hf_err_t hf_sched_run(MPI_Comm comm, hf_search_t *search, const hf_sched_opts_t *opts,
                      const hf_sched_hooks_t *hooks, hf_sched_outcome_t *out);

#endif
