/* A search into its own RESULT.h5 (hf_campaign_search, `headfuse search`): the output
 * checked before any work (an existing result of this very search is kept with --resume),
 * one entry searched (hf_campaign_entry), and its row written with its provenance; the
 * shards are removed once the file is written. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "headfuse/agree.h"
#include "campaign/campaign_impl.h"

/* Rank 0, before any work: the output's directory is writable, and an existing file is
 * overwritten only with --force; with --resume, an existing result of this very search
 * means there is nothing left to do (*complete, its row in *row). */
static hf_err_t check_out(const char *out, int force, int resume, const hf_target_t *t,
                          const hf_search_opts_t *so, int *complete, hf_row_t *row)
{
    *complete = 0;
    hf_err_t e = hf_campaign_check_output("--out", out, force || resume,
                                          "--resume to keep it if it is the result of this search");
    if (e != HF_OK || force || !resume || access(out, F_OK) != 0)
        return e;
    hf_result_t r;
    hf_result_init(&r);
    char *json = hf_target_to_json(t);
    if (!json)
        return HF_ERR_NOMEM;
    e = hf_result_read(out, &r);
    if (e == HF_ERR_NOMEM) {
        free(json);
        return e;
    }
    if (e == HF_OK && r.nrows == 1 && hf_campaign_row_matches(&r, 0, json, so)) {
        *complete = 1;
        *row = r.rows[0];
    } else if (e == HF_OK) {
        e = hf_error(HF_ERR_INPUT,
                     "--out %s: exists and holds another result (%ld row%s%s%s), not this "
                     "search's; give --force to overwrite it",
                     out, r.nrows, r.nrows == 1 ? ": " : "", r.nrows == 1 ? r.rows[0].name : "",
                     r.nrows == 1 && strcmp(r.target_json[0], json) ? "" : ", other settings");
    } else {
        char why[1024];
        snprintf(why, sizeof why, "%s", hf_error_msg());
        e = hf_error(HF_ERR_INPUT,
                     "--out %s: exists and is not a readable result (%s); give --force to "
                     "overwrite it",
                     out, why);
    }
    hf_result_clear(&r);
    free(json);
    return e;
}

hf_err_t hf_campaign_search(MPI_Comm comm, const hf_target_t *t, const hf_search_opts_t *so,
                            const hf_campaign_search_opts_t *o, hf_row_t *row, int *complete)
{
    int rank, size;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    hf_result_t res;
    hf_supports_t sup;
    hf_unit_record_t *units = NULL;
    long nunits = 0;
    char shard_dir[4096], *tjson = NULL;
    snprintf(shard_dir, sizeof shard_dir, "%s.shards", o->out);
    hf_result_init(&res);
    hf_supports_init(&sup, 0, t->d, t->dv);
    *complete = 0;
    hf_err_t e = rank == 0 ? check_out(o->out, o->force, o->resume, t, so, complete, row) : HF_OK;
    if ((e = hf_agree_root(comm, e)) != HF_OK)
        goto out;
    MPI_Bcast(complete, 1, MPI_INT, 0, comm);
    if (*complete) /* --resume after the result was written: it stays as it is */
        goto out;
    hf_campaign_memory_t lim;
    e = hf_agree_all(
        comm, hf_campaign_memory_limit(o->max_memory, NULL, hf_campaign_node_ranks(comm), &lim));
    lim.ranks = size;
    if (e != HF_OK)
        goto out;
    hf_campaign_cfg_t cfg = {.shard_dir = shard_dir,
                             .resume = o->resume,
                             .quiet = o->quiet,
                             .row = 0,
                             .command_line = o->command_line,
                             .max_name = "--max-atoms",
                             .memory = &lim};
    HF_CHECK(e, hf_campaign_entry(comm, t, so, &cfg, row, &sup, &units, &nunits), out);
    if (rank == 0) {
        tjson = hf_target_to_json(t);
        e = tjson ? hf_result_add_row(&res, row, &sup, tjson) : HF_ERR_NOMEM;
        res.units = units;
        res.nunits = nunits;
        units = NULL;
        if (e == HF_OK)
            e = hf_campaign_provenance(&res, o->command_line, o->start, size);
        if (e == HF_OK)
            e = hf_campaign_stop_said(hf_result_write(o->out, &res),
                                      "%s was not written; every unit is saved in %s: rerun "
                                      "the same command with --resume to write it",
                                      o->out, shard_dir);
        if (e == HF_OK)
            hf_shards_remove(shard_dir);
    }
    e = hf_agree_root(comm, e);
out:
    hf_result_clear(&res);
    hf_supports_clear(&sup);
    free(units);
    free(tjson);
    return e;
}
