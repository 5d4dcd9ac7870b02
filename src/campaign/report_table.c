/* What `headfuse table` reads and `headfuse run --list` plans (headfuse/report.h): the
 * files of a table, missing ones skipped, APPROX.h5 files told apart, results read; a job
 * checked and planned entry by entry without MPI. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "headfuse/core.h"
#include "headfuse/report.h"

void hf_report_table_init(hf_report_table_t *r)
{
    memset(r, 0, sizeof *r);
}

/* Clear and free the first n results of res. */
static void results_free(hf_result_t *res, int n)
{
    for (int i = 0; i < n; i++)
        hf_result_clear(&res[i]);
    free(res);
}

void hf_report_table_clear(hf_report_table_t *r)
{
    results_free(r->res, r->nread);
    free(r->paths);
    free(r->missing);
    free(r->missing_shards);
    hf_report_table_init(r);
}

static int exists(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 || errno != ENOENT;
}

/* Keep the files that exist, and name the others, while one exists. */
static void sort_missing(const char *const *paths, int n, hf_report_table_t *r)
{
    int any = 0;
    for (int i = 0; i < n && !any; i++)
        any = exists(paths[i]);
    for (int i = 0; i < n; i++) {
        char shards[4200];
        if (!any || exists(paths[i])) {
            r->paths[r->n++] = paths[i];
            continue;
        }
        struct stat st;
        snprintf(shards, sizeof shards, "%s.shards", paths[i]);
        r->missing_shards[r->nmissing] = stat(shards, &st) == 0;
        r->missing[r->nmissing++] = paths[i];
    }
}

hf_err_t hf_report_table(const char *const *paths, int n, hf_report_table_t *out)
{
    hf_report_table_t r;
    hf_report_table_init(&r);
    size_t k = (size_t)(n > 0 ? n : 1);
    r.paths = hf_calloc(k, sizeof *r.paths);
    r.missing = hf_calloc(k, sizeof *r.missing);
    r.missing_shards = hf_calloc(k, 1);
    if (!r.paths || !r.missing || !r.missing_shards) {
        hf_report_table_clear(&r);
        return HF_ERR_NOMEM;
    }
    sort_missing(paths, n, &r);
    hf_report_table_clear(out);
    *out = r; /* the new value, swapped in */
    return HF_OK;
}

hf_err_t hf_report_table_read(hf_report_table_t *r)
{
    int napprox = 0, nread = 0;
    for (int i = 0; i < r->n; i++) {
        int kind = hf_approx_file_detect(r->paths[i]);
        if (kind < 0)
            return HF_ERR_CORRUPT;
        napprox += kind;
    }
    hf_result_t *res = napprox ? NULL : hf_calloc((size_t)(r->n > 0 ? r->n : 1), sizeof *res);
    hf_err_t e = napprox || res ? HF_OK : HF_ERR_NOMEM;
    for (; e == HF_OK && res && nread < r->n; nread++)
        e = hf_campaign_result_read(r->paths[nread], &res[nread]);
    if (e != HF_OK) {
        results_free(res, nread);
        return e;
    }
    results_free(r->res, r->nread); /* the old results give way */
    r->res = res;
    r->nread = nread;
    r->napprox = napprox;
    return HF_OK;
}

/* ------------------------------------------------------------------ run --list */

void hf_report_job_init(hf_report_job_t *r)
{
    memset(r, 0, sizeof *r);
    hf_job_init(&r->job);
    r->big = -1;
}

void hf_report_job_clear(hf_report_job_t *r)
{
    hf_job_clear(&r->job);
    free(r->plan);
    hf_report_job_init(r);
}

hf_err_t hf_report_job(const char *path, const char *out, const char *max_memory,
                       const char *node_memory, int ranks, int nodes, hf_report_job_t *to)
{
    hf_report_job_t r;
    hf_report_job_init(&r);
    hf_err_t e = hf_job_load(&r.job, path, out);
    if (e == HF_OK)
        e = hf_campaign_memory_plan(max_memory, node_memory, &r.job, ranks, nodes, &r.lim);
    long n = r.job.nentries;
    if (e == HF_OK && !(r.plan = hf_calloc((size_t)(n ? n : 1), sizeof *r.plan)))
        e = HF_ERR_NOMEM;
    if (e == HF_OK)
        e = hf_campaign_job_check(&r.job, &r.lim, r.plan);
    for (long i = 0; e == HF_OK && i < n; i++)
        if (r.plan[i].mem.total > 0 && (r.big < 0 || r.plan[i].mem.total > r.plan[r.big].mem.total))
            r.big = i;
    if (e != HF_OK) {
        hf_report_job_clear(&r);
        return e;
    }
    hf_report_job_clear(to);
    *to = r; /* the new value, swapped in */
    return HF_OK;
}

/* Entry i of the job as JSON: its settings and its plan. */
static json_t *entry_json(const hf_job_t *job, long i, const hf_campaign_plan_t *p)
{
    const hf_job_entry_t *en = job->entries + i;
    json_t *o = json_object();
    json_object_set_new(o, "index", json_integer(i));
    json_object_set_new(o, "target", json_string(en->label));
    json_object_set_new(o, "span", json_integer(en->span));
    json_object_set_new(o, "max_atoms", json_integer(en->max_atoms));
    json_object_set_new(o, "prune", json_boolean(hf_engine_prunes((hf_engine_t)en->engine)));
    /* the engine that will run (auto resolved; "none": no search), and the one asked for */
    json_object_set_new(o, "engine",
                        json_string(p->shortcut ? HF_ENGINE_NONE : hf_engine_name(p->engine)));
    json_object_set_new(o, "engine_requested",
                        json_string(hf_engine_name((hf_engine_t)en->engine)));
    json_object_set_new(o, "line", json_integer(en->line));
    /* the estimate per rank in bytes; null: certified by its bounds, no search */
    json_object_set_new(o, "memory_bytes",
                        p->mem.total > 0 ? json_integer((json_int_t)p->mem.total) : json_null());
    json_object_set_new(o, "plan", hf_report_plan_json(p));
    return o;
}

json_t *hf_report_job_json(const hf_report_job_t *r)
{
    const hf_job_t *job = &r->job;
    const hf_campaign_memory_t *lim = &r->lim;
    json_t *arr = json_array(), *o = json_object();
    for (long i = 0; i < job->nentries; i++)
        json_array_append_new(arr, entry_json(job, i, r->plan + i));
    json_object_set_new(o, "job", json_string(job->name));
    json_object_set_new(o, "output", json_string(job->output));
    json_object_set_new(o, "max_memory_bytes", json_integer((json_int_t)lim->bytes));
    json_object_set_new(o, "max_memory_source", json_string(lim->source));
    json_object_set_new(o, "ranks", json_integer(lim->ranks));
    json_object_set_new(o, "nodes", json_integer(lim->nodes));
    json_object_set_new(o, "node_ranks", json_integer(lim->node_ranks));
    json_object_set_new(o, "node_memory_bytes",
                        lim->node_bytes > 0 ? json_integer((json_int_t)lim->node_bytes)
                                            : json_null());
    json_object_set_new(o, "node_memory_source", json_string(lim->node_source));
    json_object_set_new(o, "entries", arr);
    return o;
}
