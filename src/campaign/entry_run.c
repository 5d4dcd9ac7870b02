/* The third phase of an entry (hf_campaign_entry): the scheduler runs the search's sizes
 * across the ranks (headfuse/sched.h), every found support and finished range of cells
 * going to this rank's shard, and the symmetry group made by a rank while it would wait
 * (the idle task). A stop says what is saved for --resume. The run's report (the share of it
 * each rank spent waiting) comes once the row is settled. */
#include <stdio.h>
#include <stdlib.h>

#include "headfuse/agree.h"
#include "campaign/campaign_impl.h"

typedef struct {
    hf_shard_t *shard;
    int row, rank;
    long ranges; /* ranges of cells this rank finished and saved in this run */
} hook_ctx_t;

/* A found support goes to the shard as its record (hf_found_encode), with the range of
 * cells it was found in (the range's completion record follows). */
static hf_err_t hook_found(void *vctx, long unit, int64_t lo, const hf_found_t *f)
{
    hook_ctx_t *c = vctx;
    char *s;
    HF_TRY(hf_found_encode(f, &s));
    return hf_shard_take_found(c->shard, c->row, f->m, unit, lo, s);
}

static hf_err_t hook_unit_done(void *vctx, long m, long unit, int64_t lo, int64_t hi, long nodes,
                               long found, double seconds)
{
    hook_ctx_t *c = vctx;
    hf_unit_record_t r = {.row = c->row,
                          .rank = c->rank,
                          .m = m,
                          .unit = unit,
                          .lo = lo,
                          .hi = hi,
                          .nodes = nodes,
                          .found = found,
                          .seconds = seconds};
    HF_TRY(hf_shard_finish_unit(c->shard, &r));
    c->ranges++;
    return HF_OK;
}

static hf_err_t make_group(void *ctx)
{
    hf_campaign_entry_ctx_t *x = ctx;
    return x->group ? HF_OK : hf_campaign_group(x->s, x->t, &x->group);
}

/* A stop during the run: say truthfully what is kept, ranges of cells of this run (mine:
 * this rank's) and of earlier ones. */
static hf_err_t interrupted(const hf_campaign_entry_ctx_t *x, long first_m, long mine)
{
    long now = 0;
    MPI_Allreduce(&mine, &now, 1, MPI_LONG, MPI_SUM, x->comm);
    if (x->oc.last_m < first_m && now == 0)
        return hf_error(HF_ERR_INTERRUPTED,
                        "interrupted while preparing the search (before its first size): "
                        "nothing was finished in this run%s; rerun the same command with "
                        "--resume (the preparation is done again)",
                        x->ndone ? " (what earlier runs saved stays in the shards)" : "");
    return hf_error(HF_ERR_INTERRUPTED,
                    "interrupted at size %ld: %ld ranges of cells finished in this run "
                    "and %ld in earlier runs are saved in %s; rerun the same command with "
                    "--resume to continue",
                    x->oc.last_m + 1, now, x->ndone, x->cfg->shard_dir);
}

hf_err_t hf_campaign_entry_run(hf_campaign_entry_ctx_t *x)
{
    MPI_Comm comm = x->comm;
    int rank = x->rank, size = x->size;
    hook_ctx_t hc = {x->shard, x->cfg->row, rank, 0};
    /* the symmetry group, which only the row needs: made by a rank while it would wait */
    x->idle = (hf_sched_idle_t){.run = make_group, .ctx = x};
    hf_sched_hooks_t hooks = {hook_found, hook_unit_done, &hc};
    hf_sched_opts_t so = {.first_m = hf_search_first_size(x->s),
                          .last_m = hf_search_last_size(x->s),
                          .done = x->done,
                          .ndone = x->ndone,
                          .quiet = x->cfg->quiet,
                          .progress_interval = 5.0,
                          .label = x->t->name,
                          .idle = size > 1 ? &x->idle : NULL};
    x->last_m = so.last_m;
    hf_err_t e = hf_sched_run(comm, x->s, &so, &hooks, &x->oc);
    hf_err_t ce = hf_shard_destroy(&x->shard);
    if (e == HF_OK)
        e = ce;
    HF_TRY(hf_agree_all(comm, e));
    MPI_Barrier(comm); /* every shard is closed before rank 0 reads them */
    /* the group's rank: the lowest that ran the idle task, else the last (while rank 0 merges) */
    int owner = x->idle.ran ? rank : size;
    MPI_Allreduce(MPI_IN_PLACE, &owner, 1, MPI_INT, MPI_MIN, comm);
    x->owner = owner == size ? size - 1 : owner;
    return x->oc.interrupted ? interrupted(x, so.first_m, hc.ranges) : HF_OK;
}

/* Progress report: the share of the run each rank spent waiting for work, and how the work
 * was dealt (rounds, and ranges split off running ones by rank 0). The first ranks' shares
 * and the sum of all come to rank 0 in one reduction (every other slot is 0, so the shares
 * arrive exact): nothing to allocate, so the report cannot fail. */
static void report_idle(MPI_Comm comm, int rank, int size, const char *name,
                        const hf_sched_outcome_t *oc, int quiet)
{
    enum { SHOWN = 16 };
    double mine[SHOWN + 1] = {0}, all[SHOWN + 1];
    if (rank < SHOWN)
        mine[rank] = oc->idle_fraction;
    mine[SHOWN] = oc->idle_fraction;
    MPI_Reduce(mine, all, SHOWN + 1, MPI_DOUBLE, MPI_SUM, 0, comm);
    if (rank == 0 && !quiet) {
        fprintf(stderr, "[%s] %.2fs wall; idle fraction per rank:", name, oc->seconds);
        for (int r = 0; r < (size > SHOWN ? SHOWN : size); r++)
            fprintf(stderr, " r%d %.1f%%", r, 100 * all[r]);
        if (size > SHOWN)
            fprintf(stderr, " ... mean %.1f%%", 100 * all[SHOWN] / size);
        fprintf(stderr, "; %ld rounds dealt, %ld steals, %ld messages at rank 0\n", oc->rounds,
                oc->steals, oc->coord_messages);
    }
}

void hf_campaign_entry_report(hf_campaign_entry_ctx_t *x)
{
    x->row->seconds = MPI_Wtime() - x->t0;
    report_idle(x->comm, x->rank, x->size, x->t->name, &x->oc, x->cfg->quiet);
}
