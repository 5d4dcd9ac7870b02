/* The MPI scheduler (sched.h): one search across the ranks. The engine's one-time
 * preparation and each size's (the split of the preparation across the ranks, the search's
 * hf_search_split_t), then sizes in order, each dealt as ranges of its units' cells by the
 * deal (deal.c); the ranges finished in an earlier run are left out (resume); stop signals,
 * and progress lines on rank 0. */
#include <assert.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "headfuse/agree.h"
#include "headfuse/sched.h"
#include "headfuse/stop.h"

HF_SCHED_STOP_PHASES(HF_STOP_DEFINE)

void hf_sched_install_signals(void)
{
    int rank = 0, up = 0;
    MPI_Initialized(&up);
    if (up)
        MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    hf_stop_install_signals(rank);
}

int hf_sched_stop_requested(void)
{
    return hf_stop_requested();
}

/* State of one run on one rank: the size being decided and its progress. */
typedef struct {
    MPI_Comm comm;
    int rank, size;
    hf_search_t *search;
    const hf_sched_opts_t *opts;
    const hf_sched_hooks_t *hooks;
    hf_sched_split_t split; /* every round's deal (sizes and face tables) */
    long m;
    /* rank 0: progress of the size */
    int64_t *cells_left; /* per unit: cells not finished yet */
    long units_done, nodes_done;
    double level_start, last_progress, run_start;
    long level_units, level_todo;
    /* every rank */
    long found_here, nodes_here;
    hf_sched_item_t cur; /* the range this rank runs */
    long cur_found;
    hf_search_poll_fn deal_poll; /* the round's poll, which answers the other ranks */
    void *deal_poll_ctx;
} level_t;

/* The search calls, or the runner that replaces them (bench/scaling_driver). */
static hf_err_t do_prepare(level_t *L, hf_search_poll_fn poll, void *poll_ctx)
{
    const hf_sched_runner_t *r = L->opts->runner;
    return r ? r->prepare(r->ctx, poll, poll_ctx) : hf_search_prepare(L->search, poll, poll_ctx);
}

static int poll_prepare(void *ctx);

/* Preparing a size can take a while (the layered engine's face tables): it polls for stop
 * requests and prints progress like the one-time preparation. */
static hf_err_t do_level(level_t *L, long m, long *nunits)
{
    const hf_sched_runner_t *r = L->opts->runner;
    return r ? r->level(r->ctx, m, poll_prepare, L, nunits)
             : hf_search_level_polled(L->search, m, poll_prepare, L, nunits);
}

/* The next size that may hold a candidate (the sizes before it hold none). */
static long do_next_size(level_t *L, long m)
{
    const hf_sched_runner_t *r = L->opts->runner;
    if (r)
        return r->next_size ? r->next_size(r->ctx, m) : m;
    return hf_search_next_size(L->search, m);
}

static hf_err_t do_unit_cells(level_t *L, long unit, int64_t *cells)
{
    const hf_sched_runner_t *r = L->opts->runner;
    return r ? r->unit_cells(r->ctx, L->m, unit, cells)
             : hf_search_unit_cells(L->search, L->m, unit, cells);
}

static void do_set_split(level_t *L, const hf_search_split_t *sp)
{
    const hf_sched_runner_t *r = L->opts->runner;
    if (r)
        r->set_split(r->ctx, sp);
    else
        hf_search_set_split(L->search, sp);
}

static void describe(level_t *L, char *buf, size_t n)
{
    if (L->opts->runner)
        snprintf(buf, n, "replayed workload");
    else
        hf_search_describe(L->search, buf, n);
}

/* The finished ranges of unit (m, unit) from an earlier run: [*first, *last) of o->done,
 * sorted by lo. */
static void find_done(const hf_sched_opts_t *o, long m, long unit, long *first, long *last)
{
    long lo = 0, hi = o->ndone;
    while (lo < hi) {
        long mid = (lo + hi) / 2;
        const hf_sched_done_t *d = o->done + mid;
        if (d->m < m || (d->m == m && d->unit < unit))
            lo = mid + 1;
        else
            hi = mid;
    }
    *first = *last = lo;
    while (*last < o->ndone && o->done[*last].m == m && o->done[*last].unit == unit)
        (*last)++;
}

static void progress(level_t *L, int force)
{
    if (L->opts->quiet || L->rank != 0)
        return;
    double now = MPI_Wtime();
    if (!force && now - L->last_progress < L->opts->progress_interval)
        return;
    L->last_progress = now;
    double el = now - L->level_start;
    long left = L->level_todo - L->units_done;
    /* a rate once some range has finished, a time left once some unit has: before that
     * there is nothing to estimate from, and the line says so */
    char rate[48] = "", eta[64] = ", no estimate yet (no unit finished)";
    if (L->nodes_done > 0 && el > 0)
        snprintf(rate, sizeof rate, ", %.0f supports/s", L->nodes_done / el);
    if (L->units_done > 0)
        snprintf(eta, sizeof eta, ", remaining ~%.0fs for this size",
                 left > 0 ? el / L->units_done * left : 0);
    fprintf(stderr, "[%s] m=%ld: units %ld/%ld (%ld resumed)%s, elapsed %.0fs (total %.0fs)%s\n",
            L->opts->label ? L->opts->label : "search", L->m,
            L->units_done + (L->level_units - L->level_todo), L->level_units,
            L->level_units - L->level_todo, rate, el, now - L->run_start, eta);
}

static hf_err_t on_found(void *ctx, const hf_found_t *f)
{
    level_t *L = ctx;
    L->cur_found++;
    if (L->hooks && L->hooks->found)
        return L->hooks->found(L->hooks->ctx, L->cur.unit, L->cur.lo, f);
    return HF_OK;
}

/* While a range of the size runs: the round's poll (requests, steals), progress on rank 0,
 * stop requests. */
static int poll_unit(void *ctx)
{
    level_t *L = ctx;
    L->deal_poll(L->deal_poll_ctx);
    progress(L, 0);
    return hf_stop_check(HF_STOP_UNITS) != HF_OK;
}

/* Run one range of the size (hf_sched_run_fn); HF_ERR_INTERRUPTED if abandoned. */
static hf_err_t run_range(void *ctx, const hf_sched_item_t *it, hf_search_range_t *range,
                          hf_search_poll_fn poll, void *poll_ctx, long *nodes, long *found)
{
    level_t *L = ctx;
    double t0 = MPI_Wtime();
    L->cur = *it;
    L->cur_found = 0;
    L->deal_poll = poll;
    L->deal_poll_ctx = poll_ctx;
    *nodes = 0;
    HF_TRY(hf_stop_check(HF_STOP_UNITS));
    const hf_sched_runner_t *r = L->opts->runner;
    hf_err_t e =
        r ? r->run_cells(r->ctx, L->m, it->unit, it->lo, range, on_found, L, poll_unit, L, nodes)
          : hf_search_run_cells(L->search, L->m, it->unit, it->lo, range, on_found, L, poll_unit, L,
                                nodes);
    if (e != HF_OK)
        return e;
    *found = L->cur_found;
    if (L->hooks && L->hooks->unit_done)
        HF_TRY(L->hooks->unit_done(L->hooks->ctx, L->m, it->unit, it->lo, range->hi, *nodes,
                                   L->cur_found, MPI_Wtime() - t0));
    L->found_here += L->cur_found;
    L->nodes_here += *nodes;
    return HF_OK;
}

/* Rank 0: a range of the size finished somewhere (hf_sched_done_fn). */
static void range_done(void *ctx, const hf_sched_item_t *it, long nodes, long found)
{
    (void)found;
    level_t *L = ctx;
    L->nodes_done += nodes;
    if (L->cells_left && (L->cells_left[it->unit] -= it->hi - it->lo) == 0)
        L->units_done++;
    progress(L, 0);
}

/* Preparation (the engine's the same on every rank; each size's split across the ranks by
 * hf_sched_split_t): answers stop requests; rank 0 reports progress. */
static int poll_prepare(void *ctx)
{
    level_t *L = ctx;
    if (L->rank == 0 && !L->opts->quiet) {
        double now = MPI_Wtime();
        if (now - L->last_progress >= L->opts->progress_interval) {
            char line[256];
            L->last_progress = now;
            describe(L, line, sizeof line);
            fprintf(stderr, "[%s] preparing, %s, elapsed %.0fs\n",
                    L->opts->label ? L->opts->label : "search", line, now - L->run_start);
        }
    }
    return hf_sched_stop_requested();
}

/* The ranges of size m left to run: every unit's cells minus those finished earlier (whose
 * yield is added to *resumed_*); rank 0 also counts what is left of each unit. *items is
 * hf_malloc'd. */
static hf_err_t size_items(level_t *L, long nunits, hf_sched_item_t **items, long *nitems,
                           long *resumed_nodes, long *resumed_found)
{
    const hf_sched_opts_t *o = L->opts;
    hf_err_t err = HF_OK;
    long cap = 0, n = 0;
    hf_sched_item_t *it = NULL;
    *resumed_nodes = *resumed_found = 0;
    L->level_todo = 0;
    for (long u = 0; u < nunits && err == HF_OK; u++) {
        int64_t cells = 1, at = 0, left = 0;
        long first, last;
        HF_CHECK(err, do_unit_cells(L, u, &cells), done);
        find_done(o, L->m, u, &first, &last);
        for (long i = first; i <= last && err == HF_OK; i++) {
            const hf_sched_done_t *d = i < last ? o->done + i : NULL;
            /* a unit's finished ranges are nonempty, disjoint and sorted by lo (the merge keeps
             * a range only when it overlaps none kept before; the campaign sorts them) */
            assert(!d || (d->lo >= at && d->hi > d->lo));
            int64_t end = d && d->lo < cells ? d->lo : cells; /* the gap before d */
            if (d) {
                *resumed_nodes += d->nodes;
                *resumed_found += d->found;
            }
            if (end > at && (err = HF_GROW(&it, &cap, n + 1)) == HF_OK) {
                it[n++] = (hf_sched_item_t){u, at, end};
                left += end - at;
            }
            if (d && d->hi > at)
                at = d->hi;
        }
        if (L->cells_left)
            L->cells_left[u] = left;
        L->level_todo += left > 0;
    }
done:
    if (err != HF_OK) {
        free(it);
        return err;
    }
    *items = it;
    *nitems = n;
    return HF_OK;
}

/* Blocks b .. b + m - 1 (ranks mod n) of an all-gather's buffer as byte segments: one, or
 * two when they wrap past rank n - 1 (blocks lie in rank order). Returns how many. */
static int blocks_segments(const int *counts, const int *displs, int n, int b, int m, int at[2],
                           int len[2])
{
    int e = b + m;
    at[0] = displs[b];
    if (e <= n) {
        len[0] = displs[e - 1] + counts[e - 1] - displs[b];
        return 1;
    }
    len[0] = displs[n - 1] + counts[n - 1] - displs[b];
    at[1] = 0;
    len[1] = displs[e - n - 1] + counts[e - n - 1];
    return 2;
}

/* Bruck's all-gather: in round k a rank has the blocks of ranks r .. r + 2^k - 1 and
 * receives as many more from rank r + 2^k, so ceil(log2 n) rounds. Open MPI's choice for
 * large all-gathers of varying counts (a ring, or neighbour exchange) takes n - 1 or n/2
 * rounds, whose latencies were most of a cone step's exchange on 64 simulated ranks and
 * more on 1,024 (docs/performance.md §16). Each rank still receives every byte once. A
 * wrapped run of blocks goes as two messages, not one indexed datatype: MPI copies a
 * non-contiguous message through a buffer of its own (SMPI's copies of 1,024 ranks' rounds
 * filled this machine's 24 GiB). Both ends split a run at the same rank, so the segments
 * pair up, each on a tag of its own (HF_SCHED_TAG_GATHER and the next). */
void hf_sched_allgatherv(const void *mine, int len, void *all, const int *counts, const int *displs,
                         MPI_Comm comm)
{
    int rank, n;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &n);
    char *base = all;
    if (len > 0 && base + displs[rank] != (const char *)mine)
        memcpy(base + displs[rank], mine, (size_t)len);
    for (int k = 1; k < n; k *= 2) {
        int m = k < n - k ? k : n - k, to = (rank - k + n) % n, from = (rank + k) % n;
        int sat[2], slen[2], rat[2], rlen[2], q = 0;
        int ns = blocks_segments(counts, displs, n, rank, m, sat, slen);
        int nr = blocks_segments(counts, displs, n, from, m, rat, rlen);
        MPI_Request rq[4];
        for (int i = 0; i < nr; i++) /* segment i on tag + i */
            MPI_Irecv(base + rat[i], rlen[i], MPI_BYTE, from, HF_SCHED_TAG_GATHER + i, comm,
                      &rq[q++]);
        for (int i = 0; i < ns; i++)
            MPI_Isend(base + sat[i], slen[i], MPI_BYTE, to, HF_SCHED_TAG_GATHER + i, comm,
                      &rq[q++]);
        MPI_Waitall(q, rq, MPI_STATUSES_IGNORE);
    }
}

/* The split's agreement: errors first (the rule of agree.h), then stops (not errors, as
 * elsewhere in this module), in one call; a stop on another rank becomes this rank's
 * error. */
static hf_err_t split_agree(MPI_Comm comm, hf_err_t status)
{
    int any_stop;
    hf_err_t err = hf_agree_stop(comm, status, &any_stop);
    if (err == HF_OK && any_stop)
        err = status == HF_ERR_INTERRUPTED
                  ? status
                  : hf_error(HF_ERR_INTERRUPTED, "preparing a size: stopped on another rank");
    return err;
}

/* The exchange of a split preparation (hf_search_split_t): the agreement, the lengths, an
 * agreement on the buffer for all the bytes, and the bytes. Every allocation is agreed on
 * before the collective call that needs it (the small arrays' in the first agreement). */
hf_err_t hf_sched_gather_bytes(MPI_Comm comm, hf_err_t status, const void *mine, size_t len,
                               const hf_sched_alloc_t *alloc, void **out, size_t *outlen)
{
    int n, rank;
    MPI_Comm_size(comm, &n);
    MPI_Comm_rank(comm, &rank);
    *out = NULL;
    *outlen = 0;
    long long own = (long long)len, *lens = hf_malloc((size_t)n * sizeof *lens);
    int *counts = hf_malloc((size_t)n * sizeof *counts);
    int *displs = hf_malloc((size_t)n * sizeof *displs);
    if ((!lens || !counts || !displs) && status == HF_OK)
        status = HF_ERR_NOMEM;
    char *all = NULL;
    hf_err_t err = split_agree(comm, status);
    if (err == HF_OK) {
        MPI_Allgather(&own, 1, MPI_LONG_LONG, lens, 1, MPI_LONG_LONG, comm);
        long long total = 0;
        for (int r = 0; r < n; r++) {
            displs[r] = (int)total;
            counts[r] = (int)lens[r];
            total += lens[r];
            if (total > INT_MAX) /* the same on every rank */
                err =
                    hf_error(HF_ERR_LIMIT, "preparing a size: over %d bytes to exchange", INT_MAX);
        }
        if (err == HF_OK) {
            size_t bytes = total > 0 ? (size_t)total : 1;
            all = alloc && alloc->alloc ? alloc->alloc(bytes) : hf_malloc(bytes);
            err = hf_agree_all(comm, all ? HF_OK : HF_ERR_NOMEM);
        }
        if (err == HF_OK) {
            hf_sched_allgatherv(mine ? mine : all + displs[rank], (int)len, all, counts, displs,
                                comm);
            *out = all;
            *outlen = (size_t)total;
        } else if (all) { /* another rank's allocation failed */
            if (alloc && alloc->release)
                alloc->release(all);
            else
                free(all);
        }
    }
    free(displs);
    free(counts);
    free(lens);
    return err;
}

/* The split's exchange: the agreement alone, or hf_sched_gather_bytes. */
static hf_err_t split_allgather(void *ctx, hf_err_t status, const void *buf, size_t len, void **out,
                                size_t *outlen)
{
    MPI_Comm comm = ((hf_sched_split_t *)ctx)->comm;
    if (!out)
        return split_agree(comm, status);
    return hf_sched_gather_bytes(comm, status, buf, len, NULL, out, outlen);
}

/* A round of a split preparation: the sub-units' cells as ranges (hf_search_split_t.deal
 * through hf_sched_deal). */
typedef struct {
    hf_search_deal_fn run;
    void *ctx;
} split_round_t;

static hf_err_t split_run(void *ctx, const hf_sched_item_t *it, hf_search_range_t *range,
                          hf_search_poll_fn poll, void *poll_ctx, long *nodes, long *found)
{
    split_round_t *sr = ctx;
    *nodes = *found = 0;
    return sr->run(sr->ctx, it->unit, it->lo, range, poll, poll_ctx);
}

static hf_err_t split_deal(void *ctx, hf_err_t status, long nunits, const int64_t *cells,
                           hf_search_deal_fn run, void *run_ctx)
{
    hf_sched_split_t *sp = ctx;
    hf_sched_item_t *items = NULL;
    /* every rank builds the round's items: the deal hands out their queue positions */
    if (status == HF_OK && nunits > 0) {
        items = hf_malloc((size_t)nunits * sizeof *items);
        if (!items)
            status = HF_ERR_NOMEM;
        for (long u = 0; items && u < nunits; u++)
            items[u] = (hf_sched_item_t){u, 0, cells[u]};
    }
    split_round_t sr = {run, run_ctx};
    hf_err_t e = hf_sched_deal(sp, status, items, items ? nunits : 0, split_run, &sr, NULL, NULL);
    free(items);
    return e;
}

void hf_sched_split_init(hf_sched_split_t *sp, MPI_Comm comm)
{
    memset(sp, 0, sizeof *sp);
    MPI_Comm_rank(comm, &sp->split.rank);
    MPI_Comm_size(comm, &sp->split.nranks);
    sp->split.allgather = split_allgather;
    sp->split.deal = split_deal;
    sp->split.ctx = sp;
    sp->comm = comm;
}

/* Every rank stops together, or none does: the agreed error, else whether any rank stopped.
 * (A rank that goes its own way here would leave the others waiting forever.) */
static hf_err_t agree_step(MPI_Comm comm, hf_err_t e, int *any_stop)
{
    if (e == HF_OK && hf_sched_stop_requested())
        e = HF_ERR_INTERRUPTED;
    return hf_agree_stop(comm, e, any_stop);
}

/* Decide size m: prepare it, deal its ranges, add up what the ranks found. *decided: the
 * size was finished on every rank; *total_found: supports of the size, all runs. */
static hf_err_t decide_size(level_t *L, long m, hf_sched_outcome_t *out, int *decided,
                            long *total_found)
{
    const hf_sched_opts_t *opts = L->opts;
    long nunits = 0, nitems = 0, resumed_found = 0, resumed_nodes = 0;
    hf_sched_item_t *items = NULL;
    int any_stop = 0;
    *decided = 0;
    L->m = m;
    /* preparing a size can take a while (the layered engine's face tables): it polls
     * for stop requests and prints progress like the one-time preparation */
    hf_err_t err = do_level(L, m, &nunits);
    if (err == HF_OK && L->rank == 0 &&
        !(L->cells_left = hf_malloc((size_t)(nunits ? nunits : 1) * sizeof *L->cells_left)))
        err = HF_ERR_NOMEM;
    if (err == HF_OK)
        err = size_items(L, nunits, &items, &nitems, &resumed_nodes, &resumed_found);
    err = agree_step(L->comm, err, &any_stop);
    if (err != HF_OK || any_stop) {
        if (err == HF_OK)
            out->interrupted = 1;
        goto done;
    }
    L->level_units = nunits;
    L->units_done = L->nodes_done = 0;
    L->found_here = L->nodes_here = 0;
    /* the first progress line of a size comes after one interval, so quick sizes
     * print only their summary */
    L->level_start = L->last_progress = MPI_Wtime();

    hf_err_t lerr = hf_sched_deal(&L->split, HF_OK, items, nitems, run_range, L, range_done, L);

    long local[2] = {L->found_here, L->nodes_here}, total[2];
    /* waiting here for slower ranks to finish the size is idle time too */
    double wait0 = MPI_Wtime();
    MPI_Allreduce(local, total, 2, MPI_LONG, MPI_SUM, L->comm);
    L->split.stats.idle += MPI_Wtime() - wait0;
    /* the error that wins across ranks (headfuse/agree.h), then any stop request */
    err = agree_step(L->comm, lerr, &any_stop);
    if (err != HF_OK)
        goto done;
    if (any_stop) {
        out->interrupted = 1;
        goto done;
    }
    *decided = 1;
    out->last_m = m;
    out->units += nunits;
    out->nodes += total[1] + resumed_nodes;
    *total_found = total[0] + resumed_found;
    if (!opts->quiet && L->rank == 0) {
        double el = MPI_Wtime() - L->level_start;
        fprintf(stderr, "[%s] m=%ld: done, %ld units, %ld nodes, %ld feasible, %.1fs\n",
                opts->label ? opts->label : "search", m, nunits, total[1] + resumed_nodes,
                *total_found, el);
    }
done:
    free(items);
    free(L->cells_left);
    L->cells_left = NULL;
    return err;
}

/* Rank 0: sizes from..to decided without a round (none holds a candidate). */
static void skipped_line(level_t *L, long from, long to)
{
    if (L->opts->quiet || L->rank != 0)
        return;
    const char *label = L->opts->label ? L->opts->label : "search";
    if (from == to)
        fprintf(stderr, "[%s] m=%ld: skipped, no candidates of this size\n", label, from);
    else
        fprintf(stderr, "[%s] m=%ld..%ld: skipped, no candidates of these sizes\n", label, from,
                to);
}

hf_err_t hf_sched_run(MPI_Comm comm, hf_search_t *search, const hf_sched_opts_t *opts,
                      const hf_sched_hooks_t *hooks, hf_sched_outcome_t *out)
{
    level_t L;
    memset(&L, 0, sizeof L);
    L.comm = comm;
    L.search = search;
    L.opts = opts;
    L.hooks = hooks;
    MPI_Comm_rank(comm, &L.rank);
    MPI_Comm_size(comm, &L.size);
    hf_sched_split_init(&L.split, comm);
    L.split.dedicated = opts->dedicated;
    L.split.idle = opts->idle;
    memset(out, 0, sizeof *out);
    out->m_star = -1;
    out->last_m = opts->first_m - 1;
    L.run_start = L.last_progress = MPI_Wtime();
    hf_err_t err = HF_OK;

    /* every preparation, the one-time one too, may be dealt across the ranks */
    if (L.size > 1)
        do_set_split(&L, &L.split.split);
    if (opts->first_m <= opts->last_m) {
        int any_stop = 0;
        err = agree_step(comm, do_prepare(&L, poll_prepare, &L), &any_stop);
        if (err != HF_OK || any_stop) {
            if (L.size > 1)
                do_set_split(&L, NULL);
            out->interrupted = err == HF_OK;
            out->seconds = MPI_Wtime() - L.run_start;
            return err;
        }
        if (L.rank == 0 && !opts->quiet) {
            char line[256];
            describe(&L, line, sizeof line);
            fprintf(stderr, "[%s] %s (%.1fs)\n", opts->label ? opts->label : "search", line,
                    MPI_Wtime() - L.run_start);
        }
    }

    for (long m = opts->first_m; m <= opts->last_m; m++) {
        int decided = 0;
        long found = 0;
        /* the sizes the engine knows hold no candidate are decided without a round
         * (docs/search.md, "Sizes without candidates"): the same on every rank */
        long next = do_next_size(&L, m);
        if (next > m) {
            long to = next <= opts->last_m ? next - 1 : opts->last_m;
            out->last_m = to;
            skipped_line(&L, m, to);
            if (next > opts->last_m)
                break;
            m = next;
        }
        err = decide_size(&L, m, out, &decided, &found);
        if (err != HF_OK || !decided)
            break;
        if (found > 0) {
            out->m_star = m;
            out->nfound = found;
            break;
        }
    }
    if (L.size > 1)
        do_set_split(&L, NULL);
    out->seconds = MPI_Wtime() - L.run_start;
    out->idle_fraction = out->seconds > 0 ? L.split.stats.idle / out->seconds : 0;
    out->coord_seconds = L.split.stats.coord_seconds;
    out->coord_messages = L.split.stats.coord_messages;
    out->steals = L.split.stats.steals;
    out->rounds = L.split.stats.rounds;
    return err;
}
