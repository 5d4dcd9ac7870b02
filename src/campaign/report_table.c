/* What `headfuse table` reads (headfuse/report.h): the files of a table, missing ones
 * skipped, APPROX.h5 files told apart, results read. */
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

void hf_report_table_clear(hf_report_table_t *r)
{
    for (int i = 0; i < r->nread; i++)
        hf_result_clear(&r->res[i]);
    free(r->res);
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
        for (int i = 0; i < nread; i++)
            hf_result_clear(&res[i]);
        free(res);
        return e;
    }
    for (int i = 0; i < r->nread; i++) /* the old results give way */
        hf_result_clear(&r->res[i]);
    free(r->res);
    r->res = res;
    r->nread = nread;
    r->napprox = napprox;
    return HF_OK;
}
