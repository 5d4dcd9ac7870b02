/* The MPI scheduler: dynamic hand-out of search units, with rank 0 both coordinating
 * and working, resume from finished units, stop signals and progress lines. */
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "headfuse/agree.h"
#include "headfuse/sched.h"

enum { TAG_REQ = 101, TAG_ASSIGN = 102 };
/* Request kinds a worker sends to rank 0. */
enum { REQ_FIRST = 0, REQ_DONE = 1, REQ_ABANDONED = 2 };

static volatile sig_atomic_t stop_flag;
/* Said once on SIGTERM, which may be the last thing this rank does: mpirun sends it
 * to the surviving ranks when one dies, and kills them a moment later, before they can
 * report anything themselves. SIGUSR1 is the orderly stop, reported by the search. */
static char term_note[160];
static size_t term_note_len;

static void on_stop_signal(int sig)
{
    if (sig == SIGTERM && !stop_flag && term_note_len > 0) {
        ssize_t w = write(STDERR_FILENO, term_note, term_note_len);
        (void)w;
    }
    stop_flag = 1;
}

void hf_sched_install_signals(void)
{
    int rank = 0, up = 0;
    MPI_Initialized(&up);
    if (up)
        MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    int n = snprintf(term_note, sizeof term_note,
                     "headfuse: rank %d: SIGTERM: stopping; finished units are saved in the "
                     "shards (rerun with --resume)\n",
                     rank);
    term_note_len = n > 0 && (size_t)n < sizeof term_note ? (size_t)n : 0;
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_stop_signal;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGUSR1, &sa, NULL);
}

int hf_sched_stop_requested(void)
{
    return stop_flag != 0;
}

void hf_sched_request_stop(void)
{
    stop_flag = 1;
}

/* State of one size m on one rank. */
typedef struct {
    MPI_Comm comm;
    int rank, size;
    hf_search_t *search;
    const hf_sched_opts_t *opts;
    const hf_sched_hooks_t *hooks;
    long m;
    /* coordinator (rank 0) */
    long *todo; /* units not finished in an earlier run */
    long ntodo, next;
    int active_workers;
    int stopping; /* no more units are handed out */
    long units_done, nodes_done;
    double level_start, last_progress, run_start;
    long level_units;
    /* every rank */
    long found_here, nodes_here;
    long cur_unit, cur_found;
    double idle;
    double coord_seconds; /* rank 0: answering requests */
    long coord_messages;
    hf_err_t hook_err;
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
    return r ? r->level(r->ctx, m, nunits)
             : hf_search_level_polled(L->search, m, poll_prepare, L, nunits);
}

static void describe(level_t *L, char *buf, size_t n)
{
    if (L->opts->runner)
        snprintf(buf, n, "replayed workload");
    else
        hf_search_describe(L->search, buf, n);
}

static const hf_sched_done_t *find_done(const hf_sched_opts_t *o, long m, long unit)
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
    if (lo < o->ndone && o->done[lo].m == m && o->done[lo].unit == unit)
        return o->done + lo;
    return NULL;
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
    double rate = el > 0 ? L->nodes_done / el : 0;
    long left = L->ntodo - L->units_done;
    double eta = (L->units_done > 0 && left > 0) ? el / L->units_done * left : 0;
    fprintf(stderr,
            "[%s] m=%ld: units %ld/%ld (%ld resumed), %.0f supports/s, elapsed %.0fs "
            "(total %.0fs), remaining ~%.0fs for this size\n",
            L->opts->label ? L->opts->label : "search", L->m,
            L->units_done + (L->level_units - L->ntodo), L->level_units, L->level_units - L->ntodo,
            rate, el, now - L->run_start, eta);
}

static hf_err_t on_found(void *ctx, long m, const int64_t *keys, const hf_head_t *w)
{
    level_t *L = ctx;
    L->cur_found++;
    if (L->hooks && L->hooks->found)
        return L->hooks->found(L->hooks->ctx, m, L->cur_unit, keys, w);
    return HF_OK;
}

/* Coordinator: answer every pending request without blocking. */
static void serve_requests(level_t *L, int block)
{
    for (;;) {
        int flag = 0;
        MPI_Status st;
        if (L->active_workers == 0)
            return;
        if (block)
            flag = 1;
        else
            MPI_Iprobe(MPI_ANY_SOURCE, TAG_REQ, L->comm, &flag, &st);
        if (!flag)
            return;
        int64_t req[4];
        double t0 = MPI_Wtime();
        MPI_Recv(req, 4, MPI_INT64_T, MPI_ANY_SOURCE, TAG_REQ, L->comm, &st);
        double t1 = MPI_Wtime();
        if (block)
            L->idle += t1 - t0;
        if (req[0] == REQ_DONE) {
            L->units_done++;
            L->nodes_done += req[2];
        } else if (req[0] == REQ_ABANDONED) {
            L->stopping = 1;
        }
        int64_t unit = -1;
        if (!L->stopping && !hf_sched_stop_requested() && L->next < L->ntodo)
            unit = L->todo[L->next++];
        if (unit < 0)
            L->active_workers--;
        MPI_Send(&unit, 1, MPI_INT64_T, st.MPI_SOURCE, TAG_ASSIGN, L->comm);
        L->coord_messages++;
        L->coord_seconds += MPI_Wtime() - (block ? t1 : t0);
        progress(L, 0);
        if (block)
            return;
    }
}

static int poll_coordinator(void *ctx)
{
    level_t *L = ctx;
    serve_requests(L, 0);
    return hf_sched_stop_requested();
}

static int poll_worker(void *ctx)
{
    (void)ctx;
    return hf_sched_stop_requested();
}

/* Run one unit on this rank; returns HF_ERR_INTERRUPTED if abandoned. */
static hf_err_t run_unit(level_t *L, long unit, long *nodes)
{
    double t0 = MPI_Wtime();
    L->cur_unit = unit;
    L->cur_found = 0;
    *nodes = 0;
    hf_search_poll_fn poll = L->rank == 0 ? poll_coordinator : poll_worker;
    const hf_sched_runner_t *r = L->opts->runner;
    hf_err_t e = r ? r->run_unit(r->ctx, L->m, unit, on_found, L, poll, L, nodes)
                   : hf_search_run_unit(L->search, L->m, unit, on_found, L, poll, L, nodes);
    if (e != HF_OK)
        return e;
    if (L->hooks && L->hooks->unit_done)
        HF_TRY(
            L->hooks->unit_done(L->hooks->ctx, L->m, unit, *nodes, L->cur_found, MPI_Wtime() - t0));
    L->found_here += L->cur_found;
    L->nodes_here += *nodes;
    return HF_OK;
}

static hf_err_t level_coordinator(level_t *L)
{
    hf_err_t err = HF_OK;
    while (!L->stopping && !hf_sched_stop_requested() && L->next < L->ntodo) {
        long nodes;
        long unit = L->todo[L->next++];
        err = run_unit(L, unit, &nodes);
        if (err == HF_ERR_INTERRUPTED) {
            err = HF_OK;
            L->stopping = 1;
            break;
        }
        if (err != HF_OK) {
            L->stopping = 1; /* hand out nothing more; workers drain, then we fail */
            break;
        }
        L->units_done++;
        L->nodes_done += nodes;
        serve_requests(L, 0);
        progress(L, 0);
    }
    while (L->active_workers > 0)
        serve_requests(L, 1);
    return err;
}

static hf_err_t level_worker(level_t *L)
{
    int64_t req[4] = {REQ_FIRST, 0, 0, 0};
    hf_err_t err = HF_OK;
    for (;;) {
        int64_t unit;
        MPI_Send(req, 4, MPI_INT64_T, 0, TAG_REQ, L->comm);
        double t0 = MPI_Wtime();
        MPI_Recv(&unit, 1, MPI_INT64_T, 0, TAG_ASSIGN, L->comm, MPI_STATUS_IGNORE);
        L->idle += MPI_Wtime() - t0;
        if (unit < 0)
            break;
        long nodes = 0;
        hf_err_t e = err == HF_OK ? run_unit(L, unit, &nodes) : HF_ERR_INTERRUPTED;
        if (e != HF_OK && e != HF_ERR_INTERRUPTED)
            err = e; /* keep answering until told to stop, then fail */
        req[0] = e == HF_OK ? REQ_DONE : REQ_ABANDONED;
        req[1] = unit;
        req[2] = nodes;
        req[3] = L->cur_found;
    }
    return err;
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

/* The exchange of a split preparation (hf_search_split_t): errors first (the rule of
 * agree.h), then stops (not errors, as elsewhere in this module), then the bytes. Every
 * allocation is agreed on before the collective call that needs it. */
static hf_err_t split_allgather(void *ctx, hf_err_t status, const void *buf, size_t len, void **out,
                                size_t *outlen)
{
    MPI_Comm comm = ((hf_sched_split_t *)ctx)->comm;
    int stop = status == HF_ERR_INTERRUPTED, any_stop, n;
    if (out) {
        *out = NULL;
        *outlen = 0;
    }
    hf_err_t err = hf_agree_all(comm, stop ? HF_OK : status);
    MPI_Allreduce(&stop, &any_stop, 1, MPI_INT, MPI_MAX, comm);
    if (err != HF_OK)
        return err;
    if (any_stop)
        return stop ? status
                    : hf_error(HF_ERR_INTERRUPTED, "preparing a size: stopped on another rank");
    if (!out)
        return HF_OK;
    MPI_Comm_size(comm, &n);
    long long mine = (long long)len, *lens = hf_malloc((size_t)n * sizeof *lens);
    int *counts = hf_malloc((size_t)n * sizeof *counts),
        *displs = hf_malloc((size_t)n * sizeof *displs);
    char *all = NULL;
    err = hf_agree_all(comm, lens && counts && displs ? HF_OK : HF_ERR_NOMEM);
    if (err == HF_OK) {
        MPI_Allgather(&mine, 1, MPI_LONG_LONG, lens, 1, MPI_LONG_LONG, comm);
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
            all = hf_malloc(total > 0 ? (size_t)total : 1);
            err = hf_agree_all(comm, all ? HF_OK : HF_ERR_NOMEM);
        }
        if (err == HF_OK) {
            MPI_Allgatherv(buf, (int)len, MPI_BYTE, all, counts, displs, MPI_BYTE, comm);
            *out = all;
            *outlen = (size_t)total;
            all = NULL;
        }
    }
    free(all);
    free(displs);
    free(counts);
    free(lens);
    return err;
}

void hf_sched_split_init(hf_sched_split_t *sp, MPI_Comm comm)
{
    MPI_Comm_rank(comm, &sp->split.rank);
    MPI_Comm_size(comm, &sp->split.nranks);
    sp->split.allgather = split_allgather;
    sp->split.sub_unit = NULL;
    sp->split.ctx = sp;
    sp->comm = comm;
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
    memset(out, 0, sizeof *out);
    out->m_star = -1;
    out->last_m = opts->first_m - 1;
    L.run_start = L.last_progress = MPI_Wtime();
    hf_err_t err = HF_OK;

    if (opts->first_m <= opts->last_m) {
        hf_err_t perr = do_prepare(&L, poll_prepare, &L);
        int stop = perr == HF_ERR_INTERRUPTED || hf_sched_stop_requested(), any_stop;
        err = hf_agree_all(comm, perr == HF_ERR_INTERRUPTED ? HF_OK : perr);
        MPI_Allreduce(&stop, &any_stop, 1, MPI_INT, MPI_MAX, comm);
        if (err != HF_OK) {
            out->seconds = MPI_Wtime() - L.run_start;
            return err;
        }
        if (any_stop) {
            out->interrupted = 1;
            out->seconds = MPI_Wtime() - L.run_start;
            return HF_OK;
        }
        if (L.rank == 0 && !opts->quiet) {
            char line[256];
            describe(&L, line, sizeof line);
            fprintf(stderr, "[%s] %s (%.1fs)\n", opts->label ? opts->label : "search", line,
                    MPI_Wtime() - L.run_start);
        }
    }

    /* each size's preparation split across the ranks (the search's own tables) */
    hf_sched_split_t split;
    int use_split = !opts->runner && L.size > 1;
    if (use_split) {
        hf_sched_split_init(&split, comm);
        hf_search_set_split(search, &split.split);
    }
    for (long m = opts->first_m; m <= opts->last_m; m++) {
        long nunits = 0;
        /* preparing a size can take a while (the layered engine's face tables): it polls
         * for stop requests and prints progress like the one-time preparation */
        err = do_level(&L, m, &nunits);
        if (err == HF_OK && !(L.todo = hf_malloc((size_t)(nunits ? nunits : 1) * sizeof *L.todo)))
            err = HF_ERR_NOMEM;
        /* every rank prepared the same level, or all stop together (a rank that goes
         * its own way here would leave the others waiting forever) */
        int stop = err == HF_ERR_INTERRUPTED || hf_sched_stop_requested(), any_stop;
        err = hf_agree_all(comm, err == HF_ERR_INTERRUPTED ? HF_OK : err);
        MPI_Allreduce(&stop, &any_stop, 1, MPI_INT, MPI_MAX, comm);
        if (err != HF_OK || any_stop) {
            if (err == HF_OK)
                out->interrupted = 1;
            free(L.todo);
            L.todo = NULL;
            break;
        }
        /* units finished earlier are skipped; their yield still counts */
        long resumed_found = 0, resumed_nodes = 0, ntodo = 0;
        for (long u = 0; u < nunits; u++) {
            const hf_sched_done_t *d = find_done(opts, m, u);
            if (d) {
                resumed_found += d->found;
                resumed_nodes += d->nodes;
            } else {
                L.todo[ntodo++] = u;
            }
        }
        L.m = m;
        L.ntodo = ntodo;
        L.next = 0;
        L.level_units = nunits;
        L.active_workers = L.size - 1;
        L.stopping = 0;
        L.units_done = L.nodes_done = 0;
        L.found_here = L.nodes_here = 0;
        /* the first progress line of a size comes after one interval, so quick sizes
         * print only their summary */
        L.level_start = L.last_progress = MPI_Wtime();

        hf_err_t lerr = L.rank == 0 ? level_coordinator(&L) : level_worker(&L);
        free(L.todo);
        L.todo = NULL;

        long local[2] = {L.found_here, L.nodes_here}, total[2];
        /* waiting here for slower ranks to finish the size is idle time too */
        double wait0 = MPI_Wtime();
        MPI_Allreduce(local, total, 2, MPI_LONG, MPI_SUM, comm);
        L.idle += MPI_Wtime() - wait0;
        /* the error that wins across ranks (headfuse/agree.h), then any stop request */
        stop = hf_sched_stop_requested() || L.stopping;
        err = hf_agree_all(comm, lerr);
        MPI_Allreduce(&stop, &any_stop, 1, MPI_INT, MPI_MAX, comm);
        if (err != HF_OK)
            break;
        if (any_stop) {
            out->interrupted = 1;
            break;
        }
        out->last_m = m;
        out->units += nunits;
        out->nodes += total[1] + resumed_nodes;
        if (!opts->quiet && L.rank == 0) {
            double el = MPI_Wtime() - L.level_start;
            fprintf(stderr, "[%s] m=%ld: done, %ld units, %ld candidates, %ld feasible, %.1fs\n",
                    opts->label ? opts->label : "search", m, nunits, total[1] + resumed_nodes,
                    total[0] + resumed_found, el);
        }
        if (total[0] + resumed_found > 0) {
            out->m_star = m;
            out->nfound = total[0] + resumed_found;
            break;
        }
    }
    if (use_split)
        hf_search_set_split(search, NULL);
    out->seconds = MPI_Wtime() - L.run_start;
    out->idle_fraction = out->seconds > 0 ? L.idle / out->seconds : 0;
    out->coord_seconds = L.coord_seconds;
    out->coord_messages = L.coord_messages;
    return err;
}
