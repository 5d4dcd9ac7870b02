/* Job files: parse the YAML (libyaml's document loader keeps line marks on every node),
 * check every key strictly, expand sweeps into a flat list of entries, build each
 * target once to check it, and check that the output can be created. The format is
 * documented in docs/jobs.md. */
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <yaml.h>

#include "headfuse/job.h"
#include "headfuse/engine.h"

#ifndef HF_REPO_DIR
#define HF_REPO_DIR "."
#endif

#define SWEEP_MAX 4096 /* values in one sweep */
/* a support's keys are distinct points of the box: at most HF_SEARCH_LARGE_BOX_MAX (target.h;
 * a large row's box may pass 2^32 points) */
#define MAX_ATOMS_MAX HF_SEARCH_LARGE_BOX_MAX

/* ------------------------------------------------------------------ context */

/* Canonical names of the family targets already built while loading, by family (index
 * hf_family_t), d and k (0: not given): a sweep or an alias that repeats a target
 * builds it once (a 200-byte file of aliased sweeps made the loader build 10^5
 * targets). */
typedef struct {
    char *name[HF_NFAMILIES][HF_D_MAX + 1][HF_FAMILY_K_MAX + 1];
} family_memo_t;

typedef struct {
    const char *path; /* the job file, for messages */
    yaml_document_t *doc;
    char *dir;           /* the job file's directory */
    family_memo_t *memo; /* family targets built so far */
} ctx_t;

/* Record "FILE:LINE: KEY: message" as a bad-input error. */
static hf_err_t bad(const ctx_t *c, const yaml_node_t *n, const char *key, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

static hf_err_t bad(const ctx_t *c, const yaml_node_t *n, const char *key, const char *fmt, ...)
{
    char msg[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    int line = n ? (int)n->start_mark.line + 1 : 1;
    return hf_error(HF_ERR_INPUT, "%s:%d: %s: %s", c->path, line, key, msg);
}

static const char *scalar(const yaml_node_t *n)
{
    return n && n->type == YAML_SCALAR_NODE ? (const char *)n->data.scalar.value : NULL;
}

static const char *node_kind(const yaml_node_t *n)
{
    switch (n->type) {
    case YAML_MAPPING_NODE:
        return "a mapping";
    case YAML_SEQUENCE_NODE:
        return "a list";
    default:
        return "a scalar";
    }
}

/* A mapping's pairs, checked: every key a scalar from `known`, none twice. */
static hf_err_t check_mapping(const ctx_t *c, const yaml_node_t *map, const char *where,
                              const char *const *known)
{
    if (map->type != YAML_MAPPING_NODE)
        return bad(c, map, where, "must be a mapping of KEY: VALUE, got %s", node_kind(map));
    for (yaml_node_pair_t *p = map->data.mapping.pairs.start; p < map->data.mapping.pairs.top;
         p++) {
        yaml_node_t *k = yaml_document_get_node(c->doc, p->key);
        const char *ks = scalar(k);
        if (!ks)
            return bad(c, k, where, "keys must be plain names, got %s", node_kind(k));
        int ok = 0;
        for (const char *const *q = known; *q; q++)
            ok |= !strcmp(*q, ks);
        if (!ok) {
            char list[256] = "";
            for (const char *const *q = known; *q; q++) {
                strncat(list, *q, sizeof list - strlen(list) - 1);
                if (q[1])
                    strncat(list, ", ", sizeof list - strlen(list) - 1);
            }
            return bad(c, k, where, "unknown key '%s' (known: %s)", ks, list);
        }
        for (yaml_node_pair_t *o = map->data.mapping.pairs.start; o < p; o++)
            if (!strcmp(scalar(yaml_document_get_node(c->doc, o->key)), ks))
                return bad(c, k, where, "key '%s' given twice", ks);
    }
    return HF_OK;
}

/* The value of key in a checked mapping, or NULL. */
static yaml_node_t *get(const ctx_t *c, const yaml_node_t *map, const char *key)
{
    for (yaml_node_pair_t *p = map->data.mapping.pairs.start; p < map->data.mapping.pairs.top; p++)
        if (!strcmp(scalar(yaml_document_get_node(c->doc, p->key)), key))
            return yaml_document_get_node(c->doc, p->value);
    return NULL;
}

/* ------------------------------------------------------------------ values */

static hf_err_t get_int(const ctx_t *c, const yaml_node_t *n, const char *key, long lo, long hi,
                        long *out)
{
    const char *s = scalar(n);
    if (!s)
        return bad(c, n, key, "must be an integer %ld..%ld, got %s", lo, hi, node_kind(n));
    switch (hf_parse_long(s, -1, lo, hi, out)) {
    case HF_PARSE_OK:
        return HF_OK;
    case HF_PARSE_RANGE:
        return bad(c, n, key, "must be %ld..%ld, got %s", lo, hi, s);
    default:
        return bad(c, n, key, "must be an integer %ld..%ld, got '%s'", lo, hi, s);
    }
}

static hf_err_t get_bool(const ctx_t *c, const yaml_node_t *n, const char *key, int *out)
{
    static const char *const yes[] = {"true", "True", "TRUE", NULL}, *const no[] = {"false",
                                                                                    "False",
                                                                                    "FALSE", NULL};
    const char *s = scalar(n);
    for (int i = 0; s && yes[i]; i++)
        if (!strcmp(s, yes[i]) || !strcmp(s, no[i])) {
            *out = !strcmp(s, yes[i]);
            return HF_OK;
        }
    if (!s)
        return bad(c, n, key, "must be true or false, got %s", node_kind(n));
    return bad(c, n, key, "must be true or false, got '%s'", s);
}

static hf_err_t get_string(const ctx_t *c, const yaml_node_t *n, const char *key, const char **out)
{
    *out = scalar(n);
    if (!*out)
        return bad(c, n, key, "must be a string, got %s", node_kind(n));
    if (!**out)
        return bad(c, n, key, "must not be empty");
    return HF_OK;
}

/* A sweep of integers in lo..hi: "N", "A..B" (A <= B), or a list of integers, no value
 * twice. vals (malloc'd) keeps the order given. */
typedef struct {
    long n, cap;
    long *v;
    const yaml_node_t *node; /* where it was given (for messages) */
} sweep_t;

static hf_err_t sweep_push(const ctx_t *c, sweep_t *sw, const yaml_node_t *n, const char *key,
                           long x)
{
    for (long i = 0; i < sw->n; i++)
        if (sw->v[i] == x)
            return bad(c, n, key, "value %ld given twice", x);
    if (sw->n >= SWEEP_MAX)
        return bad(c, n, key, "more than %d values", SWEEP_MAX);
    HF_TRY(HF_GROW(&sw->v, &sw->cap, sw->n + 1));
    sw->v[sw->n++] = x;
    return HF_OK;
}

static hf_err_t get_sweep(const ctx_t *c, const yaml_node_t *n, const char *key, long lo, long hi,
                          sweep_t *sw)
{
    free(sw->v);
    sw->n = sw->cap = 0;
    sw->v = NULL;
    sw->node = n;
    const char *what = "an integer %ld..%ld, a range LO..HI or a list of integers";
    char expect[128];
    snprintf(expect, sizeof expect, what, lo, hi);
    if (n->type == YAML_SEQUENCE_NODE) {
        yaml_node_item_t *it = n->data.sequence.items.start;
        if (it == n->data.sequence.items.top)
            return bad(c, n, key, "must be %s, got an empty list", expect);
        for (; it < n->data.sequence.items.top; it++) {
            yaml_node_t *x = yaml_document_get_node(c->doc, *it);
            long v;
            HF_TRY(get_int(c, x, key, lo, hi, &v));
            HF_TRY(sweep_push(c, sw, x, key, v));
        }
        return HF_OK;
    }
    const char *s = scalar(n);
    if (!s)
        return bad(c, n, key, "must be %s, got %s", expect, node_kind(n));
    const char *dots = strstr(s, "..");
    long a, b;
    if (!dots) {
        if (hf_parse_long(s, -1, LONG_MIN, LONG_MAX, &a) != HF_PARSE_OK)
            return bad(c, n, key, "must be %s, got '%s'", expect, s);
        b = a;
    } else if (hf_parse_long(s, dots - s, LONG_MIN, LONG_MAX, &a) != HF_PARSE_OK ||
               hf_parse_long(dots + 2, -1, LONG_MIN, LONG_MAX, &b) != HF_PARSE_OK) {
        return bad(c, n, key, "must be %s, got '%s'", expect, s);
    }
    if (a < lo || b > hi || a > hi || b < lo)
        return bad(c, n, key, "must be within %ld..%ld, got '%s'", lo, hi, s);
    if (a > b)
        return bad(c, n, key, "empty range '%s' (write LO..HI with LO <= HI)", s);
    if (b - a >= SWEEP_MAX)
        return bad(c, n, key, "more than %d values", SWEEP_MAX);
    for (long x = a; x <= b; x++)
        HF_TRY(sweep_push(c, sw, n, key, x));
    return HF_OK;
}

/* ------------------------------------------------------------------ paths */

static char *dir_of(const char *path)
{
    const char *slash = strrchr(path, '/');
    if (!slash)
        return hf_strdup(".");
    if (slash == path)
        return hf_strdup("/");
    char *d = hf_malloc((size_t)(slash - path) + 1);
    if (d) {
        memcpy(d, path, (size_t)(slash - path));
        d[slash - path] = '\0';
    }
    return d;
}

static char *join(const char *dir, const char *name)
{
    size_t n = strlen(dir) + strlen(name) + 2;
    char *p = hf_malloc(n);
    if (p)
        snprintf(p, n, "%s/%s", dir, name);
    return p;
}

/* A target path: absolute as is; else relative to the job file's directory, then to
 * the source tree. */
static hf_err_t resolve_target(const ctx_t *c, const yaml_node_t *n, const char *key,
                               const char *given, char **out)
{
    struct stat st;
    *out = NULL;
    if (given[0] == '/') {
        if (stat(given, &st) == 0 && S_ISREG(st.st_mode)) {
            *out = hf_strdup(given);
            return *out ? HF_OK : HF_ERR_NOMEM;
        }
        return bad(c, n, key, "target file '%s' not found", given);
    }
    const char *bases[] = {c->dir, HF_REPO_DIR};
    for (int i = 0; i < 2; i++) {
        char *p = join(bases[i], given);
        if (!p)
            return HF_ERR_NOMEM;
        if (stat(p, &st) == 0 && S_ISREG(st.st_mode)) {
            *out = p;
            return HF_OK;
        }
        free(p);
    }
    return bad(c, n, key,
               "target file '%s' not found (looked in the job file's directory %s/ and in the "
               "source tree %s/)",
               given, c->dir, HF_REPO_DIR);
}

int hf_job_output_problem(const char *out, char *why, size_t n)
{
    size_t len = strlen(out);
    struct stat st;
    if (len == 0 || out[len - 1] == '/') {
        snprintf(why, n, "'%s' must name a file", out);
        return 1;
    }
    if (stat(out, &st) == 0 && S_ISDIR(st.st_mode)) {
        snprintf(why, n, "'%s' is a directory; name a file", out);
        return 1;
    }
    char *d = dir_of(out);
    if (!d)
        return -1;
    int bad_dir = 1;
    if (stat(d, &st) != 0)
        snprintf(why, n, "cannot write '%s': directory %s: %s", out, d, strerror(errno));
    else if (!S_ISDIR(st.st_mode))
        snprintf(why, n, "cannot write '%s': %s is not a directory", out, d);
    else if (access(d, W_OK | X_OK) != 0)
        snprintf(why, n, "cannot write '%s': directory %s: %s", out, d, strerror(errno));
    else
        bad_dir = 0;
    free(d);
    return bad_dir;
}

/* ------------------------------------------------------------------ entries */

/* Settings shared by defaults and entries. has_*: given at this level. */
typedef struct {
    sweep_t span;
    long max_atoms;
    int prune;
    hf_engine_t engine;
    int has_span, has_max, has_prune, has_engine;
} settings_t;

static hf_err_t read_settings(const ctx_t *c, const yaml_node_t *map, const char *where,
                              settings_t *s)
{
    char key[96];
    yaml_node_t *n;
    if ((n = get(c, map, "span"))) {
        snprintf(key, sizeof key, "%s.span", where);
        HF_TRY(get_sweep(c, n, key, 1, HF_SPAN_MAX, &s->span));
        s->has_span = 1;
    }
    if ((n = get(c, map, "max_atoms"))) {
        snprintf(key, sizeof key, "%s.max_atoms", where);
        HF_TRY(get_int(c, n, key, 1, MAX_ATOMS_MAX, &s->max_atoms));
        s->has_max = 1;
    }
    if ((n = get(c, map, "prune"))) {
        snprintf(key, sizeof key, "%s.prune", where);
        HF_TRY(get_bool(c, n, key, &s->prune));
        s->has_prune = 1;
    }
    if ((n = get(c, map, "engine"))) {
        const char *name;
        snprintf(key, sizeof key, "%s.engine", where);
        HF_TRY(get_string(c, n, key, &name));
        if (hf_engine_parse(name, key, &s->engine) != HF_OK) {
            char names[128];
            hf_engine_names(names, sizeof names, ", ", " or ");
            return bad(c, n, key, "'%s': must be %s", name, names);
        }
        s->has_engine = 1;
        /* prune: false is the plain engine; another engine beside it is a contradiction */
        hf_engine_t joined;
        if (s->has_prune && hf_engine_with_prune(s->engine, 1, !s->prune, &joined) != 0)
            return bad(c, n, key, "%s contradicts prune: false (the plain engine)",
                       hf_engine_name(s->engine));
    }
    return HF_OK;
}

/* The engine of an entry, the one setting that the keys engine and prune both give: its
 * own engine or prune key first, then the defaults'. prune: true keeps a pruning engine
 * from the defaults; prune: false is the plain engine. */
static hf_engine_t resolve_engine(const settings_t *entry, const settings_t *defaults)
{
    const settings_t *lv[2] = {entry, defaults};
    for (int i = 0; i < 2; i++) {
        const settings_t *x = lv[i];
        if (x->has_prune && !x->prune)
            return hf_engine_reference();
        if (x->has_engine)
            return x->engine;
        if (x->has_prune) /* prune: true */
            return i == 0 && defaults->has_engine && hf_engine_prunes(defaults->engine)
                       ? defaults->engine
                       : hf_engine_default();
    }
    return hf_engine_default();
}

static hf_err_t push_entry(hf_job_t *job, const ctx_t *c, const yaml_node_t *n,
                           const hf_job_entry_t *proto, const char *family, const char *path)
{
    if (job->nentries >= HF_JOB_ENTRIES_MAX)
        return bad(c, n, "entries", "more than %d entries after expanding the sweeps",
                   HF_JOB_ENTRIES_MAX);
    /* geometric growth (the capacity is the next power of two >= 8 at or above
     * nentries): one realloc per entry made a 64512-entry sweep take minutes under
     * AddressSanitizer, which copies on every realloc */
    long n0 = job->nentries;
    if (n0 == 0 || (n0 >= 8 && (n0 & (n0 - 1)) == 0)) {
        hf_job_entry_t *grown =
            hf_realloc(job->entries, (size_t)(n0 ? 2 * n0 : 8) * sizeof *job->entries);
        if (!grown)
            return HF_ERR_NOMEM;
        job->entries = grown;
    }
    hf_job_entry_t *e = job->entries + n0;
    *e = *proto;
    e->family = family ? hf_strdup(family) : NULL;
    e->target_path = path ? hf_strdup(path) : NULL;
    e->label = hf_strdup(proto->label);
    job->nentries++; /* counted now so that clear frees what was copied */
    if ((family && !e->family) || (path && !e->target_path) || !e->label)
        return HF_ERR_NOMEM;
    return HF_OK;
}

/* Build a target to check it; messages get "FILE:LINE: KEY" in front, and any failure
 * is bad input (a job that names a target it cannot build is a bad job). */
static hf_err_t check_target(const ctx_t *c, const yaml_node_t *n, const char *key,
                             const char *family, const char *path, char **name)
{
    hf_target_t t;
    hf_target_init_empty(&t);
    hf_err_t e = family ? hf_target_from_family(&t, family) : hf_target_load_json(&t, path);
    if (e != HF_OK) {
        if (e == HF_ERR_NOMEM)
            return e;
        hf_error_prefix("%s:%d: %s", c->path, (int)n->start_mark.line + 1, key);
        return HF_ERR_INPUT;
    }
    *name = hf_strdup(t.name);
    hf_target_clear(&t);
    return *name ? HF_OK : HF_ERR_NOMEM;
}

static const char *const entry_keys[] = {"family",    "target", "d",      "k", "span",
                                         "max_atoms", "prune",  "engine", NULL};

/* Entry `index` of the job file (the mapping n) expanded into job->entries: its keys
 * checked (entry_keys), its settings read over the defaults (an entry's own span sweep,
 * or a copy of the defaults'; prune and engine resolved together), then exactly one of
 * `target` (a JSON file, resolved and loaded once to check it; one entry per span) or
 * `family` (name from the registry, d and k sweeps, every spec built once through the
 * loader's memo; one entry per d, k and span). Messages name "FILE:LINE: entries[i].KEY". */
static hf_err_t read_entry(hf_job_t *job, const ctx_t *c, const yaml_node_t *n, int index,
                           const settings_t *defaults)
{
    char where[48], key[96];
    snprintf(where, sizeof where, "entries[%d]", index);
    HF_TRY(check_mapping(c, n, where, entry_keys));

    settings_t s = *defaults; /* max_atoms inherits; the span sweep is copied below */
    s.span.v = NULL;
    s.span.n = s.span.cap = 0;
    s.has_span = 0;
    s.has_prune = s.has_engine = 0; /* resolved with the defaults' below */
    sweep_t ds = {0, 0, NULL, NULL}, ks = {0, 0, NULL, NULL};
    char *path = NULL, *name = NULL;
    hf_err_t e = HF_OK;
    if ((e = read_settings(c, n, where, &s)) != HF_OK)
        goto done;
    if (!s.has_span) {
        /* inherit the defaults' sweep (copied: this entry owns its arrays) */
        if (!defaults->has_span) {
            snprintf(key, sizeof key, "%s.span", where);
            e = bad(c, n, key, "missing (give span here or under defaults)");
            goto done;
        }
        for (long i = 0; i < defaults->span.n && e == HF_OK; i++)
            e = sweep_push(c, &s.span, n, where, defaults->span.v[i]);
        if (e != HF_OK)
            goto done;
    }

    yaml_node_t *fam = get(c, n, "family"), *tgt = get(c, n, "target"), *dn = get(c, n, "d"),
                *kn = get(c, n, "k");
    if (!fam == !tgt) {
        e = bad(c, n, where,
                "give exactly one of 'family' (a built-in family) or 'target' (a "
                "JSON target file)");
        goto done;
    }
    hf_engine_t engine = resolve_engine(&s, defaults);
    hf_job_entry_t proto = {.max_atoms = s.has_max ? s.max_atoms : 0,
                            .engine = engine,
                            .line = (int)n->start_mark.line + 1,
                            .index = index};
    if (tgt) {
        const char *given;
        snprintf(key, sizeof key, "%s.target", where);
        if ((e = get_string(c, tgt, key, &given)) != HF_OK)
            goto done;
        if (dn || kn) {
            snprintf(key, sizeof key, "%s.%s", where, dn ? "d" : "k");
            e = bad(c, dn ? dn : kn, key,
                    "applies to family entries only (a JSON target file fixes its own "
                    "dimensions)");
            goto done;
        }
        if ((e = resolve_target(c, tgt, key, given, &path)) != HF_OK)
            goto done;
        if ((e = check_target(c, tgt, key, NULL, path, &name)) != HF_OK)
            goto done;
        proto.label = name;
        for (long j = 0; j < s.span.n && e == HF_OK; j++) {
            proto.span = (int)s.span.v[j];
            e = push_entry(job, c, n, &proto, NULL, path);
        }
        goto done;
    }

    const char *fname;
    snprintf(key, sizeof key, "%s.family", where);
    if ((e = get_string(c, fam, key, &fname)) != HF_OK)
        goto done;
    int known = hf_family_find(fname, strlen(fname));
    if (known < 0) {
        e = bad(c, fam, key, "unknown family '%s' (known: %s)", fname, hf_family_list());
        goto done;
    }
    int multi = hf_family_takes_k((hf_family_t)known);
    if (!dn) {
        snprintf(key, sizeof key, "%s.d", where);
        e = bad(c, n, key, "missing (a family needs d: N, a range LO..HI or a list)");
        goto done;
    }
    snprintf(key, sizeof key, "%s.d", where);
    if ((e = get_sweep(c, dn, key, 1, HF_D_MAX, &ds)) != HF_OK)
        goto done;
    snprintf(key, sizeof key, "%s.k", where);
    if (kn && !multi) {
        e = bad(c, kn, key, "k applies only to the multi family");
        goto done;
    }
    if (kn && (e = get_sweep(c, kn, key, HF_FAMILY_K_MIN, HF_FAMILY_K_MAX, &ks)) != HF_OK)
        goto done;
    long nk = kn ? ks.n : 1;
    for (long a = 0; a < ds.n && e == HF_OK; a++)
        for (long b = 0; b < nk && e == HF_OK; b++) {
            char spec[64];
            if (kn)
                snprintf(spec, sizeof spec, "%s:d=%ld,k=%ld", fname, ds.v[a], ks.v[b]);
            else
                snprintf(spec, sizeof spec, "%s:d=%ld", fname, ds.v[a]);
            snprintf(key, sizeof key, "%s.family", where);
            free(name);
            name = NULL;
            char **memo = &c->memo->name[known][ds.v[a]][kn ? ks.v[b] : 0];
            if (*memo) {
                if (!(name = hf_strdup(*memo))) {
                    e = HF_ERR_NOMEM;
                    break;
                }
            } else {
                if ((e = check_target(c, fam, key, spec, NULL, &name)) != HF_OK)
                    break;
                if (!(*memo = hf_strdup(name))) {
                    e = HF_ERR_NOMEM;
                    break;
                }
            }
            proto.label = name;
            for (long j = 0; j < s.span.n && e == HF_OK; j++) {
                proto.span = (int)s.span.v[j];
                /* the canonical name is the spec ("multi:d=2" -> "multi:d=2,k=3") */
                e = push_entry(job, c, n, &proto, name, NULL);
            }
        }
done:
    free(name);
    free(path);
    free(ks.v);
    free(ds.v);
    free(s.span.v);
    return e;
}

/* ------------------------------------------------------------------ the file */

/* The whole file as text (kept with the result), then f rewound for the parser. A job
 * file is small; one far beyond any campaign is refused rather than read. */
static hf_err_t read_text(FILE *f, const char *path, char **out)
{
    enum { TEXT_MAX = 16 << 20 };
    hf_err_t e = hf_read_stream(f, path, TEXT_MAX, out, NULL);
    if (e == HF_ERR_LIMIT)
        return hf_error(HF_ERR_INPUT, "%s: larger than %d MiB: not a job file", path,
                        TEXT_MAX >> 20);
    if (e == HF_OK)
        rewind(f);
    return e;
}

static const char *const top_keys[] = {"name",    "description", "output", "defaults",
                                       "entries", "max_memory",  NULL};
static const char *const default_keys[] = {"span", "max_atoms", "prune", "engine", NULL};

static hf_err_t load_doc(hf_job_t *job, ctx_t *c, const char *output)
{
    yaml_node_t *root = yaml_document_get_root_node(c->doc);
    if (!root)
        return hf_error(HF_ERR_INPUT, "%s:1: the job file is empty (see docs/jobs.md)", c->path);
    HF_TRY(check_mapping(c, root, "top level", top_keys));

    yaml_node_t *n;
    const char *s;
    if ((n = get(c, root, "name"))) {
        HF_TRY(get_string(c, n, "name", &s));
        if (!(job->name = hf_strdup(s)))
            return HF_ERR_NOMEM;
    } else {
        const char *base = strrchr(c->path, '/');
        base = base ? base + 1 : c->path;
        if (!(job->name = hf_strdup(base)))
            return HF_ERR_NOMEM;
        char *dot = strrchr(job->name, '.');
        if (dot && dot != job->name)
            *dot = '\0';
    }
    if ((n = get(c, root, "description"))) {
        HF_TRY(get_string(c, n, "description", &s));
        if (!(job->description = hf_strdup(s)))
            return HF_ERR_NOMEM;
    }

    /* the memory limit per rank (docs/targets.md, "Limits"); the option and the
     * environment are the campaign's */
    if ((n = get(c, root, "max_memory"))) {
        const char *v = scalar(n);
        hf_parse_t p = v ? hf_parse_bytes(v, &job->max_memory_bytes) : HF_PARSE_SYNTAX;
        if (p != HF_PARSE_OK)
            return bad(c, n, "max_memory",
                       "must be a size in bytes such as 4G, 512M or 1500000000 (K, M, G, T: "
                       "powers of 1024), got %s%s%s",
                       v ? "'" : "", v ? v : node_kind(n), v ? "'" : "");
        if (!(job->max_memory = hf_strdup(v)))
            return HF_ERR_NOMEM;
        job->max_memory_line = (int)n->start_mark.line + 1;
    }

    settings_t defaults;
    memset(&defaults, 0, sizeof defaults);
    hf_err_t e = HF_OK;
    if ((n = get(c, root, "defaults"))) {
        e = check_mapping(c, n, "defaults", default_keys);
        if (e == HF_OK)
            e = read_settings(c, n, "defaults", &defaults);
    }
    yaml_node_t *ents = get(c, root, "entries");
    if (e == HF_OK && !ents)
        e = bad(c, root, "entries", "missing (a list of entries, see docs/jobs.md)");
    else if (e == HF_OK && ents->type != YAML_SEQUENCE_NODE)
        e = bad(c, ents, "entries", "must be a list of entries, got %s", node_kind(ents));
    else if (e == HF_OK && ents->data.sequence.items.start == ents->data.sequence.items.top)
        e = bad(c, ents, "entries", "the list is empty");
    for (yaml_node_item_t *it = ents && e == HF_OK ? ents->data.sequence.items.start : NULL;
         it && it < ents->data.sequence.items.top && e == HF_OK; it++)
        e = read_entry(job, c, yaml_document_get_node(c->doc, *it),
                       (int)(it - ents->data.sequence.items.start), &defaults);
    free(defaults.span.v);
    if (e != HF_OK)
        return e;

    /* the output: the option wins over the file; default NAME.h5 in the current dir */
    char why[1024];
    n = get(c, root, "output");
    if (output) {
        if (!(job->output = hf_strdup(output)))
            return HF_ERR_NOMEM;
        int p = hf_job_output_problem(output, why, sizeof why);
        return p < 0 ? HF_ERR_NOMEM : p ? hf_error(HF_ERR_INPUT, "--out: %s", why) : HF_OK;
    }
    if (n) {
        HF_TRY(get_string(c, n, "output", &s));
        job->output = hf_strdup(s);
    } else {
        size_t len = strlen(job->name) + 4;
        job->output = hf_malloc(len);
        if (job->output)
            snprintf(job->output, len, "%s.h5", job->name);
    }
    if (!job->output)
        return HF_ERR_NOMEM;
    int p = hf_job_output_problem(job->output, why, sizeof why);
    return p < 0 ? HF_ERR_NOMEM : p ? bad(c, n ? n : root, "output", "%s", why) : HF_OK;
}

void hf_job_init(hf_job_t *job)
{
    memset(job, 0, sizeof *job);
}

hf_err_t hf_job_load(hf_job_t *job, const char *path, const char *output)
{
    hf_job_clear(job); /* job is initialised: load replaces what it holds */
    yaml_parser_t parser;
    yaml_document_t doc, extra;
    int have_parser = 0, have_doc = 0, have_extra = 0;
    ctx_t c = {path, &doc, NULL, NULL};
    hf_err_t e = HF_OK;
    FILE *f = NULL;

    if (!(job->path = hf_strdup(path)) || !(c.dir = dir_of(path)) ||
        !(c.memo = hf_calloc(1, sizeof *c.memo))) {
        e = HF_ERR_NOMEM;
        goto done;
    }
    f = fopen(path, "rb");
    if (!f) {
        e = hf_error(errno == ENOENT ? HF_ERR_INPUT : HF_ERR_IO, "%s: cannot read the job file: %s",
                     path, strerror(errno));
        goto done;
    }
    if (!yaml_parser_initialize(&parser)) {
        e = hf_error(HF_ERR_NOMEM, "%s: cannot start the YAML parser", path);
        goto done;
    }
    have_parser = 1;
    if ((e = read_text(f, path, &job->text)) != HF_OK)
        goto done;
    yaml_parser_set_input_file(&parser, f);
    if (!yaml_parser_load(&parser, &doc)) {
        e = hf_error(HF_ERR_INPUT, "%s:%d: YAML syntax: %s%s%s", path,
                     (int)parser.problem_mark.line + 1, parser.problem ? parser.problem : "error",
                     parser.context ? " " : "", parser.context ? parser.context : "");
        goto done;
    }
    have_doc = 1;
    /* one document per file: a second one is almost certainly a mistake */
    if (!yaml_parser_load(&parser, &extra)) {
        e = hf_error(HF_ERR_INPUT, "%s:%d: YAML syntax: %s", path,
                     (int)parser.problem_mark.line + 1, parser.problem ? parser.problem : "error");
        goto done;
    }
    have_extra = 1;
    if (yaml_document_get_root_node(&extra)) {
        e = hf_error(HF_ERR_INPUT, "%s:%d: a second YAML document ('---'); a job file holds one",
                     path, (int)yaml_document_get_root_node(&extra)->start_mark.line + 1);
        goto done;
    }
    e = load_doc(job, &c, output);
done:
    if (have_extra)
        yaml_document_delete(&extra);
    if (have_doc)
        yaml_document_delete(&doc);
    if (have_parser)
        yaml_parser_delete(&parser);
    if (f)
        fclose(f);
    if (c.memo)
        for (int i = 0; i < HF_NFAMILIES; i++)
            for (int d = 0; d <= HF_D_MAX; d++)
                for (int k = 0; k <= HF_FAMILY_K_MAX; k++)
                    free(c.memo->name[i][d][k]);
    free(c.memo);
    free(c.dir);
    return e;
}

void hf_job_clear(hf_job_t *job)
{
    for (long i = 0; i < job->nentries; i++) {
        free(job->entries[i].family);
        free(job->entries[i].target_path);
        free(job->entries[i].label);
    }
    free(job->entries);
    free(job->output);
    free(job->max_memory);
    free(job->description);
    free(job->text);
    free(job->name);
    free(job->path);
    memset(job, 0, sizeof *job);
}

hf_err_t hf_job_entry_target(const hf_job_t *job, long i, hf_target_t *t)
{
    if (i < 0 || i >= job->nentries)
        return hf_error(HF_ERR_INPUT, "%s: no entry %ld (the job has %ld)", job->path, i,
                        job->nentries);
    const hf_job_entry_t *e = job->entries + i;
    hf_err_t err =
        e->family ? hf_target_from_family(t, e->family) : hf_target_load_json(t, e->target_path);
    if (err != HF_OK)
        hf_error_prefix("%s:%d: entries[%d]", job->path, e->line, e->index);
    return err;
}

char *hf_job_entry_describe(const hf_job_t *job, long i)
{
    const hf_job_entry_t *e = job->entries + i;
    char buf[512], more[64] = "";
    if (e->max_atoms)
        snprintf(more, sizeof more, " max_atoms %ld", e->max_atoms);
    /* as job.txt keeps it (a changed text would make the state of a job another job's):
     * plain is " no-prune", the default engine is not named, any other is */
    hf_engine_t engine = (hf_engine_t)e->engine;
    if (!hf_engine_prunes(engine))
        snprintf(more + strlen(more), sizeof more - strlen(more), " no-prune");
    else if (engine != hf_engine_default())
        snprintf(more + strlen(more), sizeof more - strlen(more), " engine %s",
                 hf_engine_name(engine));
    snprintf(buf, sizeof buf, "%s span %d%s", e->label, e->span, more);
    return hf_strdup(buf);
}
