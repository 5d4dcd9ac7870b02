/* A search's shard directory as a whole: listing, the merge of every shard into the
 * finished units and their found records (the unit map: the first completion of each
 * unit wins), removal, and the one encoding of a found support's witness. */
#include <dirent.h>
#include <errno.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "headfuse/store.h"
#include "store/store_impl.h"

static int is_shard_name(const char *n)
{
    size_t len = strlen(n);
    return len > 3 && !strcmp(n + len - 3, ".h5") && !strncmp(n, "run-", 4);
}

hf_err_t hf_shards_list(const char *dir, char ***paths, long *n)
{
    *paths = NULL;
    *n = 0;
    DIR *d = opendir(dir);
    if (!d) {
        if (errno == ENOENT)
            return HF_OK;
        return hf_error(HF_ERR_IO, "%s: cannot list shards: %s", dir, strerror(errno));
    }
    struct dirent *de;
    hf_err_t e = HF_OK;
    while ((de = readdir(d))) {
        if (!is_shard_name(de->d_name))
            continue;
        char **p = hf_realloc(*paths, (size_t)(*n + 1) * sizeof *p);
        if (!p) {
            e = HF_ERR_NOMEM;
            break;
        }
        *paths = p;
        size_t len = strlen(dir) + strlen(de->d_name) + 2;
        p[*n] = hf_malloc(len);
        if (!p[*n]) {
            e = HF_ERR_NOMEM;
            break;
        }
        snprintf(p[*n], len, "%s/%s", dir, de->d_name);
        (*n)++;
    }
    closedir(d);
    for (long i = 1; i < *n; i++)
        for (long j = i; j > 0 && strcmp((*paths)[j - 1], (*paths)[j]) > 0; j--) {
            char *tmp = (*paths)[j];
            (*paths)[j] = (*paths)[j - 1];
            (*paths)[j - 1] = tmp;
        }
    return e;
}

void hf_shards_list_free(char **paths, long n)
{
    for (long i = 0; i < n; i++)
        free(paths[i]);
    free(paths);
}

void hf_shards_merged_clear(hf_shards_merged_t *g)
{
    for (long i = 0; i < g->nfound; i++)
        free(g->found_record[i]);
    free(g->found_record);
    free(g->found_m);
    free(g->found_unit);
    free(g->units);
    memset(g, 0, sizeof *g);
}

/* Which shard finished each unit first: open addressing on (m, unit), so merging
 * tens of thousands of units stays linear. owner < 0 marks an empty slot. */
typedef struct {
    int64_t *m, *unit;
    long *owner;
    long cap, n;
} unit_map_t;

static void umap_clear(unit_map_t *u)
{
    free(u->m);
    free(u->unit);
    free(u->owner);
    memset(u, 0, sizeof *u);
}

static long umap_slot(const unit_map_t *u, int64_t m, int64_t unit)
{
    uint64_t h = ((uint64_t)m * 0x9E3779B97F4A7C15ull) ^ ((uint64_t)unit * 0xBF58476D1CE4E5B9ull);
    long i = (long)((h ^ (h >> 29)) & (uint64_t)(u->cap - 1));
    while (u->owner[i] >= 0 && (u->m[i] != m || u->unit[i] != unit))
        i = (i + 1) & (u->cap - 1);
    return i;
}

static hf_err_t umap_grow(unit_map_t *u)
{
    unit_map_t b = {0};
    b.cap = u->cap ? 2 * u->cap : 1024;
    b.m = hf_malloc((size_t)b.cap * sizeof *b.m);
    b.unit = hf_malloc((size_t)b.cap * sizeof *b.unit);
    b.owner = hf_malloc((size_t)b.cap * sizeof *b.owner);
    if (!b.m || !b.unit || !b.owner) {
        umap_clear(&b);
        return HF_ERR_NOMEM;
    }
    for (long i = 0; i < b.cap; i++)
        b.owner[i] = -1;
    for (long i = 0; i < u->cap; i++)
        if (u->owner[i] >= 0) {
            long j = umap_slot(&b, u->m[i], u->unit[i]);
            b.m[j] = u->m[i];
            b.unit[j] = u->unit[i];
            b.owner[j] = u->owner[i];
            b.n++;
        }
    umap_clear(u);
    *u = b;
    return HF_OK;
}

/* Record owner for (m, unit) unless a shard already claimed it; *added says which. */
static hf_err_t umap_claim(unit_map_t *u, int64_t m, int64_t unit, long owner, int *added)
{
    if (2 * (u->n + 1) > u->cap)
        HF_TRY(umap_grow(u));
    long i = umap_slot(u, m, unit);
    *added = u->owner[i] < 0;
    if (*added) {
        u->m[i] = m;
        u->unit[i] = unit;
        u->owner[i] = owner;
        u->n++;
    }
    return HF_OK;
}

static long umap_owner(const unit_map_t *u, int64_t m, int64_t unit)
{
    return u->cap ? u->owner[umap_slot(u, m, unit)] : -1;
}

/* Grow an array to hold n + 1 elements of size sz (capacity doubles). */
static hf_err_t grow(void **p, long n, long *cap, size_t sz)
{
    if (n < *cap)
        return HF_OK;
    long c = *cap ? 2 * *cap : 64;
    void *q = hf_realloc(*p, (size_t)c * sz);
    if (!q)
        return HF_ERR_NOMEM;
    *p = q;
    *cap = c;
    return HF_OK;
}

hf_err_t hf_shards_merge(const char *dir, const char *fp, hf_shards_merged_t *g)
{
    char **paths;
    long n, ucap = 0, fcap[3] = {0, 0, 0};
    unit_map_t owners = {0};
    memset(g, 0, sizeof *g);
    HF_TRY(hf_shards_list(dir, &paths, &n));
    /* one guarded child for all the shards, not one each (1024 forks took 50 s) */
    int guarded = 0;
    hf_err_t e = hf_shards_guard(paths, n, fp, &guarded);
    if (e == HF_ERR_CORRUPT)
        hf_error_prefix("corrupt shard (move it away to recompute its units)");
    for (long s = 0; s < n && e == HF_OK; s++) {
        hf_shard_data_t d;
        e = guarded ? hf_shard_read_after_guard(paths[s], fp, &d) : hf_shard_read(paths[s], fp, &d);
        if (e != HF_OK) {
            if (e == HF_ERR_CORRUPT)
                hf_error_prefix("corrupt shard (move it away to recompute its units)");
            break;
        }
        /* keep the first completion of each unit; drop the rest with their records */
        for (long i = 0; i < d.nunits && e == HF_OK; i++) {
            int added = 0;
            e = umap_claim(&owners, d.units[i].m, d.units[i].unit, s, &added);
            if (e == HF_OK && added)
                e = grow((void **)&g->units, g->nunits, &ucap, sizeof *g->units);
            if (e == HF_OK && added)
                g->units[g->nunits++] = d.units[i];
        }
        for (long i = 0; i < d.nfound && e == HF_OK; i++) {
            if (umap_owner(&owners, d.found_m[i], d.found_unit[i]) != s)
                continue;
            long k = g->nfound;
            e = grow((void **)&g->found_m, k, &fcap[0], sizeof *g->found_m);
            if (e == HF_OK)
                e = grow((void **)&g->found_unit, k, &fcap[1], sizeof *g->found_unit);
            if (e == HF_OK)
                e = grow((void **)&g->found_record, k, &fcap[2], sizeof *g->found_record);
            char *rec = e == HF_OK ? hf_strdup(d.found_record[i]) : NULL;
            if (!rec) {
                e = HF_ERR_NOMEM;
                break;
            }
            g->found_m[k] = d.found_m[i];
            g->found_unit[k] = d.found_unit[i];
            g->found_record[k] = rec;
            g->nfound++;
        }
        hf_shard_data_clear(&d);
    }
    umap_clear(&owners);
    hf_shards_list_free(paths, n);
    if (e != HF_OK)
        hf_shards_merged_clear(g);
    return e;
}

void hf_shards_remove(const char *dir)
{
    DIR *d = opendir(dir);
    if (!d)
        return;
    struct dirent *de;
    char path[4096];
    while ((de = readdir(d)))
        if (!strncmp(de->d_name, "run-", 4)) {
            snprintf(path, sizeof path, "%s/%s", dir, de->d_name);
            unlink(path);
        }
    closedir(d);
    rmdir(dir);
}

/* ------------------------------------------------------------------ witnesses */

hf_err_t hf_found_encode(long m, const int64_t *keys, const hf_head_t *w, char **out)
{
    hf_head_t h = *w;
    h.natoms = m; /* the witness's first m atoms carry the support */
    json_t *o = hf_head_to_json(&h, keys, 0);
    *out = o ? json_dumps(o, JSON_COMPACT | JSON_PRESERVE_ORDER) : NULL;
    json_decref(o);
    if (!*out)
        return hf_error(HF_ERR_NOMEM, "out of memory formatting a found support");
    return HF_OK;
}

hf_err_t hf_found_decode(const char *text, long m, hf_head_t *w)
{
    json_error_t je;
    json_t *o = json_loads(text, 0, &je);
    hf_err_t e = o ? hf_head_from_json(w, o, m) : hf_error(HF_ERR_INPUT, "not JSON");
    json_decref(o);
    if (e == HF_ERR_INPUT) {
        hf_error_prefix("a found-support record");
        e = HF_ERR_CORRUPT;
    }
    return e;
}
