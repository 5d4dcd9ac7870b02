/* The state of a job run (docs/jobs.md) in RESULT.h5.shards/, until the result is written:
 *   job.txt        what the job is (entries and a hash of each target), so the state of
 *                  one job is never continued by another
 *   entry-<i>/     the shards of entry i while it runs (hf_campaign_entry)
 *   entry-<i>.h5   entry i's finished row: a one-row result file, written atomically
 * and the rows: entry i's kept and read back, RESULT.h5 assembled from them, and the rows
 * of an existing RESULT.h5 that a --resume of an extended job keeps (seeds). The move of an
 * edited job's state is job_migrate.c; the state's paths and files, which both use, are
 * job_paths.c. */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "campaign/campaign_impl.h"

/* ------------------------------------------------------------------ job.txt */

/* The description of the job in job.txt: one line per entry with a hash of its target
 * (so a changed data file is noticed too). Malloc'd. */
static hf_err_t job_text(const hf_job_t *job, char **out)
{
    long cap = 256, len = 0;
    char *s = hf_malloc((size_t)cap);
    hf_err_t e = s ? HF_OK : HF_ERR_NOMEM;
    if (s)
        len = snprintf(s, (size_t)cap, "headfuse job state 1\nentries %ld\n", job->nentries);
    for (long i = 0; e == HF_OK && i < job->nentries; i++) {
        hf_target_t t;
        hf_target_init_empty(&t);
        if ((e = hf_job_entry_target(job, i, &t)) != HF_OK)
            break;
        char *json = hf_target_to_json(&t), *desc = hf_job_entry_describe(job, i);
        hf_target_clear(&t);
        char line[1024];
        int n = json && desc
                    ? snprintf(line, sizeof line, "%ld %s %016llx\n", i, desc,
                               (unsigned long long)hf_hash_str(HF_CAMPAIGN_HASH_INIT, json))
                    : -1;
        free(json);
        free(desc);
        if (n < 0) {
            e = hf_error(HF_ERR_NOMEM, "out of memory");
            break;
        }
        if ((e = HF_GROW(&s, &cap, len + n + 1)) != HF_OK)
            break;
        memcpy(s + len, line, (size_t)n + 1);
        len += n;
    }
    if (e != HF_OK) {
        free(s);
        s = NULL;
    }
    *out = s;
    return e;
}

/* job.txt: written once (atomically: concurrent array tasks may race to write it),
 * afterwards compared. A changed job's state is carried over when `adapt` (a run of the
 * whole job with --resume; array tasks of one job run concurrently and only compare). */
static hf_err_t claim_state(hf_campaign_state_t *st, const char *text, int adapt)
{
    char path[4200];
    snprintf(path, sizeof path, "%s/job.txt", st->dir);
    /* on disk before it is linked: a requeued job after a crash finds the whole text; when
     * another task was first, its job.txt stays (and is compared below) */
    if (!hf_campaign_path_exists(path))
        HF_TRY(hf_io_write_file(path, text, strlen(text), 1));
    char *old;
    HF_TRY(hf_campaign_read_file(path, &old));
    hf_err_t e = HF_OK;
    if (strcmp(old, text) && adapt)
        e = hf_campaign_migrate_state(st, old, text);
    else if (strcmp(old, text))
        e = hf_error(HF_ERR_INPUT,
                     "%s: holds the state of another job (or of this job before it was changed); "
                     "run the whole job once with --resume to carry its finished entries over "
                     "(not --entry), or remove %s to start over",
                     path, st->dir);
    free(old);
    return e;
}

/* Rank 0, before any work: make the state directory and check it against the job.
 * Without --resume, state of the selected entries is refused (never mixed silently). */
hf_err_t hf_campaign_prepare_state(hf_campaign_state_t *st, long first, long last, int resume,
                                   int whole, int *done)
{
    if (mkdir(st->dir, 0777) != 0 && errno != EEXIST)
        return hf_error(HF_ERR_IO, "%s: cannot create the state directory: %s", st->dir,
                        strerror(errno));
    char path[4200];
    snprintf(path, sizeof path, "%s/job.txt", st->dir);
    int earlier = whole && hf_campaign_path_exists(path);
    for (long i = first; i <= last; i++)
        if (hf_campaign_path_exists(hf_campaign_entry_row(st, i)) ||
            hf_campaign_path_exists(hf_campaign_entry_dir(st, i)))
            earlier = 1;
    if (earlier && !resume)
        return hf_error(HF_ERR_INPUT,
                        "%s: holds the state of an earlier run; rerun with --resume to continue "
                        "it, or remove the directory to start over",
                        st->dir);
    /* a migration cut short by a kill is finished first (whole-job runs only) */
    if (whole && resume)
        HF_TRY(hf_campaign_finish_migration(st));
    char *text;
    HF_TRY(job_text(st->job, &text));
    hf_err_t e = claim_state(st, text, whole && resume);
    free(text);
    for (long i = first; e == HF_OK && i <= last; i++)
        done[i] = hf_campaign_path_exists(hf_campaign_entry_row(st, i));
    return e;
}

/* Remove the state directory once RESULT.h5 holds everything. */
void hf_campaign_remove_state(hf_campaign_state_t *st)
{
    DIR *d = opendir(st->dir);
    if (!d)
        return;
    struct dirent *de;
    char path[4400];
    while ((de = readdir(d))) {
        size_t n = strlen(de->d_name);
        if (!strcmp(de->d_name, "job.txt") ||
            (!strncmp(de->d_name, "entry-", 6) && n > 3 && !strcmp(de->d_name + n - 3, ".h5"))) {
            snprintf(path, sizeof path, "%s/%s", st->dir, de->d_name);
            unlink(path);
        } else if (!strncmp(de->d_name, "entry-", 6)) {
            snprintf(path, sizeof path, "%s/%s", st->dir, de->d_name);
            hf_shards_remove(path);
        }
    }
    closedir(d);
    rmdir(st->dir);
}

/* ------------------------------------------------------------------ rows */

/* Read entry i's finished row into r (initialised) and check it belongs to that entry. */
static hf_err_t read_row(hf_campaign_state_t *st, long i, hf_result_t *r)
{
    const char *path = hf_campaign_entry_row(st, i);
    HF_TRY(hf_result_read(path, r));
    hf_target_t t;
    hf_target_init_empty(&t);
    HF_TRY(hf_job_entry_target(st->job, i, &t));
    char *json = hf_target_to_json(&t);
    hf_target_clear(&t);
    if (!json)
        return HF_ERR_NOMEM;
    int ok = r->nrows == 1 && r->rows[0].span == st->job->entries[i].span &&
             !strcmp(r->target_json[0], json);
    free(json);
    if (!ok)
        return hf_error(HF_ERR_CORRUPT, "%s: is not the row of entry %ld of %s", path, i,
                        st->job->path);
    return HF_OK;
}

/* Rank 0: keep entry i's finished row (atomically) and drop its shards. */
hf_err_t hf_campaign_save_row(hf_campaign_state_t *st, long i, const hf_target_t *t,
                              const hf_row_t *row, const hf_supports_t *sup,
                              hf_unit_record_t *units, long nunits, const char *cmdline,
                              const char *start, int ranks)
{
    hf_result_t r;
    hf_result_init(&r);
    char *json = hf_target_to_json(t);
    hf_err_t e = json ? hf_result_add_row(&r, row, sup, json) : HF_ERR_NOMEM;
    free(json);
    if (e == HF_OK && nunits) {
        r.units = hf_malloc((size_t)nunits * sizeof *r.units);
        if (!r.units)
            e = HF_ERR_NOMEM;
        else {
            memcpy(r.units, units, (size_t)nunits * sizeof *units);
            r.nunits = nunits;
            /* the row file has one row; its units point at it (hf_campaign_assemble renumbers) */
            for (long k = 0; k < nunits; k++)
                r.units[k].row = 0;
        }
    }
    if (e == HF_OK)
        e = hf_campaign_provenance(&r, cmdline, start, ranks);
    if (e == HF_OK)
        e = hf_result_write(hf_campaign_entry_row(st, i), &r);
    if (e == HF_OK)
        hf_shards_remove(hf_campaign_entry_dir(st, i));
    hf_result_clear(&r);
    return e;
}

/* Rank 0: RESULT.h5 from every entry's finished row, in entry order. */
hf_err_t hf_campaign_assemble(hf_campaign_state_t *st, const char *out, const char *cmdline,
                              const char *start, int ranks, hf_result_t *res)
{
    char first[32];
    long ucap = res->nunits; /* res->units holds nunits records */
    snprintf(first, sizeof first, "%s", start);
    for (long i = 0; i < st->job->nentries; i++) {
        hf_result_t r;
        hf_result_init(&r);
        hf_err_t e = read_row(st, i, &r);
        if (e == HF_OK)
            e = hf_result_add_row(res, r.rows, r.supports, r.target_json[0]);
        if (e == HF_OK && r.nunits)
            e = HF_GROW(&res->units, &ucap, res->nunits + r.nunits);
        if (e == HF_OK && r.nunits) {
            hf_unit_record_t *u = res->units + res->nunits;
            memcpy(u, r.units, (size_t)r.nunits * sizeof *u);
            for (long k = 0; k < r.nunits; k++)
                u[k].row = (int32_t)i; /* row index = entry index */
            res->nunits += r.nunits;
        }
        /* the campaign started when its first entry did (ISO times sort as text) */
        if (e == HF_OK && r.start_time && strcmp(r.start_time, first) < 0)
            snprintf(first, sizeof first, "%s", r.start_time);
        hf_result_clear(&r);
        if (e != HF_OK)
            return e;
    }
    HF_TRY(hf_campaign_provenance(res, cmdline, first, ranks));
    /* the job as it was when its rows were put together: what the rows mean */
    free(res->job_text);
    if (!(res->job_text = hf_strdup(st->job->text)))
        return HF_ERR_NOMEM;
    return hf_result_write(out, res);
}

void hf_campaign_entry_opts(const hf_job_t *job, long i, hf_search_opts_t *so)
{
    const hf_job_entry_t *je = job->entries + i;
    *so = (hf_search_opts_t){
        .span = je->span, .max_atoms = je->max_atoms, .engine = (hf_engine_t)je->engine};
}

/* The JSON text of entry i's target and its search options. */
static hf_err_t entry_search(const hf_job_t *job, long i, char **json, hf_search_opts_t *so)
{
    hf_target_t t;
    hf_target_init_empty(&t);
    HF_TRY(hf_job_entry_target(job, i, &t));
    *json = hf_target_to_json(&t);
    hf_target_clear(&t);
    hf_campaign_entry_opts(job, i, so);
    return *json ? HF_OK : HF_ERR_NOMEM;
}

void hf_campaign_seed_clear(hf_campaign_seed_t *sd)
{
    hf_result_clear(&sd->res);
    free(sd->row_of);
    sd->row_of = NULL;
}

/* Rank 0, before any state is touched: match every row of the output to an entry with
 * the same definition (hf_campaign_row_matches). A row that matches none would be dropped when
 * the output is rewritten: refused, naming it, unless --force. */
hf_err_t hf_campaign_plan_seed(hf_campaign_state_t *st, const char *out, int force,
                               hf_campaign_seed_t *sd)
{
    const hf_job_t *job = st->job;
    hf_result_init(&sd->res);
    sd->row_of = NULL;
    hf_err_t e = hf_result_read(out, &sd->res);
    if (e == HF_ERR_NOMEM || (e != HF_OK && force)) {
        hf_error_clear();
        return e == HF_ERR_NOMEM ? e : HF_OK; /* --force: it is overwritten anyway */
    }
    if (e != HF_OK) {
        char why[1024];
        snprintf(why, sizeof why, "%s", hf_error_msg());
        return hf_error(HF_ERR_INPUT,
                        "%s: exists but cannot be read as a result (%s); give --force to "
                        "overwrite it",
                        out, why);
    }
    char *used = hf_calloc((size_t)(sd->res.nrows ? sd->res.nrows : 1), 1);
    sd->row_of = hf_malloc((size_t)job->nentries * sizeof *sd->row_of);
    if (!used || !sd->row_of) {
        free(used);
        return HF_ERR_NOMEM;
    }
    for (long i = 0; e == HF_OK && i < job->nentries; i++) {
        char *json;
        hf_search_opts_t so;
        sd->row_of[i] = -1;
        if ((e = entry_search(job, i, &json, &so)) != HF_OK)
            break;
        for (long r = 0; r < sd->res.nrows && sd->row_of[i] < 0; r++)
            if (!used[r] && hf_campaign_row_matches(&sd->res, r, json, &so)) {
                sd->row_of[i] = r;
                used[r] = 1;
            }
        free(json);
    }
    for (long r = 0; e == HF_OK && !force && r < sd->res.nrows; r++) {
        if (used[r])
            continue;
        const hf_row_t *w = sd->res.rows + r;
        char more[256] = "";
        if (w->max_atoms < 0)
            snprintf(more, sizeof more,
                     " (written by an older headfuse: its settings are unknown)");
        for (long i = 0; !more[0] && i < job->nentries; i++)
            if (job->entries[i].span == w->span && !strcmp(job->entries[i].label, w->name))
                snprintf(more, sizeof more, " (entry %ld of the job has other settings)", i);
        e = hf_error(HF_ERR_INPUT,
                     "%s: row %ld (%s span %d, engine %s, max_atoms %lld) is not an entry of %s%s; "
                     "--resume would drop it: put its entry back, or give --force to overwrite %s",
                     out, r, w->name, (int)w->span, w->engine, (long long)w->max_atoms, job->path,
                     more, out);
    }
    free(used);
    return e;
}

/* Rank 0, once the state matches the job: every kept row not finished in the state yet
 * becomes its entry's finished row (with its own units and provenance). */
hf_err_t hf_campaign_apply_seed(hf_campaign_state_t *st, hf_campaign_seed_t *sd, int *done)
{
    const hf_result_t *res = &sd->res;
    for (long i = 0; sd->row_of && i < st->job->nentries; i++) {
        long r = sd->row_of[i];
        if (r < 0 || done[i])
            continue;
        hf_result_t one;
        hf_result_init(&one);
        hf_err_t e = hf_result_add_row(&one, res->rows + r, res->supports + r, res->target_json[r]);
        long ucap = 0;
        for (long k = 0; e == HF_OK && k < res->nunits; k++) {
            if (res->units[k].row != r)
                continue;
            if ((e = HF_GROW(&one.units, &ucap, one.nunits + 1)) != HF_OK)
                break;
            one.units[one.nunits] = res->units[k];
            one.units[one.nunits++].row = 0;
        }
        char **dst[] = {&one.version, &one.git_commit, &one.command_line,
                        &one.host,    &one.start_time, &one.end_time};
        char *const src[] = {res->version, res->git_commit, res->command_line,
                             res->host,    res->start_time, res->end_time};
        for (int k = 0; e == HF_OK && k < 6; k++)
            if (!(*dst[k] = hf_strdup(src[k] ? src[k] : "")))
                e = HF_ERR_NOMEM;
        one.ranks = res->ranks;
        if (e == HF_OK)
            e = hf_result_write(hf_campaign_entry_row(st, i), &one);
        hf_result_clear(&one);
        HF_TRY(e);
        done[i] = 1;
    }
    return HF_OK;
}

/* A finished RESULT.h5 that matches the job (rows in order): a resumed run after the
 * result was written has nothing left to do. */
int hf_campaign_result_complete(hf_campaign_state_t *st, const char *out)
{
    if (hf_campaign_path_exists(st->dir) || !hf_campaign_path_exists(out))
        return 0;
    hf_result_t r;
    hf_result_init(&r);
    int ok = hf_result_read(out, &r) == HF_OK && r.nrows == st->job->nentries;
    for (long i = 0; ok && i < r.nrows; i++) {
        char *json = NULL;
        hf_search_opts_t so;
        ok = entry_search(st->job, i, &json, &so) == HF_OK &&
             hf_campaign_row_matches(&r, i, json, &so);
        free(json);
    }
    hf_result_clear(&r);
    hf_error_clear();
    return ok;
}
