/* A job file (docs/jobs.md) run entry by entry across the ranks into one RESULT.h5 with
 * one table row per entry (row index = entry index): the run loop. A resumed run skips
 * entries with a finished row and, inside the entry it was running, the finished units; a
 * resumed run of an edited job keeps the state of every entry whose definition did not
 * change (job_migrate.c), and the rows of an existing RESULT.h5 (seeds, job_state.c). The
 * entries are checked first (job_preflight.c). */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "headfuse/agree.h"
#include "campaign/campaign_impl.h"
#include "headfuse/sched.h"

/* Rank 0, --collect: every entry has its finished row. */
static hf_err_t check_collect(const hf_campaign_state_t *st, const int *done)
{
    char missing[256] = "";
    long nmissing = 0, n = st->job->nentries;
    for (long i = 0; i < n; i++)
        if (!done[i] && nmissing++ < 8)
            snprintf(missing + strlen(missing), sizeof missing - strlen(missing), "%s%ld",
                     nmissing > 1 ? ", " : "", i);
    if (nmissing)
        return hf_error(HF_ERR_INPUT,
                        "--collect: %ld of %ld entries have no finished row in %s (entries %s%s); "
                        "run them with --entry I, or run without --collect",
                        nmissing, n, st->dir, missing, nmissing > 8 ? ", ..." : "");
    return HF_OK;
}

/* Entry i: search it and keep its finished row in the state (rank 0). */
static hf_err_t run_entry(MPI_Comm comm, hf_campaign_state_t *st, long i,
                          const hf_campaign_job_opts_t *o, const hf_bounds_t *bounds,
                          const hf_campaign_memory_t *lim, hf_row_t *row)
{
    int rank, size;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    const hf_job_t *job = st->job;
    hf_target_t t;
    hf_target_init_empty(&t);
    hf_err_t te = hf_job_entry_target(job, i, &t);
    /* a rank that cannot build the target must not leave the others searching */
    hf_err_t e = hf_agree_all(comm, te);
    if (e != HF_OK) {
        if (te == HF_OK)
            hf_target_clear(&t);
        return e;
    }
    const hf_job_entry_t *je = job->entries + i;
    hf_search_opts_t so;
    hf_campaign_entry_opts(job, i, &so);
    char edir[sizeof st->file], estart[32];
    snprintf(edir, sizeof edir, "%s", hf_campaign_entry_dir(st, i));
    hf_campaign_iso_time(estart, sizeof estart);
    hf_campaign_cfg_t cfg = {.shard_dir = edir,
                             .resume = o->resume,
                             .quiet = o->quiet,
                             .row = (int)i,
                             .command_line = o->command_line,
                             .max_name = "max_atoms",
                             .bounds = bounds,
                             .memory = lim};
    hf_supports_t sup;
    hf_supports_init(&sup, 0, t.d, t.dv);
    hf_unit_record_t *units = NULL;
    long nunits = 0;
    e = hf_campaign_entry(comm, &t, &so, &cfg, row, &sup, &units, &nunits);
    if (e == HF_OK && rank == 0)
        e = hf_campaign_save_row(st, i, &t, row, &sup, units, nunits, o->command_line, estart,
                                 size);
    e = hf_agree_root(comm, e);
    hf_supports_clear(&sup);
    free(units);
    hf_target_clear(&t);
    if (e != HF_OK) {
        char *d = hf_job_entry_describe(job, i);
        hf_error_prefix("entry %ld (%s)", i, d ? d : je->label);
        free(d);
    }
    return e;
}

hf_err_t hf_campaign_job_run(MPI_Comm comm, const hf_job_t *job, const hf_campaign_job_opts_t *o,
                             hf_campaign_row_fn on_row, void *ctx, hf_result_t *res,
                             hf_campaign_job_outcome_t *oc)
{
    int rank, size;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    memset(oc, 0, sizeof *oc);
    hf_campaign_state_t st;
    hf_campaign_seed_t seed = {.row_of = NULL};
    hf_result_init(&seed.res);
    int *done = NULL, resume = o->resume || o->collect; /* collecting continues earlier runs */
    long entry = o->entry;
    hf_bounds_t *bounds = NULL;
    hf_err_t e = o->command_line ? HF_OK : HF_ERR_NOMEM; /* every row records the command */
    if ((e = hf_agree_all(comm, e)) != HF_OK)
        goto out;
    if ((e = hf_campaign_check_ranks(size)) != HF_OK)
        goto out;
    if (entry >= job->nentries) {
        e = hf_error(HF_ERR_INPUT, "--entry %ld: the job has %ld entries (0..%ld)", entry,
                     job->nentries, job->nentries - 1);
        goto out;
    }
    long first = entry >= 0 ? entry : 0, last = entry >= 0 ? entry : job->nentries - 1;
    /* the preflight's bounds, one record per entry, go to the entries' rows */
    if (!(bounds = hf_malloc((size_t)(job->nentries ? job->nentries : 1) * sizeof *bounds)))
        e = HF_ERR_NOMEM;
    for (long i = 0; bounds && i < job->nentries; i++)
        hf_bounds_init(bounds + i);
    if ((e = hf_agree_all(comm, e)) != HF_OK)
        goto out;
    /* the memory limit per rank (docs/targets.md, "Limits"): each rank its own node's */
    hf_campaign_memory_t lim;
    e = hf_campaign_memory_limit(o->max_memory, job, hf_campaign_node_ranks(comm), &lim);
    lim.ranks = size;
    if ((e = hf_agree_all(comm, e)) != HF_OK)
        goto out;
    if (!o->collect && (e = hf_campaign_preflight(comm, job, first, last, &lim, bounds)) != HF_OK)
        goto out;
    st.job = job;
    snprintf(st.dir, sizeof st.dir, "%s.shards", job->output);
    if (!(done = hf_calloc((size_t)(job->nentries ? job->nentries : 1), sizeof *done))) {
        e = HF_ERR_NOMEM;
        goto out;
    }

    if (rank == 0 && resume && entry < 0)
        oc->complete = hf_campaign_result_complete(&st, job->output);
    MPI_Bcast(&oc->complete, 1, MPI_INT, 0, comm);
    if (oc->complete) {
        if (rank == 0)
            e = hf_result_read(job->output, res);
        e = hf_agree_root(comm, e);
        goto out;
    }

    /* a finished RESULT.h5 (hours of work) is never replaced silently */
    if (entry < 0 && !resume && !o->force && rank == 0 && hf_campaign_path_exists(job->output))
        e = hf_error(HF_ERR_INPUT,
                     "%s: exists; rerun with --resume to keep its rows (entries not in it are "
                     "run), or with --force to overwrite it",
                     job->output);
    /* --resume with a RESULT.h5 that lacks entries (the job was extended after it was
     * written): its rows are kept as finished entries */
    if (e == HF_OK && entry < 0 && resume && rank == 0 && hf_campaign_path_exists(job->output))
        e = hf_campaign_plan_seed(&st, job->output, o->force, &seed);
    if (e == HF_OK && o->collect && rank == 0 && !hf_campaign_path_exists(st.dir))
        e = hf_error(HF_ERR_INPUT,
                     "--collect: %s does not exist: no entry of this job has finished (run them "
                     "with --entry I, or run without --collect)",
                     st.dir);
    if ((e = hf_agree_root(comm, e)) != HF_OK)
        goto out;
    e = rank == 0 ? hf_campaign_prepare_state(&st, first, last, resume, entry < 0, done) : HF_OK;
    if ((e = hf_agree_root(comm, e)) != HF_OK)
        goto out;
    if ((e = hf_agree_root(comm, rank == 0 ? hf_campaign_apply_seed(&st, &seed, done) : HF_OK)) !=
        HF_OK)
        goto out;
    MPI_Bcast(done, (int)job->nentries, MPI_INT, 0, comm);
    e = o->collect && rank == 0 ? check_collect(&st, done) : HF_OK;
    if ((e = hf_agree_root(comm, e)) != HF_OK)
        goto out;

    for (long i = first; i <= last; i++) {
        if (done[i]) {
            oc->skipped++;
            continue;
        }
        /* a stop signal between entries: nothing in flight, stop here */
        int stop = hf_sched_stop_requested(), any;
        MPI_Allreduce(&stop, &any, 1, MPI_INT, MPI_MAX, comm);
        if (any) {
            e = hf_error(HF_ERR_INTERRUPTED,
                         "interrupted before entry %ld; finished entries are kept in %s; rerun "
                         "the same command with --resume to continue",
                         i, st.dir);
            goto out;
        }
        hf_row_t row;
        if ((e = run_entry(comm, &st, i, o, o->collect ? NULL : bounds + i, &lim, &row)) != HF_OK)
            goto out;
        oc->ran++;
        if (rank == 0 && on_row)
            on_row(ctx, i, job->nentries, &row);
    }

    if (entry >= 0) {
        oc->entry_done = done[entry];
        if (rank == 0)
            e = hf_result_read(hf_campaign_entry_row(&st, entry), res);
        e = hf_agree_root(comm, e);
        goto out;
    }
    if (rank == 0) {
        e = hf_campaign_assemble(&st, job->output, o->command_line, o->start, size, res);
        if (e == HF_OK)
            hf_campaign_remove_state(&st);
    }
    e = hf_agree_root(comm, e);
out:
    for (long i = 0; bounds && i < job->nentries; i++)
        hf_bounds_clear(bounds + i);
    free(bounds);
    hf_campaign_seed_clear(&seed);
    free(done);
    return e;
}
