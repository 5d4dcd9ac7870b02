/* A search's shard directory as a whole: listing, the merge of every shard into the
 * finished ranges of cells and their found records (the unit map: a range is kept iff
 * it overlaps no range of its unit kept before, in shard and record order), removal,
 * and the one encoding of a found support's witness. */
#include <assert.h>
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "headfuse/stop.h"
#include "headfuse/store.h"
#include "store/store_impl.h"

HF_STORE_STOP_PHASES(HF_STOP_DEFINE)

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
    long cap = 0;
    while ((de = readdir(d))) {
        if (!is_shard_name(de->d_name))
            continue;
        if ((e = HF_GROW(paths, &cap, *n + 1)) != HF_OK)
            break;
        char **p = *paths;
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

void hf_shards_merged_init(hf_shards_merged_t *g)
{
    memset(g, 0, sizeof *g);
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

/* The ranges of cells accepted for each (m, unit), with the shard each came from: one
 * entry per unit met, found through core's hash index on (m, unit), so merging tens of
 * thousands of ranges stays linear. A unit's accepted ranges are disjoint, so sorted by
 * lo they are sorted by hi too; the first (usually the only one: a whole unit) is kept in
 * the entry itself. */
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
    unit_ranges_t *units; /* in the order met */
    long n, cap;
    hf_index_t index; /* hash of (m, unit) -> its entry */
} unit_map_t;

static void umap_init(unit_map_t *u)
{
    memset(u, 0, sizeof *u);
    hf_index_init(&u->index);
}

static void umap_clear(unit_map_t *u)
{
    for (long i = 0; i < u->n; i++)
        free(u->units[i].more);
    free(u->units);
    hf_index_clear(&u->index);
    umap_init(u);
}

static uint64_t umap_hash(int64_t m, int64_t unit)
{
    return hf_hash_mix(hf_hash_word(hf_hash_word(HF_HASH_INIT, (uint64_t)m), (uint64_t)unit));
}

typedef struct {
    const unit_map_t *u;
    int64_t m, unit;
} umap_key_t;

static int umap_eq(const void *ctx, long item)
{
    const umap_key_t *k = ctx;
    const unit_ranges_t *e = &k->u->units[item];
    return e->m == k->m && e->unit == k->unit;
}

/* The entry of (m, unit), or NULL. */
static unit_ranges_t *umap_find(const unit_map_t *u, int64_t m, int64_t unit)
{
    umap_key_t k = {u, m, unit};
    long i = hf_index_find(&u->index, umap_hash(m, unit), umap_eq, &k);
    return i < 0 ? NULL : &u->units[i];
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
    unit_ranges_t *s = umap_find(u, m, unit);
    range_t nr = {lo, hi, owner};
    if (!s) {
        HF_TRY(HF_GROW(&u->units, &u->cap, u->n + 1));
        HF_TRY(hf_index_add(&u->index, umap_hash(m, unit), u->n));
        u->units[u->n++] = (unit_ranges_t){.m = m, .unit = unit, .n = 1, .one = nr};
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
    /* the unit's accepted ranges stay disjoint and sorted: no cell is counted twice */
    assert(j == 0 || r[j - 1].hi <= lo);
    assert(j + 1 == s->n || hi <= r[j + 1].lo);
    *added = 1;
    return HF_OK;
}

/* The shard whose range of (m, unit) starting at cell lo was accepted, or -1. */
static long umap_owner(const unit_map_t *u, int64_t m, int64_t unit, int64_t lo)
{
    const unit_ranges_t *s = umap_find(u, m, unit);
    if (!s)
        return -1;
    const range_t *r = s->cap ? s->more : &s->one;
    long j = first_after(r, s->n, lo);
    return j < s->n && r[j].lo == lo ? r[j].owner : -1;
}

/* The wall seconds of the runs that wrote these shards (sorted paths): a shard is named
 * run-STAMP-PID-rRANK.h5 by the entry that made it, STAMP its run's start (time(2) on rank
 * 0), and a run lasted at least until the last write of its shards (their mtime: every
 * finished range is flushed, and a stop closes them). Shards named otherwise count 0. */
static double runs_seconds(char *const *paths, long n)
{
    double total = 0, run_end = -1;
    long long run_stamp = -1, run_pid = -1;
    for (long s = 0; s <= n; s++) {
        long long stamp = -1, pid = -1;
        int r;
        struct stat st;
        if (s < n) {
            const char *base = strrchr(paths[s], '/');
            base = base ? base + 1 : paths[s];
            if (sscanf(base, "run-%lld-%lld-r%d.h5", &stamp, &pid, &r) != 3 ||
                stat(paths[s], &st) != 0)
                continue;
        }
        if (s == n || stamp != run_stamp || pid != run_pid) { /* a run ends */
            if (run_stamp >= 0 && run_end > (double)run_stamp)
                total += run_end - (double)run_stamp;
            run_stamp = stamp;
            run_pid = pid;
            run_end = -1;
        }
        if (s < n) {
            double end = (double)st.st_mtim.tv_sec + 1e-9 * (double)st.st_mtim.tv_nsec;
            run_end = end > run_end ? end : run_end;
        }
    }
    return total;
}

hf_err_t hf_shards_merge(const char *dir, const char *fp, hf_shards_merged_t *out)
{
    hf_shards_merged_t merged, *g = &merged; /* built aside: out keeps its value on failure */
    char **paths;
    long n, ucap = 0, fcap = 0;
    unit_map_t accepted;
    umap_init(&accepted);
    hf_shards_merged_init(g);
    HF_TRY(hf_shards_list(dir, &paths, &n));
    /* one guarded child for all the shards, not one each (1024 forks took 50 s) */
    int guarded = 0;
    hf_err_t e = hf_shards_guard(paths, n, fp, &guarded);
    if (e == HF_ERR_CORRUPT)
        hf_error_prefix("corrupt shard (move it away to recompute its units)");
    for (long s = 0; s < n && e == HF_OK; s++) {
        hf_shard_data_t d;
        hf_shard_data_init(&d);
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
            e = hf_grow_arrays(&fcap, k + 1, 4,
                               (void **const[]){(void **)&g->found_m, (void **)&g->found_unit,
                                                (void **)&g->found_lo, (void **)&g->found_record},
                               (const size_t[]){sizeof *g->found_m, sizeof *g->found_unit,
                                                sizeof *g->found_lo, sizeof *g->found_record});
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
    if (e == HF_OK)
        g->runs_seconds = runs_seconds(paths, n);
    hf_shards_list_free(paths, n);
    if (e == HF_OK) {
        hf_shards_merged_clear(out);
        *out = merged;
    } else {
        hf_shards_merged_clear(g);
    }
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
        if (!strncmp(de->d_name, "run-", 4) || !strncmp(de->d_name, "witness.h5", 10)) {
            snprintf(path, sizeof path, "%s/%s", dir, de->d_name);
            unlink(path);
        }
    closedir(d);
    rmdir(dir);
}

/* ------------------------------------------------------------------ witnesses */

/* An implicit support's record: {"r":["r_0",...]}, its multiplier's integers in decimal. */
static hf_err_t found_encode_r(const hf_found_t *f, char **out)
{
    json_t *o = json_object(), *a = json_array();
    int bad = !o || !a || json_object_set_new(o, "r", a) < 0;
    if (bad)
        json_decref(a);
    for (long i = 0; !bad && i < f->nr; i++) {
        char *s = fmpz_get_str(NULL, 10, f->r + i);
        bad = !s || json_array_append_new(a, json_string(s)) < 0;
        flint_free(s);
    }
    char *text = bad ? NULL : json_dumps(o, JSON_COMPACT);
    json_decref(o);
    *out = text ? hf_strdup(text) : NULL;
    free(text);
    return *out ? HF_OK : hf_error(HF_ERR_NOMEM, "out of memory encoding a found support");
}

hf_err_t hf_found_encode(const hf_found_t *f, char **out)
{
    if (!f->keys)
        return found_encode_r(f, out);
    /* the witness's first m atoms carry the support; the compact JSON of
     * hf_head_to_json, written directly (a witness of 10^7 atoms) */
    return hf_head_to_json_text(f->witness, f->keys, f->m, out);
}

int hf_found_is_implicit(const char *text)
{
    return !strncmp(text, "{\"r\":", 5);
}

hf_err_t hf_found_decode_r(const char *text, long nr, fmpz *r)
{
    json_error_t je;
    json_t *o = json_loads(text, 0, &je), *a = o ? json_object_get(o, "r") : NULL;
    hf_err_t e = HF_OK;
    if (!json_is_array(a) || (long)json_array_size(a) != nr)
        e = hf_error(HF_ERR_CORRUPT,
                     "a found-support record: not a multiplier of %ld integers {\"r\": [...]}", nr);
    for (long i = 0; e == HF_OK && i < nr; i++) {
        const char *s = json_string_value(json_array_get(a, i));
        if (!s || !*s || strspn(s + (s[0] == '-'), "0123456789") != strlen(s + (s[0] == '-')) ||
            fmpz_set_str(r + i, s, 10) != 0)
            e = hf_error(HF_ERR_CORRUPT, "a found-support record: r[%ld] is not an integer", i);
    }
    json_decref(o);
    return e;
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
