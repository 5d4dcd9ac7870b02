/* One search entry across the ranks: shards per rank, resume from earlier shards,
 * the scheduler, and the reduction of the shards into one table row on rank 0. */
#include <dirent.h>
#include <errno.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cli/cli_common.h"
#include "cli/cli_search_run.h"
#include "headfuse/bounds.h"
#include "headfuse/sched.h"

/* ------------------------------------------------------------------ helpers */

/* FNV-1a: a fingerprint of the job, so shards of another job are never merged. Out of
 * memory is an error: a fingerprint of no target would match other jobs' shards. */
static hf_err_t fingerprint(const hf_target_t *t, const hf_search_opts_t *o, hf_engine_t engine,
                            char out[40])
{
    char *json = hf_target_to_json(t);
    if (!json)
        return HF_ERR_NOMEM;
    uint64_t h = 1469598103934665603ULL;
    char opts[160];
    /* the engine in use (auto resolved): units of different engines are different units */
    snprintf(opts, sizeof opts, "|span=%d|prune=%d|max=%ld|engine=%s|fmt=2", o->span, o->prune,
             o->max_atoms, hf_engine_name(engine));
    for (const char *s = json; *s; s++)
        h = (h ^ (unsigned char)*s) * 1099511628211ULL;
    for (const char *s = opts; *s; s++)
        h = (h ^ (unsigned char)*s) * 1099511628211ULL;
    snprintf(out, 40, "%016llx", (unsigned long long)h);
    free(json);
    return HF_OK;
}

static int is_shard_name(const char *n)
{
    size_t len = strlen(n);
    return len > 3 && !strcmp(n + len - 3, ".h5") && !strncmp(n, "run-", 4);
}

/* Paths of the shards in dir, sorted (malloc'd array of malloc'd strings). */
static hf_err_t list_shards(const char *dir, char ***paths, long *n)
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

static void free_paths(char **paths, long n)
{
    for (long i = 0; i < n; i++)
        free(paths[i]);
    free(paths);
}

static int cmp_done(const void *a, const void *b)
{
    const hf_sched_done_t *x = a, *y = b;
    if (x->m != y->m)
        return x->m < y->m ? -1 : 1;
    return x->unit < y->unit ? -1 : x->unit > y->unit;
}

/* Everything the shards of this entry hold, merged: completed units (first record of
 * each (m, unit) wins; a unit is never counted twice) and their found records. */
typedef struct {
    long nunits;
    hf_unit_record_t *units;
    long nfound;
    int64_t *found_m, *found_unit;
    char **found_record;
} merged_t;

static void merged_clear(merged_t *g)
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

/* A shard directory holds the shards of one search (one entry of a job), which the
 * fingerprint checks: every record in it is merged, whatever row it names. (The row is
 * the entry's index when the unit ran; `headfuse run --resume` moves an entry's shard
 * directory when the job gained entries before it, and its units stay valid.) */
static hf_err_t merge_shards(const char *dir, const char *fp, merged_t *g)
{
    char **paths;
    long n, ucap = 0, fcap[3] = {0, 0, 0};
    unit_map_t owners = {0};
    memset(g, 0, sizeof *g);
    HF_TRY(list_shards(dir, &paths, &n));
    hf_err_t e = HF_OK;
    for (long s = 0; s < n && e == HF_OK; s++) {
        hf_shard_data_t d;
        e = hf_shard_read(paths[s], fp, &d);
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
    free_paths(paths, n);
    if (e != HF_OK)
        merged_clear(g);
    return e;
}

/* ------------------------------------------------------------------ hooks */

typedef struct {
    hf_shard_t *shard;
    int row, rank;
} hook_ctx_t;

/* Append x to the JSON array a as a string; nonzero when out of memory. */
static int append_rational(json_t *a, const fmpq_t x)
{
    char *s = hf_rational_str(x);
    int bad = !s || json_array_append_new(a, json_string(s)) < 0;
    free(s);
    return bad;
}

/* A found support as the shard record: {"keys": [[..]..], "weights": [..], "values": [[..]..]}.
 * Every part must be there: a record with a missing or placeholder witness would be
 * saved as part of a finished unit and fail every later merge. */
static hf_err_t hook_found(void *vctx, long m, long unit, const int64_t *keys, const hf_head_t *w)
{
    hook_ctx_t *c = vctx;
    json_t *o = json_object(), *jk = json_array(), *jw = json_array(), *jv = json_array();
    int bad = 0;
    for (long i = 0; i < m; i++) {
        json_t *k = json_array(), *v = json_array();
        for (int j = 0; j < w->d; j++)
            bad |= json_array_append_new(k, json_integer(keys[i * w->d + j])) < 0;
        bad |= json_array_append_new(jk, k) < 0;
        bad |= append_rational(jw, w->weights + i);
        for (int j = 0; j < w->dv; j++)
            bad |= append_rational(v, w->values + i * w->dv + j);
        bad |= json_array_append_new(jv, v) < 0;
    }
    bad |= json_object_set_new(o, "keys", jk) < 0;
    bad |= json_object_set_new(o, "weights", jw) < 0;
    bad |= json_object_set_new(o, "values", jv) < 0;
    char *s = bad ? NULL : json_dumps(o, JSON_COMPACT | JSON_PRESERVE_ORDER);
    json_decref(o);
    if (!s)
        return hf_error(HF_ERR_NOMEM, "out of memory formatting a found support");
    hf_err_t e = hf_shard_add_found(c->shard, c->row, m, unit, s);
    free(s);
    return e;
}

static hf_err_t hook_unit_done(void *vctx, long m, long unit, long nodes, long found,
                               double seconds)
{
    hook_ctx_t *c = vctx;
    hf_unit_record_t r = {.row = c->row,
                          .rank = c->rank,
                          .m = m,
                          .unit = unit,
                          .nodes = nodes,
                          .found = found,
                          .seconds = seconds};
    return hf_shard_finish_unit(c->shard, &r);
}

/* ------------------------------------------------------------------ reduction */

typedef struct {
    int64_t *keys; /* m*d */
    json_t *rec;
} found_t;

static long g_cmp_len; /* m*d for qsort comparators */

static int cmp_keys(const int64_t *a, const int64_t *b)
{
    for (long i = 0; i < g_cmp_len; i++)
        if (a[i] != b[i])
            return a[i] < b[i] ? -1 : 1;
    return 0;
}

static int cmp_found(const void *a, const void *b)
{
    return cmp_keys(((const found_t *)a)->keys, ((const found_t *)b)->keys);
}

static int cmp_rep(const void *a, const void *b)
{
    return cmp_keys(*(int64_t *const *)a, *(int64_t *const *)b);
}

/* Parse one record into keys[m*d]; checks shapes against m, d, dv. */
static hf_err_t parse_record(const char *text, long m, int d, int dv, found_t *f)
{
    json_error_t je;
    json_t *o = json_loads(text, 0, &je);
    json_t *jk = o ? json_object_get(o, "keys") : NULL;
    json_t *jw = o ? json_object_get(o, "weights") : NULL;
    json_t *jv = o ? json_object_get(o, "values") : NULL;
    if (!json_is_array(jk) || !json_is_array(jw) || !json_is_array(jv) ||
        (long)json_array_size(jk) != m || (long)json_array_size(jw) != m ||
        (long)json_array_size(jv) != m) {
        json_decref(o);
        return hf_error(HF_ERR_CORRUPT, "a found-support record has the wrong shape");
    }
    f->keys = hf_malloc((size_t)m * d * sizeof *f->keys);
    if (!f->keys) {
        json_decref(o);
        return HF_ERR_NOMEM;
    }
    for (long i = 0; i < m; i++) {
        json_t *k = json_array_get(jk, i), *v = json_array_get(jv, i);
        if (!json_is_array(k) || (int)json_array_size(k) != d || !json_is_array(v) ||
            (int)json_array_size(v) != dv) {
            json_decref(o);
            free(f->keys);
            return hf_error(HF_ERR_CORRUPT, "a found-support record has the wrong shape");
        }
        for (int j = 0; j < d; j++)
            f->keys[i * d + j] = json_integer_value(json_array_get(k, j));
    }
    f->rec = o;
    return HF_OK;
}

/* Build the supports of size m_star (sorted canonically) and count orbits. */
static hf_err_t reduce_supports(const hf_search_t *s, const hf_target_t *t, const merged_t *g,
                                long m_star, hf_supports_t *sup, long *n_sym)
{
    long n = 0;
    found_t *f = hf_calloc((size_t)(g->nfound ? g->nfound : 1), sizeof *f);
    int64_t **reps = hf_calloc((size_t)(g->nfound ? g->nfound : 1), sizeof *reps);
    char **ws = hf_calloc((size_t)m_star, sizeof *ws);
    char **vs = hf_calloc((size_t)m_star * t->dv, sizeof *vs);
    hf_err_t e = HF_OK;
    if (!f || !reps || !ws || !vs) {
        e = HF_ERR_NOMEM;
        goto done;
    }
    for (long i = 0; i < g->nfound; i++) {
        if (g->found_m[i] != m_star)
            continue;
        HF_CHECK(e, parse_record(g->found_record[i], m_star, t->d, t->dv, f + n), done);
        n++;
    }
    g_cmp_len = m_star * t->d;
    qsort(f, (size_t)n, sizeof *f, cmp_found);
    for (long i = 0; i < n; i++) {
        if (i > 0 && !cmp_keys(f[i - 1].keys, f[i].keys)) {
            e = hf_error(HF_ERR_CORRUPT, "the same support was recorded twice");
            goto done;
        }
        json_t *jw = json_object_get(f[i].rec, "weights"),
               *jv = json_object_get(f[i].rec, "values");
        for (long a = 0; a < m_star; a++) {
            ws[a] = (char *)json_string_value(json_array_get(jw, a));
            for (int j = 0; j < t->dv; j++)
                vs[a * t->dv + j] =
                    (char *)json_string_value(json_array_get(json_array_get(jv, a), j));
            if (!ws[a]) {
                e = hf_error(HF_ERR_CORRUPT, "a found-support record has a non-string weight");
                goto done;
            }
        }
        HF_CHECK(e, hf_supports_push(sup, f[i].keys, ws, vs), done);
        reps[i] = hf_malloc((size_t)m_star * t->d * sizeof **reps);
        if (!reps[i]) {
            e = HF_ERR_NOMEM;
            goto done;
        }
        HF_CHECK(e, hf_search_orbit_rep(s, m_star, f[i].keys, reps[i]), done);
    }
    qsort(reps, (size_t)n, sizeof *reps, cmp_rep);
    *n_sym = 0;
    for (long i = 0; i < n; i++)
        if (i == 0 || cmp_keys(reps[i - 1], reps[i]))
            (*n_sym)++;
done:
    for (long i = 0; f && reps && i < g->nfound; i++) {
        free(f[i].keys);
        json_decref(f[i].rec);
        free(reps[i]);
    }
    free(f);
    free(reps);
    free(ws);
    free(vs);
    return e;
}

/* The product head as the one stored minimal support of a certified row. */
static hf_err_t product_support(const hf_target_t *t, hf_supports_t *sup)
{
    hf_head_t h;
    hf_head_init(&h, t->d, t->dv);
    hf_err_t e = hf_bounds_product_head(t, 1L << 16, &h);
    if (e == HF_ERR_LIMIT) {
        hf_head_clear(&h);
        hf_error_clear();
        return HF_OK; /* too large to store: the row keeps no explicit head */
    }
    char **ws = NULL, **vs = NULL;
    if (e == HF_OK) {
        ws = hf_calloc((size_t)h.natoms, sizeof *ws);
        vs = hf_calloc((size_t)h.natoms * t->dv, sizeof *vs);
        if (!ws || !vs)
            e = HF_ERR_NOMEM;
    }
    for (long i = 0; e == HF_OK && i < h.natoms; i++) {
        ws[i] = hf_rational_str(h.weights + i);
        for (int j = 0; j < t->dv; j++)
            vs[i * t->dv + j] = hf_rational_str(h.values + i * t->dv + j);
    }
    if (e == HF_OK) {
        hf_supports_clear(sup);
        hf_supports_init(sup, h.natoms, t->d, t->dv);
        e = hf_supports_push(sup, h.keys, ws, vs);
    }
    for (long i = 0; ws && i < h.natoms; i++)
        free(ws[i]);
    for (long i = 0; vs && i < h.natoms * t->dv; i++)
        free(vs[i]);
    free(ws);
    free(vs);
    hf_head_clear(&h);
    return e;
}

/* ------------------------------------------------------------------ the entry */

const char *cli_search_engine(const hf_search_opts_t *o)
{
    return hf_engine_name(o->prune ? o->engine : HF_ENGINE_PLAIN);
}

/* A row records the engine that ran (auto resolved). It matches the options when both
 * are plain, or the options name that engine, or they say auto and a pruning engine ran
 * (auto resolves the same way for the same target and span). */
static int engine_matches(const char *recorded, const hf_search_opts_t *o)
{
    const char *want = cli_search_engine(o);
    if (!strcmp(recorded, want))
        return 1;
    return o->prune && o->engine == HF_ENGINE_AUTO && strcmp(recorded, "plain") != 0;
}

int cli_row_matches(const hf_result_t *r, long i, const char *t_json, const hf_search_opts_t *o)
{
    const hf_row_t *w = r->rows + i;
    return w->span == o->span && w->max_atoms == o->max_atoms && engine_matches(w->engine, o) &&
           !strcmp(r->target_json[i], t_json);
}

static long box_points(int d, int span)
{
    long p = 1;
    for (int j = 0; j < d; j++) {
        if (p > (1L << 40) / (span + 1))
            return -1; /* astronomically many */
        p *= span + 1;
    }
    return p;
}

/* Progress report: the share of the run each rank spent waiting for work. */
static void report_idle(MPI_Comm comm, int rank, int size, const char *name,
                        const hf_sched_outcome_t *oc, int quiet)
{
    double *idle = rank == 0 ? malloc((size_t)size * sizeof *idle) : NULL;
    MPI_Gather(&oc->idle_fraction, 1, MPI_DOUBLE, idle, 1, MPI_DOUBLE, 0, comm);
    if (rank == 0 && idle && !quiet) {
        fprintf(stderr, "[%s] %.2fs wall; idle fraction per rank:", name, oc->seconds);
        for (int r = 0; r < size; r++)
            fprintf(stderr, " r%d %.1f%%", r, 100 * idle[r]);
        fprintf(stderr, "\n");
    }
    free(idle);
}

/* A search in words, as its shards record it (hf_shard_create's about):
 * "wd:d=3 span 2, engine layered, max_atoms none". */
static void search_about(const hf_target_t *t, const hf_search_opts_t *o, char *buf, size_t n)
{
    char max[32] = "none";
    if (o->max_atoms > 0)
        snprintf(max, sizeof max, "%ld", o->max_atoms);
    snprintf(buf, n, "%s span %d, engine %s, max_atoms %s", t->name, o->span, cli_search_engine(o),
             max);
}

/* The shards in the directory belong to another search (hf_shard_read's HF_ERR_INPUT):
 * say which this one is and the two ways on. */
static hf_err_t another_search(const cli_search_cfg_t *cfg, const char *about)
{
    char shard[2048], quoted[640];
    snprintf(shard, sizeof shard, "%s", hf_error_msg());
    snprintf(quoted, sizeof quoted, "'%s'", about);
    return hf_error(HF_ERR_INPUT,
                    "%s; this search is %s%s: rerun the command of the search that wrote the "
                    "shards with --resume to finish it, or remove %s to start this one over",
                    shard, quoted,
                    strstr(shard, quoted) ? " too, but its target differs (was its file changed?)"
                                          : "",
                    cfg->shard_dir);
}

/* Rank 0: read earlier shards into the done list; broadcast it to every rank. */
static hf_err_t load_done(MPI_Comm comm, int rank, const cli_search_cfg_t *cfg, const char *fp,
                          const char *about, hf_sched_done_t **done, long *ndone)
{
    merged_t g;
    memset(&g, 0, sizeof g);
    hf_err_t e = HF_OK;
    long n = 0;
    *done = NULL;
    if (rank == 0 && cfg->resume)
        e = merge_shards(cfg->shard_dir, fp, &g);
    if (e == HF_ERR_INPUT)
        e = another_search(cfg, about);
    if (rank == 0 && e == HF_OK)
        n = g.nunits;
    HF_TRY(cli_agree_root(comm, e));
    MPI_Bcast(&n, 1, MPI_LONG, 0, comm);
    int64_t *buf = hf_malloc((size_t)(n ? n : 1) * 4 * sizeof *buf);
    *done = hf_malloc((size_t)(n ? n : 1) * sizeof **done);
    e = (buf && *done) ? HF_OK : HF_ERR_NOMEM;
    if (e == HF_OK && rank == 0)
        for (long i = 0; i < n; i++) {
            buf[4 * i] = g.units[i].m;
            buf[4 * i + 1] = g.units[i].unit;
            buf[4 * i + 2] = g.units[i].nodes;
            buf[4 * i + 3] = g.units[i].found;
        }
    merged_clear(&g);
    e = cli_agree_all(comm, e);
    if (e == HF_OK) {
        MPI_Bcast(buf, (int)(4 * n), MPI_INT64_T, 0, comm);
        for (long i = 0; i < n; i++)
            (*done)[i] =
                (hf_sched_done_t){buf[4 * i], buf[4 * i + 1], buf[4 * i + 2], buf[4 * i + 3]};
        qsort(*done, (size_t)n, sizeof **done, cmp_done);
        *ndone = n;
    }
    free(buf);
    return e;
}

hf_err_t cli_certified_shortcut(const hf_target_t *t, const hf_search_opts_t *o,
                                const char *max_name, int *shortcut, char *lb_out, char *ub_out,
                                size_t n, char *rule_out, size_t rn)
{
    int span = o->span;
    hf_lower_t low;
    fmpz_t ub;
    hf_lower_init(&low);
    fmpz_init(ub);
    int exact = 0;
    *shortcut = 0;
    hf_err_t e = hf_bounds_lower_info(t, &low);
    fmpz *lb = low.lb;
    if (e == HF_OK) {
        snprintf(rule_out, rn, "%s", low.rule);
        e = hf_bounds_upper(t, ub, &exact);
    }
    if (e == HF_OK) {
        char *ls = fmpz_get_str(NULL, 10, lb), *us = fmpz_get_str(NULL, 10, ub);
        snprintf(lb_out, n, "%s", ls);
        snprintf(ub_out, n, "%s", us);
        flint_free(ls);
        flint_free(us);
        if (o->max_atoms > 0 && fmpz_cmp_si(lb, o->max_atoms) > 0)
            e = hf_error(HF_ERR_INPUT,
                         "%s %ld: below the lower bound LB = %s of %s (%s, valid for any "
                         "keys): no head of at most %ld atoms equals it, so nothing can be "
                         "searched; give %s %s or more, or no limit",
                         max_name, o->max_atoms, lb_out, t->name, low.rule, o->max_atoms, max_name,
                         lb_out);
        long points = box_points(t->d, span);
        *shortcut = exact && fmpz_equal(lb, ub) &&
                    (points < 0 || points > CLI_CERTIFIED_ENUM_POINTS ||
                     fmpz_cmp_si(lb, CLI_CERTIFIED_ENUM_ATOMS) > 0);
    }
    fmpz_clear(ub);
    hf_lower_clear(&low);
    return e;
}

/* Rank 0: make the shard directory; refuse to mix with an earlier run unless resuming. */
static hf_err_t prepare_shard_dir(const cli_search_cfg_t *cfg)
{
    if (mkdir(cfg->shard_dir, 0777) != 0) {
        if (errno != EEXIST)
            return hf_error(HF_ERR_IO, "%s: cannot create the shard directory: %s", cfg->shard_dir,
                            strerror(errno));
        if (!cfg->resume) {
            char **paths;
            long n;
            HF_TRY(list_shards(cfg->shard_dir, &paths, &n));
            free_paths(paths, n);
            if (n > 0)
                return hf_error(HF_ERR_INPUT,
                                "%s: holds shards of an earlier run; rerun with --resume to "
                                "continue it, or remove the directory to start over",
                                cfg->shard_dir);
        }
    }
    return HF_OK;
}

hf_err_t cli_search_entry(MPI_Comm comm, const hf_target_t *t, const hf_search_opts_t *sopts,
                          const cli_search_cfg_t *cfg, hf_row_t *row, hf_supports_t *sup,
                          hf_unit_record_t **units, long *nunits)
{
    int rank, size;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    double t0 = MPI_Wtime();
    hf_search_t *s = NULL;
    hf_shard_t *shard = NULL;
    hf_sched_done_t *done = NULL;
    long ndone = 0;
    merged_t g;
    memset(&g, 0, sizeof g);
    char fp[40] = "";
    hf_err_t fe = HF_OK;
    hf_supports_init(sup, 0, t->d, t->dv);
    memset(row, 0, sizeof *row);

    snprintf(row->name, sizeof row->name, "%s", t->name);
    row->d = t->d;
    row->span = sopts->span;
    row->m_star = row->n_min_raw = row->n_min_sym = row->group_order = -1;
    row->max_atoms = sopts->max_atoms;
    snprintf(row->engine, sizeof row->engine, "%s", cli_search_engine(sopts));

    int shortcut = 0;
    if (fe == HF_OK)
        fe = cli_certified_shortcut(t, sopts, cfg->max_name ? cfg->max_name : "max_atoms",
                                    &shortcut, row->lb, row->ub, HF_BIGINT_LEN, row->lb_rule,
                                    sizeof row->lb_rule);
    hf_err_t e = cli_agree_all(comm, fe);
    if (e != HF_OK)
        goto out;
    if (shortcut) {
        /* LB = UB: certified without building a search; keep the product head. */
        row->m_star = strlen(row->lb) > 18 ? -1 : strtol(row->lb, NULL, 10);
        snprintf(row->status, sizeof row->status, "certified");
        if (rank == 0)
            e = product_support(t, sup);
        e = cli_agree_root(comm, e);
        row->seconds = MPI_Wtime() - t0;
        goto out;
    }

    e = hf_search_create(t, sopts, &s);
    if (e == HF_OK) {
        e = fingerprint(t, sopts, hf_search_engine(s), fp);
        snprintf(row->engine, sizeof row->engine, "%s", hf_engine_name(hf_search_engine(s)));
    }
    e = cli_agree_all(comm, e);
    if (e != HF_OK)
        goto out;
    int certified = !strcmp(hf_search_lb(s), hf_search_ub(s));
    snprintf(row->lb, sizeof row->lb, "%s", hf_search_lb(s));
    snprintf(row->ub, sizeof row->ub, "%s", hf_search_ub(s));
    row->group_order = hf_search_group_order(s);

    e = cli_agree_root(comm, rank == 0 ? prepare_shard_dir(cfg) : HF_OK);
    if (e != HF_OK)
        goto out;
    char about[600];
    search_about(t, sopts, about, sizeof about);
    HF_CHECK(e, load_done(comm, rank, cfg, fp, about, &done, &ndone), out);

    /* each rank its own shard, named by rank 0's clock and pid for this run */
    long long stamp[2] = {(long long)time(NULL), (long long)getpid()};
    MPI_Bcast(stamp, 2, MPI_LONG_LONG, 0, comm);
    char path[4096];
    snprintf(path, sizeof path, "%s/run-%lld-%lld-r%03d.h5", cfg->shard_dir, stamp[0], stamp[1],
             rank);
    e = cli_agree_all(comm, hf_shard_create(path, fp, about, &shard));
    if (e != HF_OK)
        goto out;

    hook_ctx_t hc = {shard, cfg->row, rank};
    hf_sched_hooks_t hooks = {hook_found, hook_unit_done, &hc};
    hf_sched_opts_t so = {.first_m = hf_search_first_size(s),
                          .last_m = hf_search_last_size(s),
                          .done = done,
                          .ndone = ndone,
                          .quiet = cfg->quiet,
                          .progress_interval = 5.0,
                          .label = t->name};
    hf_sched_outcome_t oc;
    e = hf_sched_run(comm, s, &so, &hooks, &oc);
    hf_err_t ce = hf_shard_close(&shard);
    if (e == HF_OK)
        e = ce;
    e = cli_agree_all(comm, e);
    if (e != HF_OK)
        goto out;
    MPI_Barrier(comm); /* every shard is closed before rank 0 reads them */
    if (oc.interrupted) {
        e = hf_error(HF_ERR_INTERRUPTED,
                     "interrupted at size %ld; finished units are saved in %s; rerun the same "
                     "command with --resume to continue",
                     oc.last_m + 1, cfg->shard_dir);
        goto out;
    }

    row->m_star = oc.m_star;
    row->nodes = oc.nodes;
    row->units = oc.units;
    /* every size up to UB decided without a support: no head with keys in the span
     * represents the target (a result, with its own status: there is no m* here) */
    int none = oc.m_star < 0 && oc.last_m >= so.last_m && sopts->max_atoms == 0;
    /* a minimum proven over all integer keys (two dimensions, search.h) certifies the row
     * when the span holds it: then LB is m* itself */
    hf_certificate_t cert;
    e = cli_agree_all(comm, hf_search_certify(t, &cert));
    if (e != HF_OK)
        goto out;
    if (!certified && cert.certified && oc.m_star == cert.m_star) {
        certified = 1;
        snprintf(row->lb, sizeof row->lb, "%ld", cert.m_star);
        snprintf(row->lb_rule, sizeof row->lb_rule, "%s", cert.rule);
    }
    snprintf(row->status, sizeof row->status, "%s",
             certified        ? "certified"
             : oc.m_star >= 0 ? "exhaustive"
             : none           ? "infeasible"
                              : "open");
    if (rank == 0) {
        e = merge_shards(cfg->shard_dir, fp, &g);
        if (e == HF_OK && oc.m_star >= 0) {
            long nsym = 0;
            hf_supports_clear(sup);
            hf_supports_init(sup, oc.m_star, t->d, t->dv);
            e = reduce_supports(s, t, &g, oc.m_star, sup, &nsym);
            if (e == HF_OK && sup->n != oc.nfound)
                e = hf_error(HF_ERR_CORRUPT,
                             "%s: the shards hold %ld supports of size %ld but the search "
                             "found %ld",
                             cfg->shard_dir, sup->n, oc.m_star, oc.nfound);
            row->n_min_raw = sup->n;
            row->n_min_sym = row->group_order < 0 ? -1 : nsym;
        }
        if (e == HF_OK && oc.m_star < 0)
            row->n_min_raw = row->n_min_sym = 0;
        if (e == HF_OK && g.nunits) {
            hf_unit_record_t *u = hf_realloc(*units, (size_t)(*nunits + g.nunits) * sizeof *u);
            if (!u)
                e = HF_ERR_NOMEM;
            else {
                memcpy(u + *nunits, g.units, (size_t)g.nunits * sizeof *u);
                for (long k = 0; k < g.nunits; k++)
                    u[*nunits + k].row = cfg->row; /* a moved entry's units named its old row */
                *units = u;
                *nunits += g.nunits;
            }
        }
    }
    e = cli_agree_root(comm, e);
    row->seconds = MPI_Wtime() - t0;
    report_idle(comm, rank, size, t->name, &oc, cfg->quiet);
out:
    if (shard)
        hf_shard_close(&shard);
    merged_clear(&g);
    free(done);
    hf_search_destroy(&s);
    return e;
}
