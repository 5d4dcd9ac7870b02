/* The real scheduler (hf_sched_run) on simulated ranks (SimGrid SMPI, built by
 * bench/scaling in build-smpi): every MPI message and every scheduling decision is the
 * real one, and the search's computation is replaced by its recorded cost (a workload
 * from bench/scaling_record): each rank "computes" the preparation of each size and each
 * unit it is handed with smpi_execute_flops. A size's preparation is replayed as the real
 * scheduler splits it (hf_sched_split_t): every rank computes the serial rest, then for
 * each exchange its share of the recorded sub-units (u mod N), then the exchange's
 * collective calls, with the recorded bytes gathered (from simulated shared memory:
 * 1024 ranks would otherwise each hold the whole table). A workload without x/s lines
 * (older recordings) is prepared whole on every rank. The coordinator's units are cut into the
 * slices between two polls (as recorded; in older recordings every 256 candidates), so rank 0
 * answers requests when the real one would. smpirun -np N -platform bench/cluster.xml
 * build-smpi/scaling_driver WORKLOAD [FLOPS] FLOPS: the simulated host's speed in flop/s (the
 * platform's speed); a recorded second is FLOPS flops, so a simulated host is as fast as one core
 * of the recording machine. Rank 0 prints one line: ranks=N seconds=T m_star=M units=U nodes=X
 * coord_busy=F worker_idle=F coord_msgs=K */
#include <mpi.h>
#include <smpi/smpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "headfuse/agree.h"
#include "headfuse/sched.h"

typedef struct {
    float seconds;
    int32_t found;
    int64_t nodes;
    int64_t polls; /* calls of the poll hook; -1: not recorded (every 256 nodes then) */
} unit_cost_t;

/* One exchange of a size's split preparation: nsub sub-units, then bytes gathered. */
typedef struct {
    int64_t nsub, bytes;
} xchg_t;

typedef struct {
    long m, nunits;
    double level_seconds; /* all of the size's preparation */
    unit_cost_t *units;
    long nx, nsub; /* exchanges and sub-units of the split preparation (0: none recorded) */
    xchg_t *x;
    float *sub; /* the sub-units' seconds, exchange after exchange */
} size_cost_t;

typedef struct {
    double prepare, flops;
    size_cost_t *sizes;
    long nsizes;
    long m_star; /* recorded */
    int rank, nranks;
    hf_sched_split_t split; /* the scheduler's own exchange, for its agreements */
} workload_t;

/* Room for n elements of size sz in *p (capacity *cap); 0 when out of memory. */
static int grow(void **p, long *cap, long n, size_t sz)
{
    if (n <= *cap)
        return 1;
    long c = *cap ? 2 * *cap : 64;
    void *g = realloc(*p, (size_t)c * sz);
    if (!g)
        return 0;
    *p = g;
    *cap = c;
    return 1;
}

static int load(const char *path, workload_t *w)
{
    FILE *f = fopen(path, "r");
    if (!f)
        return -1;
    char line[512];
    size_t cap = 0;
    size_cost_t *cur = NULL;
    w->m_star = -1;
    long xcap = 0, scap = 0;
    while (fgets(line, sizeof line, f)) {
        long m, n, u, nodes, found, units, polls;
        int k;
        double s;
        if (line[0] == '#')
            continue;
        if (sscanf(line, "s %lf", &s) == 1) {
            if (!cur || cur->nx == 0 ||
                !grow((void **)&cur->sub, &scap, cur->nsub + 1, sizeof *cur->sub))
                goto bad;
            cur->sub[cur->nsub++] = (float)s;
        } else if (sscanf(line, "x %ld %ld", &n, &u) == 2) {
            if (!cur || !grow((void **)&cur->x, &xcap, cur->nx + 1, sizeof *cur->x))
                goto bad;
            cur->x[cur->nx++] = (xchg_t){n, u};
        } else if ((k = sscanf(line, "u %ld %lf %ld %ld %ld", &u, &s, &nodes, &found, &polls)) >=
                   4) {
            if (!cur || u < 0 || u >= cur->nunits)
                goto bad;
            cur->units[u] = (unit_cost_t){(float)s, (int32_t)found, nodes, k == 5 ? polls : -1};
        } else if (sscanf(line, "size %ld %ld %lf", &m, &n, &s) == 3) {
            if ((size_t)w->nsizes == cap) {
                cap = cap ? 2 * cap : 16;
                size_cost_t *g = realloc(w->sizes, cap * sizeof *g);
                if (!g)
                    goto bad;
                w->sizes = g;
            }
            cur = w->sizes + w->nsizes++;
            *cur = (size_cost_t){.m = m,
                                 .nunits = n,
                                 .level_seconds = s,
                                 .units = calloc((size_t)(n ? n : 1), sizeof(unit_cost_t))};
            xcap = scap = 0;
            if (!cur->units)
                goto bad;
        } else if (sscanf(line, "prepare %lf", &s) == 1) {
            w->prepare = s;
        } else if (sscanf(line, "end %ld %ld %lf", &m, &units, &s) == 3) {
            w->m_star = m;
        }
    }
    fclose(f);
    return w->nsizes > 0 ? 0 : -1;
bad:
    fclose(f);
    return -1;
}

/* Rank 0 reads the workload, the others receive it (one parse instead of N). */
static int share(workload_t *w, int ok)
{
    double head[4] = {ok, w->prepare, (double)w->nsizes, (double)w->m_star};
    MPI_Bcast(head, 4, MPI_DOUBLE, 0, MPI_COMM_WORLD);
    if (!head[0])
        return -1;
    if (w->rank != 0) {
        w->prepare = head[1];
        w->nsizes = (long)head[2];
        w->m_star = (long)head[3];
        if (!(w->sizes = calloc((size_t)w->nsizes, sizeof *w->sizes)))
            return -1;
    }
    for (long i = 0; i < w->nsizes; i++) {
        size_cost_t *sz = w->sizes + i;
        double h[5] = {(double)sz->m, (double)sz->nunits, sz->level_seconds, (double)sz->nx,
                       (double)sz->nsub};
        MPI_Bcast(h, 5, MPI_DOUBLE, 0, MPI_COMM_WORLD);
        if (w->rank != 0) {
            *sz = (size_cost_t){(long)h[0],
                                (long)h[1],
                                h[2],
                                calloc((size_t)(h[1] > 0 ? h[1] : 1), sizeof(unit_cost_t)),
                                (long)h[3],
                                (long)h[4],
                                calloc((size_t)(h[3] > 0 ? h[3] : 1), sizeof(xchg_t)),
                                calloc((size_t)(h[4] > 0 ? h[4] : 1), sizeof(float))};
            if (!sz->units || !sz->x || !sz->sub)
                return -1;
        }
        MPI_Bcast(sz->units, (int)(sz->nunits * sizeof(unit_cost_t)), MPI_BYTE, 0, MPI_COMM_WORLD);
        MPI_Bcast(sz->x, (int)(sz->nx * sizeof(xchg_t)), MPI_BYTE, 0, MPI_COMM_WORLD);
        MPI_Bcast(sz->sub, (int)(sz->nsub * sizeof(float)), MPI_BYTE, 0, MPI_COMM_WORLD);
    }
    return 0;
}

static void compute(const workload_t *w, double seconds)
{
    if (seconds > 0)
        smpi_execute_flops(seconds * w->flops);
}

static hf_err_t r_prepare(void *ctx, hf_search_poll_fn poll, void *poll_ctx)
{
    workload_t *w = ctx;
    compute(w, w->prepare);
    return poll && poll(poll_ctx) ? HF_ERR_INTERRUPTED : HF_OK;
}

static const size_cost_t *size_of(const workload_t *w, long m)
{
    for (long i = 0; i < w->nsizes; i++)
        if (w->sizes[i].m == m)
            return w->sizes + i;
    return NULL;
}

/* One exchange of the split preparation, with the real scheduler's collective calls
 * (hf_sched_split_t: the agreement before the sub-search's size, the status of the
 * exchange, the lengths, the bytes, the agreement after): this rank's share of the bytes
 * comes from, and every rank's goes to, simulated shared memory. */
static hf_err_t replay_exchange(const workload_t *w, const xchg_t *x)
{
    const hf_search_split_t *sp = &w->split.split;
    HF_TRY(sp->allgather(sp->ctx, HF_OK, NULL, 0, NULL, NULL));
    HF_TRY(sp->allgather(sp->ctx, HF_OK, NULL, 0, NULL, NULL));
    long long share = (x->bytes + w->nranks - 1) / w->nranks,
              *lens = malloc((size_t)w->nranks * sizeof *lens);
    if (!lens)
        return HF_ERR_NOMEM;
    HF_TRY(hf_agree_all(MPI_COMM_WORLD, HF_OK));
    MPI_Allgather(&share, 1, MPI_LONG_LONG, lens, 1, MPI_LONG_LONG, MPI_COMM_WORLD);
    free(lens);
    HF_TRY(hf_agree_all(MPI_COMM_WORLD, HF_OK));
    char *buf = SMPI_SHARED_MALLOC((size_t)share * (size_t)w->nranks + 1);
    MPI_Allgather(buf, (int)share, MPI_BYTE, buf, (int)share, MPI_BYTE, MPI_COMM_WORLD);
    SMPI_SHARED_FREE(buf);
    return sp->allgather(sp->ctx, HF_OK, NULL, 0, NULL, NULL);
}

static hf_err_t r_level(void *ctx, long m, long *nunits)
{
    workload_t *w = ctx;
    const size_cost_t *sz = size_of(w, m);
    if (!sz)
        return hf_error(HF_ERR_INPUT, "size %ld is not in the workload", m);
    double subs = 0;
    for (long i = 0; i < sz->nsub; i++)
        subs += sz->sub[i];
    /* every rank prepares whole what is not split; one rank prepares everything */
    if (w->nranks == 1 || sz->nx == 0) {
        compute(w, sz->level_seconds);
    } else {
        compute(w, sz->level_seconds > subs ? sz->level_seconds - subs : 0);
        for (long i = 0, first = 0; i < sz->nx; first += sz->x[i++].nsub) {
            double mine = 0;
            for (long u = w->rank; u < sz->x[i].nsub; u += w->nranks)
                mine += sz->sub[first + u];
            compute(w, mine);
            HF_TRY(replay_exchange(w, sz->x + i));
        }
    }
    *nunits = sz->nunits;
    return HF_OK;
}

static hf_err_t r_run_unit(void *ctx, long m, long unit, hf_search_found_fn found, void *found_ctx,
                           hf_search_poll_fn poll, void *poll_ctx, long *nodes)
{
    workload_t *w = ctx;
    const unit_cost_t *c = size_of(w, m)->units + unit;
    /* only rank 0's poll does work (it serves requests); elsewhere one step is exact */
    long polls = c->polls >= 0 ? (long)c->polls : (long)(c->nodes / 256);
    long slices = w->rank == 0 && poll ? polls + 1 : 1;
    double slice = c->seconds / slices;
    for (long i = 0; i < slices; i++) {
        compute(w, slice);
        if (poll && poll(poll_ctx))
            return HF_ERR_INTERRUPTED;
    }
    for (int32_t i = 0; i < c->found; i++)
        HF_TRY(found(found_ctx, m, NULL, NULL));
    *nodes = (long)c->nodes;
    return HF_OK;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    workload_t w;
    memset(&w, 0, sizeof w);
    w.rank = rank;
    w.nranks = size;
    hf_sched_split_init(&w.split, MPI_COMM_WORLD);
    w.flops = argc > 2 ? atof(argv[2]) : 1e9;
    int ok = rank != 0 || (argc > 1 && load(argv[1], &w) == 0);
    if (share(&w, ok) != 0) {
        if (rank == 0)
            fprintf(stderr, "scaling_driver: cannot read the workload %s\n",
                    argc > 1 ? argv[1] : "(none)");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    hf_sched_runner_t runner = {r_prepare, r_level, r_run_unit, &w};
    hf_sched_opts_t opts = {.first_m = w.sizes[0].m,
                            .last_m = w.sizes[w.nsizes - 1].m,
                            .quiet = 1,
                            .progress_interval = 1e9,
                            .label = "replay",
                            .runner = &runner};
    hf_sched_outcome_t out;
    MPI_Barrier(MPI_COMM_WORLD);
    hf_err_t err = hf_sched_run(MPI_COMM_WORLD, NULL, &opts, NULL, &out);
    double idle = out.idle_fraction, idle_sum = 0;
    MPI_Reduce(&idle, &idle_sum, 1, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD);
    if (rank == 0) {
        double worker_idle = size > 1 ? (idle_sum - idle) / (size - 1) : idle;
        printf("ranks=%d seconds=%.3f m_star=%ld recorded_m_star=%ld units=%ld nodes=%ld "
               "coord_busy=%.4f worker_idle=%.4f coord_msgs=%ld err=%d\n",
               size, out.seconds, out.m_star, w.m_star, out.units, out.nodes,
               out.seconds > 0 ? out.coord_seconds / out.seconds : 0, worker_idle,
               out.coord_messages, (int)err);
    }
    for (long i = 0; i < w.nsizes; i++) {
        free(w.sizes[i].units);
        free(w.sizes[i].x);
        free(w.sizes[i].sub);
    }
    free(w.sizes);
    MPI_Finalize();
    return err == HF_OK ? 0 : 1;
}
