/* One row searched across the ranks (hf_campaign_entry, headfuse/campaign.h), in phases, as
 * libuv's uv_run reads: admit (the bounds, the certified shortcut, the row's checks),
 * create (the search, its fingerprint, the shards of earlier runs and this run's own), run
 * (the scheduler), reduce (the row settled; rank 0 merges the shards into its minimal
 * supports) and share (the symmetry group and the orbits on every rank). Each phase is one
 * function in its own file (entry_admit.c, entry_create.c, entry_run.c, entry_reduce.c,
 * entry_share.c), and they share one context (hf_campaign_entry_ctx_t, campaign_impl.h). */
#include <string.h>
#include <time.h>

#include "campaign/campaign_impl.h"
#include "headfuse/symmetry.h"

/* The context of one call, and the row's header: the target, the span, max_atoms, nothing
 * decided yet. */
static void entry_begin(hf_campaign_entry_ctx_t *x, MPI_Comm comm, const hf_target_t *t,
                        const hf_search_opts_t *opts, const hf_campaign_cfg_t *cfg, hf_row_t *row,
                        hf_unit_record_t **units, long *nunits)
{
    memset(x, 0, sizeof *x);
    x->comm = comm;
    MPI_Comm_rank(comm, &x->rank);
    MPI_Comm_size(comm, &x->size);
    x->t = t;
    x->opts = opts;
    x->cfg = cfg;
    hf_supports_init(&x->sup, 0, t->d, t->dv);
    x->row = row;
    x->units = units;
    x->nunits = nunits;
    x->t0 = MPI_Wtime();
    x->started = (long long)time(NULL); /* the run's stamp: its shards' names */
    hf_bounds_init(&x->own);
    x->b = cfg->bounds ? cfg->bounds : &x->own;
    memset(row, 0, sizeof *row);
    snprintf(row->name, sizeof row->name, "%s", t->name);
    row->d = t->d;
    row->span = opts->span;
    row->m_star = row->n_min_raw = row->n_min_sym = row->group_order = -1;
    row->max_atoms = opts->max_atoms;
    x->ro = (hf_campaign_outcome_t){
        .bounds = x->b, .engine = hf_engine_name(opts->engine), .m_star = -1};
}

static void entry_end(hf_campaign_entry_ctx_t *x)
{
    if (x->shard)
        hf_shard_destroy(&x->shard);
    free(x->done);
    hf_search_destroy(&x->s);
    hf_group_destroy(&x->group);
    hf_bounds_clear(&x->own);
    hf_supports_clear(&x->sup);
}

hf_err_t hf_campaign_entry(MPI_Comm comm, const hf_target_t *t, const hf_search_opts_t *sopts,
                           const hf_campaign_cfg_t *cfg, hf_row_t *row, hf_supports_t *sup,
                           hf_unit_record_t **units, long *nunits)
{
    hf_campaign_entry_ctx_t x;
    entry_begin(&x, comm, t, sopts, cfg, row, units, nunits);
    hf_err_t e = hf_campaign_entry_admit(&x);
    if (e == HF_OK && !x.decided) {
        e = hf_campaign_entry_create(&x);
        if (e == HF_OK)
            e = hf_campaign_entry_run(&x);
        if (e == HF_OK)
            e = hf_campaign_entry_reduce(&x);
        if (e == HF_OK)
            e = hf_campaign_entry_share(&x);
        if (x.settled) /* the row's seconds and the run's report, even after a late error */
            hf_campaign_entry_report(&x);
    }
    if (e == HF_OK) { /* built aside, swapped in: the caller's supports kept on error */
        hf_supports_t old = *sup;
        *sup = x.sup;
        x.sup = old;
    }
    entry_end(&x);
    return e;
}
