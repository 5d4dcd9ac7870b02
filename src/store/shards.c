/* A search's shard directory as a whole: listing, the merge of every shard into the
 * finished ranges of cells and their found records (the unit map: a range is kept iff
 * it overlaps no range of its unit kept before, in shard and record order), removal,
 * and the one encoding of a found support's witness. */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "headfuse/stop.h"
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
    if (e != HF_OK) { /* nothing half-listed for the caller to free */
        hf_shards_list_free(*paths, *n);
        *paths = NULL;
        *n = 0;
        return e;
    }
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
    free(g->found_lo);
    free(g->units);
    memset(g, 0, sizeof *g);
}

/* The ranges of cells accepted for each (m, unit), with the shard each came from:
 * open addressing on (m, unit), so merging tens of thousands of ranges stays linear.
 * A unit's accepted ranges are disjoint, so sorted by lo they are sorted by hi too; the
 * first (usually the only one: a whole unit) is kept in the slot itself. n == 0 marks
 * an empty slot. */
typedef struct {
    int64_t lo, hi;
    long owner; /* index of the shard in the sorted list */
} range_t;

typedef struct {
    int64_t m, unit;
    long n, cap; /* cap 0: the one range is `one`; else `more` holds all n */
    range_t one, *more;
} unit_ranges_t;

typedef struct {
    unit_ranges_t *slot;
    long cap, n;
} unit_map_t;

static void umap_clear(unit_map_t *u)
{
    for (long i = 0; i < u->cap; i++)
        free(u->slot[i].more);
    free(u->slot);
    memset(u, 0, sizeof *u);
}

static long umap_slot(const unit_map_t *u, int64_t m, int64_t unit)
{
    uint64_t h = ((uint64_t)m * 0x9E3779B97F4A7C15ull) ^ ((uint64_t)unit * 0xBF58476D1CE4E5B9ull);
    long i = (long)((h ^ (h >> 29)) & (uint64_t)(u->cap - 1));
    while (u->slot[i].n > 0 && (u->slot[i].m != m || u->slot[i].unit != unit))
        i = (i + 1) & (u->cap - 1);
    return i;
}

static hf_err_t umap_grow(unit_map_t *u)
{
    unit_map_t b = {0};
    b.cap = u->cap ? 2 * u->cap : 1024;
    if (!(b.slot = hf_calloc((size_t)b.cap, sizeof *b.slot)))
        return HF_ERR_NOMEM;
    for (long i = 0; i < u->cap; i++)
        if (u->slot[i].n > 0) {
            b.slot[umap_slot(&b, u->slot[i].m, u->slot[i].unit)] = u->slot[i];
            b.n++;
        }
    free(u->slot); /* the ranges moved to b */
    *u = b;
    return HF_OK;
}

/* Index of the first of the n ranges r (disjoint, sorted) that ends after cell lo. */
static long first_after(const range_t *r, long n, int64_t lo)
{
    long a = 0, b = n;
    while (a < b) {
        long mid = a + (b - a) / 2;
        if (r[mid].hi > lo)
            b = mid;
        else
            a = mid + 1;
    }
    return a;
}

/* Accept [lo, hi) of (m, unit) from shard owner iff it overlaps no range accepted for
 * that unit before; *added says which. */
static hf_err_t umap_accept(unit_map_t *u, int64_t m, int64_t unit, int64_t lo, int64_t hi,
                            long owner, int *added)
{
    *added = 0;
    if (2 * (u->n + 1) > u->cap)
        HF_TRY(umap_grow(u));
    unit_ranges_t *s = &u->slot[umap_slot(u, m, unit)];
    range_t nr = {lo, hi, owner};
    if (s->n == 0) {
        *s = (unit_ranges_t){.m = m, .unit = unit, .n = 1, .one = nr};
        u->n++;
        *added = 1;
        return HF_OK;
    }
    range_t *r = s->cap ? s->more : &s->one;
    long j = first_after(r, s->n, lo);
    if (j < s->n && r[j].lo < hi)
        return HF_OK; /* overlaps r[j]: a cell would be counted twice */
    if (s->cap == 0) {
        long cap = 0;
        range_t *more = NULL;
        HF_TRY(HF_GROW(&more, &cap, 4));
        more[0] = s->one;
        s->more = more;
        s->cap = cap;
    } else {
        HF_TRY(HF_GROW(&s->more, &s->cap, s->n + 1));
    }
    r = s->more;
    memmove(r + j + 1, r + j, (size_t)(s->n - j) * sizeof *r);
    r[j] = nr;
    s->n++;
    *added = 1;
    return HF_OK;
}

/* The shard whose range of (m, unit) starting at cell lo was accepted, or -1. */
static long umap_owner(const unit_map_t *u, int64_t m, int64_t unit, int64_t lo)
{
    if (!u->cap)
        return -1;
    const unit_ranges_t *s = &u->slot[umap_slot(u, m, unit)];
    const range_t *r = s->cap ? s->more : &s->one;
    long j = first_after(r, s->n, lo);
    return j < s->n && r[j].lo == lo ? r[j].owner : -1;
}

hf_err_t hf_shards_merge(const char *dir, const char *fp, hf_shards_merged_t *g)
{
    char **paths;
    long n, ucap = 0, fcap[4] = {0, 0, 0, 0};
    unit_map_t accepted = {0};
    memset(g, 0, sizeof *g);
    HF_TRY(hf_shards_list(dir, &paths, &n));
    /* one guarded child for all the shards, not one each (1024 forks took 50 s) */
    int guarded = 0;
    hf_err_t e = hf_shards_guard(paths, n, fp, &guarded);
    if (e == HF_ERR_CORRUPT)
        hf_error_prefix("corrupt shard (move it away to recompute its units)");
    for (long s = 0; s < n && e == HF_OK; s++) {
        hf_shard_data_t d;
        if ((e = hf_stop_check(HF_STOP_MERGE)) != HF_OK)
            break;
        e = guarded ? hf_shard_read_after_guard(paths[s], fp, &d) : hf_shard_read(paths[s], fp, &d);
        if (e != HF_OK) {
            if (e == HF_ERR_CORRUPT)
                hf_error_prefix("corrupt shard (move it away to recompute its units)");
            break;
        }
        /* keep each range that overlaps none kept before; drop the rest with their records */
        for (long i = 0; i < d.nunits && e == HF_OK; i++) {
            const hf_unit_record_t *u = &d.units[i];
            int added = 0;
            e = umap_accept(&accepted, u->m, u->unit, u->lo, u->hi, s, &added);
            if (e == HF_OK && added)
                e = HF_GROW(&g->units, &ucap, g->nunits + 1);
            if (e == HF_OK && added)
                g->units[g->nunits++] = *u;
        }
        for (long i = 0; i < d.nfound && e == HF_OK; i++) {
            if (umap_owner(&accepted, d.found_m[i], d.found_unit[i], d.found_lo[i]) != s)
                continue;
            long k = g->nfound;
            e = HF_GROW(&g->found_m, &fcap[0], k + 1);
            if (e == HF_OK)
                e = HF_GROW(&g->found_unit, &fcap[1], k + 1);
            if (e == HF_OK)
                e = HF_GROW(&g->found_lo, &fcap[2], k + 1);
            if (e == HF_OK)
                e = HF_GROW(&g->found_record, &fcap[3], k + 1);
            if (e != HF_OK)
                break;
            /* the record moves: a witness of 10^7 keys is not copied */
            char *rec = d.found_record[i];
            d.found_record[i] = NULL;
            g->found_m[k] = d.found_m[i];
            g->found_unit[k] = d.found_unit[i];
            g->found_lo[k] = d.found_lo[i];
            g->found_record[k] = rec;
            g->nfound++;
        }
        hf_shard_data_clear(&d);
    }
    umap_clear(&accepted);
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
    /* the witness's first m atoms carry the support; the compact JSON of
     * hf_head_to_json, written directly (a witness of 10^7 atoms) */
    return hf_head_to_json_text(w, keys, m, out);
}

hf_err_t hf_found_decode(const char *text, long m, hf_head_t *w)
{
    hf_err_t e = hf_head_from_json_text(w, text, m);
    if (e == HF_ERR_INPUT) {
        hf_error_prefix("a found-support record");
        e = HF_ERR_CORRUPT;
    }
    return e;
}
