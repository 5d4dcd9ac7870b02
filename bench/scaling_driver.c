/* The real scheduler (hf_sched_run) on simulated ranks (SimGrid SMPI, built by
 * bench/scaling in build-smpi): every MPI message and every scheduling decision is the
 * real one, and the search's computation is replaced by its recorded cost (a workload
 * from bench/scaling_record), spent with smpi_execute_flops.
 *
 * The runner mirrors the search: a size's preparation runs the serial rest of its
 * recorded cost, then for each recorded round of its split preparation the real calls of
 * the layered engine's fs_grow_size (an agreement, hf_search_split_t.deal of the recorded
 * sub-units, the exchange of the recorded bytes, an agreement); each range of cells of a
 * sub-unit or unit costs what its recorded profile says those cells cost (linear between
 * profile points). A range runs in slices of HF_REPLAY_SLICE seconds with a poll between
 * (the real search polls every 256 candidates or 64 middles; a cone step's range in its
 * recorded poll period when that is shorter), so rank 0 answers requests
 * and a rank answers steal requests about when the real ones would. Older recordings (no
 * cells, no profiles) have one cell a unit and sub-unit.
 *
 *   smpirun -np N -platform bench/cluster.xml build-smpi/scaling_driver WORKLOAD [FLOPS]
 * FLOPS: the simulated host's speed in flop/s (the platform's speed); a recorded second is
 * FLOPS flops, so a simulated host is as fast as one core of the recording machine.
 * HF_REPLAY_SLICE (seconds, default 2e-4): the poll period of the replay;
 * HF_REPLAY_DEDICATED=1: rank 0 only coordinates.
 * HF_REPLAY_ROUNDS=1: rank 0 prints to stderr one line for each step of a cone recording:
 * its recorded work and a rank's share of it, the simulated seconds of its signs, its
 * agreement and the rest of it, and for a dealt step the deal and the exchange apart
 * (bench/scaling keeps it in build-smpi/smpi-N.log): where a replay loses its time
 * (docs/performance.md §16).
 * Rank 0 prints one line: ranks=N seconds=T m_star=M recorded_m_star=M units=U nodes=X
 * coord_busy=F worker_idle=F coord_msgs=K steals=S rounds=R
 *
 * All simulated ranks live in one process: rank 0 reads the workload once and the others
 * use it through its address (read only). */
#include <limits.h>
#include <mpi.h>
#include <smpi/smpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "headfuse/control.h"
#include "headfuse/agree.h"
#include "headfuse/core.h"
#include "headfuse/sched.h"
#include "search/cone_impl.h" /* hf_cone_split_threshold */

/* A unit's or sub-unit's recorded cost. */
typedef struct {
    double seconds;
    int64_t nodes, polls, cells;
    long found;
    long prof, nprof; /* its profile points: w->pcell/ptime[prof .. prof + nprof) */
} cost_t;

/* One round of a size's split preparation: nsub sub-units, then bytes gathered. */
typedef struct {
    long nsub, first; /* its sub-units: size's sub[first .. first + nsub) */
    long bytes;
    double seconds; /* the whole round on one process (< 0: not recorded) */
    double pairs;   /* a cone step's pair tests (< 0: not recorded, the step was dealt) */
    double signs;   /* the CPU seconds of its signs (< 0: not recorded) */
    long rays;      /* the rays it starts from */
} round_t;

typedef struct {
    long m, nunits;
    double level_seconds; /* all of the size's preparation */
    cost_t *units;
    long nrounds, nsub;
    round_t *rounds;
    cost_t *sub;
} size_cost_t;

typedef struct {
    double prepare;
    long agrees;      /* the preparation's agreements without an exchange */
    size_cost_t prep; /* the preparation's rounds (the cone's dealt steps): no units */
    size_cost_t *sizes;
    long nsizes;
    long m_star; /* recorded */
    int64_t *pcell;
    double *ptime;
    long np, npcap, ntcap;
    int cells; /* the recording has cells and profiles */
} workload_t;

/* One simulated rank's replay. */
typedef struct {
    const workload_t *w;
    double flops, slice;
    int rank, nranks;
    int log_rounds;                 /* HF_REPLAY_ROUNDS */
    int polls_recorded;             /* a range polls as often as recorded, if more often */
    const hf_search_split_t *split; /* set by the scheduler with several ranks */
} replay_t;

/* ---------------------------------------------------------------- reading */

static int load(const char *path, workload_t *w)
{
    FILE *f = fopen(path, "r");
    if (!f)
        return -1;
    char line[512];
    long scap = 0, rcap = 0, subcap = 0;
    size_cost_t *cur = &w->prep; /* rounds before the first size are the preparation's */
    cost_t *last = NULL;         /* where p lines go */
    w->m_star = -1;
    while (fgets(line, sizeof line, f)) {
        long m, n, u, found, rays;
        long long nodes, polls, cells, cell;
        double s, pairs, signs;
        int k;
        if (line[0] == '#')
            continue;
        if (sscanf(line, "p %lld %lf", &cell, &s) == 2) {
            if (!last || HF_GROW(&w->pcell, &w->npcap, w->np + 1) != HF_OK ||
                HF_GROW(&w->ptime, &w->ntcap, w->np + 1) != HF_OK)
                goto bad;
            if (last->nprof == 0)
                last->prof = w->np;
            w->pcell[w->np] = cell;
            w->ptime[w->np++] = s;
            last->nprof++;
        } else if ((k = sscanf(line, "s %lf %lld %lld", &s, &cells, &polls)) >= 1) {
            if (!cur || cur->nrounds == 0 || HF_GROW(&cur->sub, &subcap, cur->nsub + 1) != HF_OK)
                goto bad;
            last = cur->sub + cur->nsub++;
            *last =
                (cost_t){.seconds = s, .cells = k >= 2 ? cells : 1, .polls = k >= 3 ? polls : 0};
            cur->rounds[cur->nrounds - 1].nsub++;
            w->cells |= k >= 2;
        } else if ((k = sscanf(line, "x %ld %ld %lf %lf %lf %ld", &n, &u, &s, &pairs, &signs,
                               &rays)) >= 2) {
            if (!cur || HF_GROW(&cur->rounds, &rcap, cur->nrounds + 1) != HF_OK)
                goto bad;
            cur->rounds[cur->nrounds++] = (round_t){0,
                                                    cur->nsub,
                                                    u,
                                                    k >= 3 ? s : -1,
                                                    k >= 4 ? pairs : -1,
                                                    k >= 6 ? signs : -1,
                                                    k >= 6 ? rays : 0};
        } else if ((k = sscanf(line, "u %ld %lf %lld %ld %lld %lld", &u, &s, &nodes, &found, &polls,
                               &cells)) >= 4) {
            if (!cur || cur == &w->prep || u < 0 || u >= cur->nunits)
                goto bad;
            last = cur->units + u;
            *last = (cost_t){.seconds = s,
                             .nodes = nodes,
                             .found = found,
                             .polls = k >= 5 ? polls : nodes / 256,
                             .cells = k >= 6 ? cells : 1};
        } else if (sscanf(line, "size %ld %ld %lf", &m, &n, &s) == 3) {
            if (HF_GROW(&w->sizes, &scap, w->nsizes + 1) != HF_OK)
                goto bad;
            cur = w->sizes + w->nsizes++;
            *cur = (size_cost_t){.m = m, .nunits = n, .level_seconds = s};
            cur->units = calloc((size_t)(n ? n : 1), sizeof *cur->units);
            rcap = subcap = 0;
            last = NULL;
            if (!cur->units)
                goto bad;
            for (long i = 0; i < n; i++)
                cur->units[i].cells = 1;
        } else if (sscanf(line, "prepare %lf", &s) == 1) {
            w->prepare = s;
        } else if (sscanf(line, "agree %ld", &n) == 1) {
            w->agrees = n;
        } else if (sscanf(line, "end %ld %ld %lf", &m, &n, &s) == 3) {
            w->m_star = m;
        }
    }
    fclose(f);
    return w->nsizes > 0 ? 0 : -1;
bad:
    fclose(f);
    return -1;
}

/* ---------------------------------------------------------------- replaying costs */

static void compute(const replay_t *r, double seconds)
{
    if (seconds > 0)
        smpi_execute_flops(seconds * r->flops);
}

/* Seconds spent before cell `cell` of c: linear between its profile points. */
static double cost_at(const workload_t *w, const cost_t *c, int64_t cell)
{
    int64_t c0 = 0, c1 = c->cells;
    double t0 = 0, t1 = c->seconds;
    long lo = 0, hi = c->nprof; /* first profile point past cell */
    while (lo < hi) {
        long mid = (lo + hi) / 2;
        if (w->pcell[c->prof + mid] <= cell)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (lo > 0) {
        c0 = w->pcell[c->prof + lo - 1];
        t0 = w->ptime[c->prof + lo - 1];
    }
    if (lo < c->nprof) {
        c1 = w->pcell[c->prof + lo];
        t1 = w->ptime[c->prof + lo];
    }
    if (t1 < t0)
        t1 = t0;
    return c1 > c0 ? t0 + (t1 - t0) * (double)(cell - c0) / (double)(c1 - c0) : t0;
}

/* The cell being run after t seconds of c: the last cell that starts at or before t. */
static int64_t cell_at(const workload_t *w, const cost_t *c, double t)
{
    int64_t lo = 0, hi = c->cells - 1;
    while (lo < hi) {
        int64_t mid = lo + (hi - lo + 1) / 2;
        if (cost_at(w, c, mid) <= t)
            lo = mid;
        else
            hi = mid - 1;
    }
    return lo;
}

/* Cells [lo, range->hi) of c, in slices with a poll between (the poll may lower hi). */
static hf_err_t replay_range(const replay_t *r, const cost_t *c, int64_t lo,
                             hf_search_range_t *range, hf_search_poll_fn poll, void *poll_ctx)
{
    double t = cost_at(r->w, c, lo), slice = r->slice;
    /* a cone step polls as often as it was recorded to (every DD_POLL_WORK pair tests),
     * when that is more often than the slice */
    if (r->polls_recorded && c->polls > 0 && c->seconds / (double)c->polls < slice)
        slice = c->seconds / (double)c->polls;
    range->pos = lo;
    for (;;) {
        double end = cost_at(r->w, c, range->hi);
        if (t >= end)
            return HF_OK;
        double next = t + slice < end ? t + slice : end;
        compute(r, next - t);
        t = next;
        int64_t cell = cell_at(r->w, c, t);
        if (cell >= range->hi)
            cell = range->hi - 1;
        if (cell > range->pos)
            range->pos = cell;
        if (poll && poll(poll_ctx))
            return HF_ERR_INTERRUPTED;
    }
}

/* ---------------------------------------------------------------- the runner */

static const size_cost_t *size_of(const workload_t *w, long m)
{
    for (long i = 0; i < w->nsizes; i++)
        if (w->sizes[i].m == m)
            return w->sizes + i;
    return NULL;
}

/* What of a preparation's time is not in its rounds: every rank runs it (the size's or the
 * preparation's time less its rounds', as recorded whole, else as the sum of their
 * sub-units). */
static double serial_rest(const size_cost_t *sz, double total)
{
    double subs = 0;
    for (long i = 0; i < sz->nrounds; i++) {
        const round_t *rd = sz->rounds + i;
        if (rd->seconds >= 0) {
            subs += rd->seconds;
            continue;
        }
        for (long j = 0; j < rd->nsub; j++)
            subs += sz->sub[rd->first + j].seconds;
    }
    return total > subs ? total - subs : 0;
}

typedef struct {
    const replay_t *r;
    const cost_t *sub; /* the round's sub-units */
} sub_round_t;

static hf_err_t replay_sub(void *ctx, long unit, int64_t lo, hf_search_range_t *range,
                           hf_search_poll_fn poll, void *poll_ctx)
{
    sub_round_t *g = ctx;
    return replay_range(g->r, g->sub + unit, lo, range, poll, poll_ctx);
}

/* The exchange of a round's recorded bytes, each rank giving share of them: the split's
 * own exchange (hf_sched_gather_bytes, sched.c), its buffer in SMPI's shared memory. All
 * simulated ranks live in one process, where 1,024 private copies of a cone step's new
 * rays (up to hundreds of MB each) do not fit; the bytes' values are never read, only
 * their count costs time on the simulated network. */
static void *shared_alloc(size_t bytes)
{
    return SMPI_SHARED_MALLOC(bytes);
}

static void shared_release(void *p)
{
    SMPI_SHARED_FREE(p);
}

static hf_err_t replay_exchange(hf_err_t e, size_t share)
{
    static const hf_sched_alloc_t shared = {shared_alloc, shared_release};
    void *all = NULL;
    size_t len = 0;
    /* its own share in place: its block of the shared buffer */
    hf_err_t err = hf_sched_gather_bytes(MPI_COMM_WORLD, e, NULL, share, &shared, &all, &len);
    if (all)
        shared_release(all);
    return err;
}

/* The deal of a round's recorded sub-units, then the exchange of its recorded bytes (each
 * rank gives its share); the simulated seconds of each into took[0], took[1] (if took). */
static hf_err_t replay_deal_exchange(const replay_t *r, const size_cost_t *sz, const round_t *rd,
                                     double *took)
{
    const hf_search_split_t *sp = r->split;
    int64_t *cells = malloc((size_t)(rd->nsub ? rd->nsub : 1) * sizeof *cells);
    if (!cells)
        return HF_ERR_NOMEM;
    for (long i = 0; i < rd->nsub; i++)
        cells[i] = sz->sub[rd->first + i].cells;
    sub_round_t g = {r, sz->sub + rd->first};
    double t0 = MPI_Wtime();
    hf_err_t e = sp->deal(sp->ctx, HF_OK, rd->nsub, cells, replay_sub, &g);
    free(cells);
    size_t share = ((size_t)rd->bytes + (size_t)r->nranks - 1) / (size_t)r->nranks;
    double t1 = MPI_Wtime();
    e = replay_exchange(e, share);
    if (took) {
        took[0] = t1 - t0;
        took[1] = MPI_Wtime() - t1;
    }
    return e;
}

/* The one-time preparation. With a split, the calls of the cone engine's double
 * description (cone_steps.c, cone_exchange.c): an agreement before every step and after the last,
 * and for each dealt step the deal of its positive rays' cells and the exchange of the new rays;
 * what is not in a dealt step runs on every rank. */
static hf_err_t r_prepare(void *ctx, hf_search_poll_fn poll, void *poll_ctx)
{
    replay_t *r = ctx;
    const workload_t *w = r->w;
    if (!r->split || w->prep.nrounds == 0) {
        compute(r, w->prepare);
    } else if (w->prep.rounds[0].pairs >= 0) {
        /* every step recorded with its pairs (HF_CONE_SPLIT_PAIRS_MIN=0): the agreement
         * before it, then the step dealt when it has as many pairs as cone_exchange.c deals at
         * this rank count, else run whole on every rank */
        const hf_search_split_t *sp = r->split;
        double thr = hf_cone_split_threshold(r->nranks), signs = 0;
        r->polls_recorded = 1;
        for (long i = 0; i < w->prep.nrounds; i++)
            signs += w->prep.rounds[i].signs > 0 ? w->prep.rounds[i].signs : 0;
        compute(r, serial_rest(&w->prep, w->prepare) - signs);
        for (long i = 0; i < w->prep.nrounds; i++) {
            const round_t *rd = w->prep.rounds + i;
            double t_s = MPI_Wtime();
            /* its signs: a share on each rank and their gather (one byte a ray) when
             * cone_steps.c splits them at this rank count, else all on every rank */
            if (rd->signs >= 0 && hf_cone_split_signs(rd->rays, r->nranks)) {
                compute(r, rd->signs / r->nranks);
                HF_TRY(replay_exchange(HF_OK, (size_t)((rd->rays + r->nranks - 1) / r->nranks)));
            } else if (rd->signs >= 0) {
                compute(r, rd->signs);
            }
            double t_a = MPI_Wtime();
            HF_TRY(sp->allgather(sp->ctx, HF_OK, NULL, 0, NULL, NULL));
            double t_b = MPI_Wtime(), took[2] = {0, 0};
            if (rd->pairs < thr)
                compute(r, rd->seconds);
            else
                HF_TRY(replay_deal_exchange(r, &w->prep, rd, took));
            if (r->rank == 0 && r->log_rounds)
                fprintf(stderr,
                        "step %ld rays %ld work %.6f share %.6f signs %.6f agree %.6f rest %.6f "
                        "deal %.6f exchange %.6f bytes %ld\n",
                        i, rd->rays, rd->seconds, rd->seconds / r->nranks, t_a - t_s, t_b - t_a,
                        MPI_Wtime() - t_b, took[0], took[1], rd->pairs < thr ? 0 : rd->bytes);
        }
        for (long i = w->prep.nrounds; i < w->agrees; i++)
            HF_TRY(sp->allgather(sp->ctx, HF_OK, NULL, 0, NULL, NULL));
    } else {
        const hf_search_split_t *sp = r->split;
        compute(r, serial_rest(&w->prep, w->prepare));
        for (long i = 0; i < w->agrees; i++)
            HF_TRY(sp->allgather(sp->ctx, HF_OK, NULL, 0, NULL, NULL));
        for (long i = 0; i < w->prep.nrounds; i++)
            HF_TRY(replay_deal_exchange(r, &w->prep, w->prep.rounds + i, NULL));
    }
    return poll && poll(poll_ctx) ? HF_ERR_INTERRUPTED : HF_OK;
}

static void r_set_split(void *ctx, const hf_search_split_t *split)
{
    ((replay_t *)ctx)->split = split;
}

/* One round of a size's split preparation, with the calls of the layered engine's
 * fs_grow_size: the agreement before the sub-search's size, the deal of its sub-units, the
 * exchange of the recorded bytes, the agreement after. */
static hf_err_t replay_round(const replay_t *r, const size_cost_t *sz, const round_t *rd)
{
    const hf_search_split_t *sp = r->split;
    HF_TRY(sp->allgather(sp->ctx, HF_OK, NULL, 0, NULL, NULL));
    hf_err_t e = replay_deal_exchange(r, sz, rd, NULL);
    return sp->allgather(sp->ctx, e, NULL, 0, NULL, NULL);
}

static hf_err_t r_level(void *ctx, long m, hf_search_poll_fn poll, void *poll_ctx, long *nunits)
{
    replay_t *r = ctx;
    const size_cost_t *sz = size_of(r->w, m);
    if (!sz)
        return hf_error(HF_ERR_INPUT, "size %ld is not in the workload", m);
    if (!r->split || sz->nrounds == 0) {
        /* one rank prepares everything (as do all ranks for a recording without rounds) */
        compute(r, sz->level_seconds);
    } else {
        compute(r, serial_rest(sz, sz->level_seconds));
        for (long i = 0; i < sz->nrounds; i++)
            HF_TRY(replay_round(r, sz, sz->rounds + i));
    }
    *nunits = sz->nunits;
    return poll && poll(poll_ctx) ? HF_ERR_INTERRUPTED : HF_OK;
}

/* The recorded sizes: the recorder ran only the sizes the search did not skip. */
static long r_next_size(void *ctx, long m)
{
    const workload_t *w = ((replay_t *)ctx)->w;
    for (long i = 0; i < w->nsizes; i++)
        if (w->sizes[i].m >= m)
            return w->sizes[i].m;
    return m;
}

static hf_err_t r_unit_cells(void *ctx, long m, long unit, int64_t *cells)
{
    replay_t *r = ctx;
    *cells = size_of(r->w, m)->units[unit].cells;
    return HF_OK;
}

static hf_err_t r_run_cells(void *ctx, long m, long unit, int64_t lo, hf_search_range_t *range,
                            hf_search_found_fn found, void *found_ctx, hf_search_poll_fn poll,
                            void *poll_ctx, long *nodes)
{
    replay_t *r = ctx;
    const cost_t *c = size_of(r->w, m)->units + unit;
    HF_TRY(replay_range(r, c, lo, range, poll, poll_ctx));
    /* the unit's supports are counted with its first cell, its nodes spread evenly */
    for (long i = 0; lo == 0 && i < c->found; i++) {
        hf_found_t fd = {.m = m};
        HF_TRY(found(found_ctx, &fd));
    }
    *nodes = (long)((double)c->nodes * (double)range->hi / (double)c->cells) -
             (long)((double)c->nodes * (double)lo / (double)c->cells);
    return HF_OK;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    replay_t r;
    memset(&r, 0, sizeof r);
    MPI_Comm_rank(MPI_COMM_WORLD, &r.rank);
    MPI_Comm_size(MPI_COMM_WORLD, &r.nranks);
    r.flops = argc > 2 ? atof(argv[2]) : 1e9;
    /* the cone engine's knobs (control.h; HF_CONE_SPLIT_PAIRS_MIN): the replay deals the
     * steps it would deal */
    if (hf_control_from_env() != HF_OK) {
        fprintf(stderr, "%s\n", hf_error_msg());
        return 2;
    }
    r.slice = getenv("HF_REPLAY_SLICE") ? atof(getenv("HF_REPLAY_SLICE")) : 2e-4;
    r.log_rounds = getenv("HF_REPLAY_ROUNDS") && strcmp(getenv("HF_REPLAY_ROUNDS"), "0");
    if (r.nranks == 1)
        r.slice = 1e30;        /* nobody to answer: each range in one go */
    static workload_t *shared; /* privatised per rank by SMPI: each holds rank 0's address */
    uint64_t addr = 0;
    int ok = 1;
    if (r.rank == 0) {
        shared = calloc(1, sizeof *shared);
        ok = shared && argc > 1 && load(argv[1], shared) == 0;
        addr = ok ? (uint64_t)(uintptr_t)shared : 0;
    }
    MPI_Bcast(&addr, 1, MPI_UINT64_T, 0, MPI_COMM_WORLD);
    if (!addr) {
        if (r.rank == 0)
            fprintf(stderr, "scaling_driver: cannot read the workload %s\n",
                    argc > 1 ? argv[1] : "(none)");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    r.w = (const workload_t *)(uintptr_t)addr;
    hf_sched_runner_t runner = {.prepare = r_prepare,
                                .set_split = r_set_split,
                                .level = r_level,
                                .unit_cells = r_unit_cells,
                                .run_cells = r_run_cells,
                                .next_size = r_next_size,
                                .ctx = &r};
    hf_sched_opts_t opts = {.first_m = r.w->sizes[0].m,
                            .last_m = r.w->sizes[r.w->nsizes - 1].m,
                            .quiet = !getenv("HF_REPLAY_VERBOSE"),
                            .progress_interval = 1e9,
                            .label = "replay",
                            .runner = &runner,
                            .dedicated = getenv("HF_REPLAY_DEDICATED") &&
                                         !strcmp(getenv("HF_REPLAY_DEDICATED"), "1")};
    hf_sched_outcome_t out;
    MPI_Barrier(MPI_COMM_WORLD);
    hf_err_t err = hf_sched_run(MPI_COMM_WORLD, NULL, &opts, NULL, &out);
    double idle = out.idle_fraction, idle_sum = 0;
    MPI_Reduce(&idle, &idle_sum, 1, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD);
    if (r.rank == 0) {
        double worker_idle = r.nranks > 1 ? (idle_sum - idle) / (r.nranks - 1) : idle;
        printf("ranks=%d seconds=%.3f m_star=%ld recorded_m_star=%ld units=%ld nodes=%ld "
               "coord_busy=%.4f worker_idle=%.4f coord_msgs=%ld steals=%ld rounds=%ld err=%d\n",
               r.nranks, out.seconds, out.m_star, r.w->m_star, out.units, out.nodes,
               out.seconds > 0 ? out.coord_seconds / out.seconds : 0, worker_idle,
               out.coord_messages, out.steals, out.rounds, (int)err);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    if (r.rank == 0) {
        for (long i = 0; i < shared->nsizes; i++) {
            free(shared->sizes[i].units);
            free(shared->sizes[i].rounds);
            free(shared->sizes[i].sub);
        }
        free(shared->sizes);
        free(shared->prep.rounds);
        free(shared->prep.sub);
        free(shared->pcell);
        free(shared->ptime);
        free(shared);
    }
    MPI_Finalize();
    return err == HF_OK ? 0 : 1;
}
