/* One search entry across the ranks: shards per rank, resume from earlier shards, the
 * scheduler, and the reduction of the shards into one table row on rank 0; the
 * certified shortcut; a search written to its own RESULT.h5 (headfuse/campaign.h). */
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "headfuse/agree.h"
#include "headfuse/bounds.h"
#include "campaign/campaign_impl.h"
#include "headfuse/campaign.h"
#include "headfuse/sched.h"
#include "headfuse/stop.h"
#include "headfuse/symmetry.h"

/* ------------------------------------------------------------------ helpers */

/* FNV-1a: a fingerprint of the job, so shards of another job are never merged. Out of
 * memory is an error: a fingerprint of no target would match other jobs' shards. */
hf_err_t hf_campaign_fingerprint(const hf_target_t *t, const hf_search_opts_t *o,
                                 hf_engine_t engine, char out[40])
{
    char *json = hf_target_to_json(t);
    if (!json)
        return HF_ERR_NOMEM;
    char opts[160];
    /* the engine in use (auto resolved): units of different engines are different units;
     * prune=0 is the plain engine, as the options said before the engine said it alone */
    snprintf(opts, sizeof opts, "|span=%d|prune=%d|max=%ld|engine=%s|fmt=2", o->span,
             hf_engine_prunes(engine), o->max_atoms, hf_engine_name(engine));
    uint64_t h = hf_hash_str(hf_hash_str(HF_CAMPAIGN_HASH_INIT, json), opts);
    snprintf(out, 40, "%016llx", (unsigned long long)h);
    free(json);
    return HF_OK;
}

static int cmp_done(const void *a, const void *b)
{
    const hf_sched_done_t *x = a, *y = b;
    if (x->m != y->m)
        return x->m < y->m ? -1 : 1;
    if (x->unit != y->unit)
        return x->unit < y->unit ? -1 : 1;
    return x->lo < y->lo ? -1 : x->lo > y->lo;
}

/* ------------------------------------------------------------------ hooks */

typedef struct {
    hf_shard_t *shard;
    int row, rank;
    long ranges; /* ranges of cells this rank finished and saved in this run */
} hook_ctx_t;

/* A found support goes to the shard as its record (hf_found_encode), with the range of
 * cells it was found in (the range's completion record follows). */
static hf_err_t hook_found(void *vctx, long unit, int64_t lo, const hf_found_t *f)
{
    hook_ctx_t *c = vctx;
    char *s;
    HF_TRY(hf_found_encode(f, &s));
    return hf_shard_take_found(c->shard, c->row, f->m, unit, lo, s);
}

static hf_err_t hook_unit_done(void *vctx, long m, long unit, int64_t lo, int64_t hi, long nodes,
                               long found, double seconds)
{
    hook_ctx_t *c = vctx;
    hf_unit_record_t r = {.row = c->row,
                          .rank = c->rank,
                          .m = m,
                          .unit = unit,
                          .lo = lo,
                          .hi = hi,
                          .nodes = nodes,
                          .found = found,
                          .seconds = seconds};
    HF_TRY(hf_shard_finish_unit(c->shard, &r));
    c->ranges++;
    return HF_OK;
}

/* A stop that came in a phase of the entry: its message ("stopped on request while ...",
 * headfuse/stop.h) says also what was kept and what --resume will do. Other errors, and a
 * stop relayed from another rank, pass unchanged. */
static hf_err_t stop_said(hf_err_t e, const char *fmt, ...)
{
    if (e != HF_ERR_INTERRUPTED || hf_error_is_relayed())
        return e;
    char what[1024], tail[1024];
    snprintf(what, sizeof what, "%s", hf_error_msg());
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(tail, sizeof tail, fmt, ap);
    va_end(ap);
    return hf_error(HF_ERR_INTERRUPTED, "%s; %s", what, tail);
}

/* ------------------------------------------------------------------ reduction */

/* Compare two key lists of len entries. */
static int cmp_keys(const int64_t *a, const int64_t *b, long len)
{
    for (long i = 0; i < len; i++)
        if (a[i] != b[i])
            return a[i] < b[i] ? -1 : 1;
    return 0;
}

/* Key lists of one length, for hf_sort. */
typedef struct {
    int64_t *const *keys;
    long len;
} keylists_t;

static int cmp_keylists(const void *ctx, long a, long b)
{
    const keylists_t *k = ctx;
    return cmp_keys(k->keys[a], k->keys[b], k->len);
}

/* The n key lists in order: idx[0..n) sorted by them. */
static hf_err_t sort_keylists(int64_t *const *keys, long n, long len, long *idx)
{
    keylists_t k = {keys, len};
    for (long i = 0; i < n; i++)
        idx[i] = i;
    return hf_sort(idx, n, cmp_keylists, &k);
}

/* The supports of size m_star, sorted canonically, each decoded once from its record. */
static hf_err_t reduce_supports(const hf_target_t *t, const hf_shards_merged_t *g, long m_star,
                                hf_supports_t *sup)
{
    long n = 0, len = m_star * t->d, cap = g->nfound ? g->nfound : 1;
    hf_head_t *w = hf_calloc((size_t)cap, sizeof *w);
    int64_t **keys = hf_calloc((size_t)cap, sizeof *keys);
    long *idx = hf_malloc((size_t)cap * sizeof *idx);
    hf_err_t e = w && keys && idx ? HF_OK : HF_ERR_NOMEM;
    for (long i = 0; e == HF_OK && i < g->nfound; i++) {
        if (g->found_m[i] != m_star)
            continue;
        if ((e = hf_stop_check(HF_STOP_MERGE)) != HF_OK)
            break;
        hf_head_init(&w[n], t->d, t->dv);
        n++;
        e = hf_found_decode(g->found_record[i], m_star, &w[n - 1]);
        keys[n - 1] = w[n - 1].keys;
    }
    if (e == HF_OK)
        e = sort_keylists(keys, n, len, idx);
    for (long i = 0; e == HF_OK && i < n; i++) {
        if (i > 0 && !cmp_keys(keys[idx[i - 1]], keys[idx[i]], len)) {
            e = hf_error(HF_ERR_CORRUPT, "the same support was recorded twice");
            break;
        }
        e = hf_supports_push_head(sup, &w[idx[i]]);
    }
    for (long i = 0; w && i < n; i++)
        hf_head_clear(&w[i]);
    free(idx);
    free(keys);
    free(w);
    return e;
}

/* A large row's minimal supports, written by every rank into the shard directory's
 * witness.h5 from rank 0's merged records (large.c); rank 0 checks their number. */
static hf_err_t large_supports(MPI_Comm comm, int rank, const hf_campaign_cfg_t *cfg,
                               const hf_target_t *t, const hf_search_t *s,
                               const hf_shards_merged_t *g, long m_star, long nfound,
                               hf_supports_t *sup, hf_row_t *row)
{
    char **recs = NULL, path[4200];
    long nrec = 0;
    hf_err_t e = HF_OK;
    if (rank == 0) {
        recs = hf_malloc((size_t)(g->nfound ? g->nfound : 1) * sizeof *recs);
        e = recs ? HF_OK : HF_ERR_NOMEM;
        for (long i = 0; e == HF_OK && i < g->nfound; i++) {
            if (g->found_m[i] != m_star)
                continue;
            if (!hf_found_is_implicit(g->found_record[i]))
                e = hf_error(HF_ERR_CORRUPT,
                             "%s: a support of size %ld recorded with its keys, not by its "
                             "multiplier (another search's shard?)",
                             cfg->shard_dir, m_star);
            recs[nrec++] = g->found_record[i];
        }
    }
    e = hf_agree_root(comm, e);
    snprintf(path, sizeof path, "%s/witness.h5", cfg->shard_dir);
    hf_supports_clear(sup);
    hf_supports_init(sup, m_star, t->d, t->dv);
    if (e == HF_OK)
        e = hf_campaign_large_supports(comm, s, recs, nrec, m_star, path, sup);
    free(recs);
    if (e == HF_OK && rank == 0 && sup->n != nfound)
        e = hf_error(HF_ERR_CORRUPT,
                     "%s: the shards hold %ld supports of size %ld but the search found %ld",
                     cfg->shard_dir, sup->n, m_star, nfound);
    row->n_min_raw = sup->n;
    return hf_agree_root(comm, e);
}

/* Orbit representatives of more supports than this many key coordinates in all are
 * computed on rank 0 alone (not broadcast): every rank would hold a copy. */
#define ORBITS_DEALT_MAX (1L << 25)

/* (headfuse/campaign.h) Each rank computes the canonical representatives (the smallest
 * image) of supports i = rank, rank + size, ..., polling the stop flag, and rank 0 counts
 * the distinct ones. One support is one orbit, whatever the group: its image is not
 * computed (for a support of 10^5 keys that was the whole cost of the row). */
hf_err_t hf_campaign_count_orbits(MPI_Comm comm, const hf_group_t *grp, const hf_supports_t *sup,
                                  long *n_sym)
{
    int rank, size;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    long nml[3] = {0, 0, 0}; /* supports, atoms each, key coordinates each */
    if (rank == 0) {
        nml[0] = sup->n;
        nml[1] = sup->m;
        nml[2] = sup->m * sup->d;
    }
    MPI_Bcast(nml, 3, MPI_LONG, 0, comm);
    long n = nml[0], m = nml[1], len = nml[2];
    *n_sym = n;
    if (n <= 1)
        return HF_OK;
    if (hf_group_order(grp) < 0) {
        *n_sym = -1;
        return HF_OK;
    }
    int dealt = size > 1 && (double)n * (double)len <= (double)ORBITS_DEALT_MAX;
    if (!dealt && rank != 0)
        return hf_agree_root(comm, HF_OK); /* rank 0 counts alone */
    int step = dealt ? size : 1, me = dealt ? rank : 0;
    long mine = me < n ? (n - 1 - me) / step + 1 : 0;
    int64_t *all = rank == 0 ? sup->keys : hf_malloc((size_t)(n * len) * sizeof *all);
    int64_t *reps = hf_malloc((size_t)(mine > 0 ? mine * len : 1) * sizeof *reps);
    int64_t *got = rank == 0 ? hf_malloc((size_t)(n * len) * sizeof *got) : NULL;
    int *counts = rank == 0 ? hf_malloc((size_t)size * sizeof *counts) : NULL;
    int *displs = rank == 0 ? hf_malloc((size_t)size * sizeof *displs) : NULL;
    long *idx = rank == 0 ? hf_malloc((size_t)n * sizeof *idx) : NULL;
    int64_t **lists = rank == 0 ? hf_malloc((size_t)n * sizeof *lists) : NULL;
    hf_err_t e = all && reps && (rank != 0 || (got && counts && displs && idx && lists))
                     ? HF_OK
                     : HF_ERR_NOMEM;
    if (dealt && (e = hf_agree_all(comm, e)) == HF_OK)
        MPI_Bcast(all, (int)(n * len), MPI_INT64_T, 0, comm); /* n len <= 2^25 */
    for (long k = 0; e == HF_OK && k < mine; k++)
        if ((e = hf_stop_check(HF_STOP_ORBITS)) == HF_OK)
            e = hf_group_orbit_rep(grp, m, all + (me + k * step) * len, reps + k * len);
    if (dealt && (e = hf_agree_all(comm, e)) == HF_OK) {
        int cnt = (int)(mine * len);
        MPI_Gather(&cnt, 1, MPI_INT, counts, 1, MPI_INT, 0, comm);
        for (int r = 0; rank == 0 && r < size; r++)
            displs[r] = r == 0 ? 0 : displs[r - 1] + counts[r - 1];
        MPI_Gatherv(reps, cnt, MPI_INT64_T, got, counts, displs, MPI_INT64_T, 0, comm);
    } else if (e == HF_OK) {
        memcpy(got, reps, (size_t)(n * len) * sizeof *got);
    }
    if (e == HF_OK && rank == 0) {
        /* rank r's k-th representative is support r + k step's, gathered in rank order */
        long at = 0;
        for (int r = 0; r < step; r++)
            for (long i = r; i < n; i += step)
                lists[i] = got + (at++) * len;
        e = sort_keylists(lists, n, len, idx);
        *n_sym = 0;
        for (long i = 0; e == HF_OK && i < n; i++)
            if (i == 0 || cmp_keys(lists[idx[i - 1]], lists[idx[i]], len))
                (*n_sym)++;
    }
    if (rank != 0)
        free(all);
    free(reps);
    free(got);
    free(counts);
    free(displs);
    free(idx);
    free(lists);
    return hf_agree_root(comm, e);
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
    if (e == HF_OK) {
        hf_supports_clear(sup);
        hf_supports_init(sup, h.natoms, t->d, t->dv);
        e = hf_supports_push_head(sup, &h);
    }
    hf_head_clear(&h);
    return e;
}

/* ------------------------------------------------------------------ the entry */

int hf_campaign_row_matches(const hf_result_t *r, long i, const char *t_json,
                            const hf_search_opts_t *o)
{
    /* a row records the engine that ran (auto resolved) */
    const hf_row_t *w = r->rows + i;
    return w->span == o->span && w->max_atoms == o->max_atoms &&
           hf_engine_satisfies(o->engine, w->engine) && !strcmp(r->target_json[i], t_json);
}

/* Progress report: the share of the run each rank spent waiting for work, and how the work
 * was dealt (rounds, and ranges split off running ones by rank 0). The first ranks' shares
 * and the sum of all come to rank 0 in one reduction (every other slot is 0, so the shares
 * arrive exact): nothing to allocate, so the report cannot fail. */
static void report_idle(MPI_Comm comm, int rank, int size, const char *name,
                        const hf_sched_outcome_t *oc, int quiet)
{
    enum { SHOWN = 16 };
    double mine[SHOWN + 1] = {0}, all[SHOWN + 1];
    if (rank < SHOWN)
        mine[rank] = oc->idle_fraction;
    mine[SHOWN] = oc->idle_fraction;
    MPI_Reduce(mine, all, SHOWN + 1, MPI_DOUBLE, MPI_SUM, 0, comm);
    if (rank == 0 && !quiet) {
        fprintf(stderr, "[%s] %.2fs wall; idle fraction per rank:", name, oc->seconds);
        for (int r = 0; r < (size > SHOWN ? SHOWN : size); r++)
            fprintf(stderr, " r%d %.1f%%", r, 100 * all[r]);
        if (size > SHOWN)
            fprintf(stderr, " ... mean %.1f%%", 100 * all[SHOWN] / size);
        fprintf(stderr, "; %ld rounds dealt, %ld steals, %ld messages at rank 0\n", oc->rounds,
                oc->steals, oc->coord_messages);
    }
}

/* A search in words, as its shards record it (hf_shard_create's about):
 * "wd:d=3 span 2, engine layered, max_atoms none". */
static void search_about(const hf_target_t *t, const hf_search_opts_t *o, char *buf, size_t n)
{
    char max[32] = "none";
    if (o->max_atoms > 0)
        snprintf(max, sizeof max, "%ld", o->max_atoms);
    snprintf(buf, n, "%s span %d, engine %s, max_atoms %s", t->name, o->span,
             hf_engine_name(o->engine), max);
}

/* The shards in the directory belong to another search (hf_shard_read's HF_ERR_INPUT):
 * say which this one is and the two ways on. */
static hf_err_t another_search(const hf_campaign_cfg_t *cfg, const char *about)
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
static hf_err_t load_done(MPI_Comm comm, int rank, const hf_campaign_cfg_t *cfg, const char *fp,
                          const char *about, hf_sched_done_t **done, long *ndone,
                          double *earlier_seconds)
{
    hf_shards_merged_t g;
    memset(&g, 0, sizeof g);
    hf_err_t e = HF_OK;
    long n = 0;
    *done = NULL;
    if (rank == 0 && cfg->resume)
        e = hf_shards_merge(cfg->shard_dir, fp, &g);
    if (e == HF_ERR_INPUT)
        e = another_search(cfg, about);
    if (rank == 0 && e == HF_OK)
        n = g.nunits;
    *earlier_seconds = g.runs_seconds;
    HF_TRY(hf_agree_root(comm, e));
    MPI_Bcast(&n, 1, MPI_LONG, 0, comm);
    MPI_Bcast(earlier_seconds, 1, MPI_DOUBLE, 0, comm);
    enum { F = 6 }; /* m, unit, lo, hi, nodes, found */
    int64_t *buf = hf_malloc((size_t)(n ? n : 1) * F * sizeof *buf);
    *done = hf_malloc((size_t)(n ? n : 1) * sizeof **done);
    e = (buf && *done) ? HF_OK : HF_ERR_NOMEM;
    /* finished ranges of cells (a whole unit of an older shard is [0, HF_CELLS_ALL)): the
     * scheduler runs what they leave of each unit */
    if (e == HF_OK && rank == 0)
        for (long i = 0; i < n; i++) {
            int64_t *b = buf + F * i;
            b[0] = g.units[i].m;
            b[1] = g.units[i].unit;
            b[2] = g.units[i].lo;
            b[3] = g.units[i].hi;
            b[4] = g.units[i].nodes;
            b[5] = g.units[i].found;
        }
    hf_shards_merged_clear(&g);
    e = hf_agree_all(comm, e);
    if (e == HF_OK) {
        MPI_Bcast(buf, (int)(F * n), MPI_INT64_T, 0, comm);
        for (long i = 0; i < n; i++) {
            const int64_t *b = buf + F * i;
            (*done)[i] = (hf_sched_done_t){
                .m = b[0], .unit = b[1], .lo = b[2], .hi = b[3], .nodes = b[4], .found = b[5]};
        }
        qsort(*done, (size_t)n, sizeof **done, cmp_done);
        *ndone = n;
    }
    free(buf);
    return e;
}

hf_err_t hf_campaign_certified(const hf_target_t *t, const hf_search_opts_t *o,
                               const hf_bounds_t *b, const char *max_name, int *shortcut)
{
    const fmpz *lb = b->low.lb;
    *shortcut = 0;
    if (o->max_atoms > 0 && fmpz_cmp_si(lb, o->max_atoms) > 0) {
        char *ls = fmpz_get_str(NULL, 10, lb);
        hf_err_t e =
            hf_error(HF_ERR_INPUT,
                     "%s %ld: below the lower bound LB = %s of %s (%s, valid for any "
                     "keys): no head of at most %ld atoms equals it, so nothing can be "
                     "searched; give %s %s or more, or no limit",
                     max_name, o->max_atoms, ls, t->name, b->low.rule, o->max_atoms, max_name, ls);
        flint_free(ls);
        return e;
    }
    long points = hf_search_box_points(t->d, o->span);
    /* LB = UB is m* within the span only where a head of UB atoms fits the span: the product
     * head (otherwise the span may hold no support of that size, or none at all) */
    *shortcut = b->ub_exact && fmpz_equal(lb, b->ub) && hf_search_product_fits(t, o->span) &&
                (points < 0 || points > HF_CERTIFIED_ENUM_POINTS ||
                 fmpz_cmp_si(lb, HF_CERTIFIED_ENUM_ATOMS) > 0);
    /* widths add (docs/math.md §5.6): a span below an extent of Newt(Q) holds no support,
     * decided before P/Q is built (a pruning search's rule; plain enumerates the box) */
    int none = 0;
    if (!*shortcut && hf_engine_prunes(o->engine))
        HF_TRY(hf_search_span_holds_none(t, o->span, &none));
    if (none)
        *shortcut = 2;
    return HF_OK;
}

/* Before a cone of many unknowns is built: the plan's warning (hf_campaign_cone_warning),
 * on rank 0 unless quiet. The engine planned is the engine made (cli.plan checks it). */
static void cone_warn(int rank, const hf_campaign_cfg_t *cfg, const hf_target_t *t,
                      const hf_search_opts_t *o)
{
    hf_engine_t eng;
    long unknowns = 0;
    char why[512];
    if (rank != 0 || cfg->quiet)
        return;
    if (hf_search_engine_planned(t, o, &eng, &unknowns) != HF_OK) {
        hf_error_clear(); /* only a warning: the search itself reports any error */
        return;
    }
    if (!hf_engine_counts_unknowns(eng) || unknowns <= HF_CAMPAIGN_CONE_WARN_UNKNOWNS)
        return;
    hf_campaign_cone_warning(unknowns, why, sizeof why);
    fprintf(stderr, "[%s] warning: %s\n", t->name, why);
}

/* Which rule set the first size, when it is not LB: the within-span bound (docs/search.md,
 * "Shape rules"), so that a row's seconds spent on it are explained. Rank 0, not quiet. */
static void first_size_said(int rank, const hf_campaign_cfg_t *cfg, const hf_target_t *t,
                            const hf_search_t *s)
{
    long first = hf_search_first_size(s);
    fmpz_t lb;
    fmpz_init(lb);
    if (rank == 0 && !cfg->quiet && fmpz_set_str(lb, hf_search_lb(s), 10) == 0 &&
        fmpz_cmp_si(lb, first) < 0 && first <= hf_search_last_size(s))
        fprintf(stderr,
                "[%s] first size %ld: the within-span bound (faces of Newt(Q) in the span, "
                "docs/search.md, \"Shape rules\"), above LB %s\n",
                t->name, first, hf_search_lb(s));
    fmpz_clear(lb);
}

/* What decided a row: assembled into it in one place (row_settle). */
typedef struct {
    const hf_bounds_t *bounds;
    const char *engine;           /* the engine that ran (auto resolved), or HF_ENGINE_NONE */
    long m_star;                  /* -1: no support found (or too large to hold) */
    int m_star_is_lb;             /* m* is LB, at any size (the certified shortcut) */
    int none;                     /* every size up to UB decided without a support */
    const hf_certificate_t *cert; /* a minimum proven over all keys, or NULL */
} row_outcome_t;

/* The row's LB, UB, rule, engine, m* and status from its outcome. The status is
 * certified when LB = UB (as numbers), or when a minimum proven over all keys is the m*
 * found (then LB is m* and the rule the certificate's); else exhaustive (m* found),
 * infeasible (no support up to UB) or open (stopped at max_atoms). */
static void row_settle(hf_row_t *row, const row_outcome_t *o)
{
    const hf_bounds_t *b = o->bounds;
    char *ls = fmpz_get_str(NULL, 10, b->low.lb), *us = fmpz_get_str(NULL, 10, b->ub);
    snprintf(row->lb, sizeof row->lb, "%s", ls);
    snprintf(row->ub, sizeof row->ub, "%s", us);
    flint_free(us);
    flint_free(ls);
    snprintf(row->lb_rule, sizeof row->lb_rule, "%s", b->low.rule);
    snprintf(row->engine, sizeof row->engine, "%s", o->engine);
    row->m_star = o->m_star;
    /* LB = UB certifies m* where the span holds a support of that size (found, or the
     * product head's: the shortcut), not a row whose span holds none */
    int certified = fmpz_equal(b->low.lb, b->ub) &&
                    (o->m_star_is_lb || (o->m_star >= 0 && fmpz_equal_si(b->low.lb, o->m_star)));
    if (!certified && o->cert && o->cert->certified && o->m_star == o->cert->m_star) {
        certified = 1;
        snprintf(row->lb, sizeof row->lb, "%ld", o->cert->m_star);
        snprintf(row->lb_rule, sizeof row->lb_rule, "%s", o->cert->rule);
    }
    snprintf(row->status, sizeof row->status, "%s",
             certified        ? "certified"
             : o->m_star >= 0 ? "exhaustive"
             : o->none        ? "infeasible"
                              : "open");
    /* m* exactly, past 64 bits too (decimals: cannot fail) */
    char m[32];
    snprintf(m, sizeof m, "%ld", o->m_star);
    (void)hf_row_set_m_star(row, o->m_star_is_lb ? row->lb : m);
}

/* Rank 0: make the shard directory; refuse to mix with an earlier run unless resuming. */
static hf_err_t prepare_shard_dir(const hf_campaign_cfg_t *cfg)
{
    if (mkdir(cfg->shard_dir, 0777) != 0) {
        if (errno != EEXIST)
            return hf_error(HF_ERR_IO, "%s: cannot create the shard directory: %s", cfg->shard_dir,
                            strerror(errno));
        if (!cfg->resume) {
            char **paths;
            long n;
            HF_TRY(hf_shards_list(cfg->shard_dir, &paths, &n));
            hf_shards_list_free(paths, n);
            if (n > 0)
                return hf_error(HF_ERR_INPUT,
                                "%s: holds shards of an earlier run; rerun with --resume to "
                                "continue it, or remove the directory to start over",
                                cfg->shard_dir);
        }
    }
    return HF_OK;
}

static hf_err_t make_group(void *ctx)
{
    return hf_search_make_group(ctx);
}

/* The group from the rank that made it (status: what making it returned there) to every
 * rank: *grp is the search's on that rank, else *own, unpacked from its words. Collective. */
static hf_err_t share_group(MPI_Comm comm, int owner, hf_search_t *s, hf_err_t status,
                            const hf_group_t **grp, hf_group_t **own)
{
    int rank, size;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    HF_TRY(hf_agree_all(comm, rank == owner ? status : HF_OK));
    if (size == 1) {
        *grp = hf_search_group(s);
        return HF_OK;
    }
    int64_t *w = NULL;
    long n = 0;
    hf_err_t e = rank == owner ? hf_group_pack(hf_search_group(s), &w, &n) : HF_OK;
    int64_t len = e == HF_OK ? n : -1;
    MPI_Bcast(&len, 1, MPI_INT64_T, owner, comm);
    if (len < 0)
        return hf_agree_all(comm, e); /* the owner's error (its own message) wins */
    if (rank != owner && !(w = hf_malloc((size_t)(len ? len : 1) * sizeof *w)))
        e = HF_ERR_NOMEM;
    e = hf_agree_all(comm, e);
    if (e == HF_OK)
        MPI_Bcast(w, (int)len, MPI_INT64_T, owner, comm);
    if (e == HF_OK && rank != owner)
        e = hf_group_unpack(w, (long)len, own);
    free(w);
    *grp = rank == owner ? hf_search_group(s) : *own;
    return hf_agree_all(comm, e);
}

hf_err_t hf_campaign_entry(MPI_Comm comm, const hf_target_t *t, const hf_search_opts_t *sopts,
                           const hf_campaign_cfg_t *cfg, hf_row_t *row, hf_supports_t *sup,
                           hf_unit_record_t **units, long *nunits)
{
    int rank, size;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    double t0 = MPI_Wtime();
    long long started = (long long)time(NULL); /* the run's stamp: its shards' names */
    hf_search_t *s = NULL;
    hf_shard_t *shard = NULL;
    hf_sched_done_t *done = NULL;
    long ndone = 0;
    hf_shards_merged_t g;
    memset(&g, 0, sizeof g);
    const hf_group_t *grp = NULL; /* the search's, or grp_own: the owner's, received */
    hf_group_t *grp_own = NULL;
    char fp[40] = "";
    hf_bounds_t own; /* the bounds, when the caller has none */
    hf_bounds_init(&own);
    const hf_bounds_t *b = cfg->bounds ? cfg->bounds : &own;
    hf_supports_init(sup, 0, t->d, t->dv);
    memset(row, 0, sizeof *row);
    snprintf(row->name, sizeof row->name, "%s", t->name);
    row->d = t->d;
    row->span = sopts->span;
    row->m_star = row->n_min_raw = row->n_min_sym = row->group_order = -1;
    row->max_atoms = sopts->max_atoms;
    row_outcome_t ro = {.bounds = b, .engine = hf_engine_name(sopts->engine), .m_star = -1};

    /* the bounds, once: for the shortcut, the search's sizes and the row */
    int shortcut = 0;
    hf_campaign_memory_t lim; /* the caller's limit, else this machine's */
    hf_err_t fe = cfg->memory
                      ? HF_OK
                      : hf_campaign_memory_limit(NULL, NULL, hf_campaign_node_ranks(comm), &lim);
    lim.ranks = size;
    if (fe == HF_OK && !cfg->bounds)
        fe = hf_bounds_compute(t, &own);
    if (fe == HF_OK)
        fe = hf_campaign_certified(t, sopts, b, cfg->max_name ? cfg->max_name : "max_atoms",
                                   &shortcut);
    if (fe == HF_OK) /* the box and the memory estimate, before anything is built */
        fe = hf_campaign_check_row(t, sopts, b, shortcut, cfg->memory ? cfg->memory : &lim, NULL);
    hf_err_t e = stop_said(hf_agree_all(comm, fe),
                           "the search was not started, nothing new is saved: rerun the same "
                           "command (with --resume if an earlier run saved units)");
    if (e != HF_OK)
        goto out;
    if (shortcut == 2) {
        /* no support fits the span: infeasible without building anything */
        ro.engine = HF_ENGINE_NONE;
        ro.none = 1;
        row_settle(row, &ro);
        row->n_min_raw = row->n_min_sym = 0;
        row->seconds = MPI_Wtime() - t0;
        goto out;
    }
    if (shortcut) {
        /* LB = UB: certified without building a search; keep the product head. m* is
         * LB: a number below 2^63, and exactly in the row's decimal at any size */
        ro.m_star = fmpz_fits_si(b->low.lb) ? fmpz_get_si(b->low.lb) : -1;
        ro.engine = HF_ENGINE_NONE;
        ro.m_star_is_lb = 1;
        row_settle(row, &ro);
        if (rank == 0)
            e = product_support(t, sup);
        e = hf_agree_root(comm, e);
        row->seconds = MPI_Wtime() - t0;
        goto out;
    }

    hf_search_opts_t sbo = *sopts;
    sbo.bounds = b;
    cone_warn(rank, cfg, t, &sbo);
    e = hf_search_create(t, &sbo, &s);
    if (e == HF_OK) {
        e = hf_campaign_fingerprint(t, sopts, hf_search_engine(s), fp);
        ro.engine = hf_engine_name(hf_search_engine(s));
    }
    e = stop_said(hf_agree_all(comm, e),
                  "the search was not started, nothing new is saved: rerun the same command "
                  "(with --resume if an earlier run saved units)");
    if (e != HF_OK)
        goto out;
    first_size_said(rank, cfg, t, s);
    e = hf_agree_root(comm, rank == 0 ? prepare_shard_dir(cfg) : HF_OK);
    if (e != HF_OK)
        goto out;
    char about[600];
    search_about(t, sopts, about, sizeof about);
    /* a resumed row's seconds are those of all its runs (README, "seconds") */
    double earlier = 0;
    HF_CHECK(e, load_done(comm, rank, cfg, fp, about, &done, &ndone, &earlier), out);
    t0 -= earlier;

    /* each rank its own shard, named by rank 0's clock and pid for this run; a later
     * entry of the same process in the same second takes the next second */
    static long long last_stamp;
    long long now = started;
    if (rank == 0)
        last_stamp = now = now > last_stamp ? now : last_stamp + 1;
    long long stamp[2] = {now, (long long)getpid()};
    MPI_Bcast(stamp, 2, MPI_LONG_LONG, 0, comm);
    char path[4096];
    snprintf(path, sizeof path, "%s/run-%lld-%lld-r%03d.h5", cfg->shard_dir, stamp[0], stamp[1],
             rank);
    e = hf_agree_all(comm, hf_shard_create(path, fp, about, &shard));
    if (e != HF_OK)
        goto out;

    hook_ctx_t hc = {shard, cfg->row, rank, 0};
    /* the symmetry group, which only the row needs: made by a rank while it would wait */
    hf_sched_idle_t idle = {.run = make_group, .ctx = s};
    hf_sched_hooks_t hooks = {hook_found, hook_unit_done, &hc};
    hf_sched_opts_t so = {.first_m = hf_search_first_size(s),
                          .last_m = hf_search_last_size(s),
                          .done = done,
                          .ndone = ndone,
                          .quiet = cfg->quiet,
                          .progress_interval = 5.0,
                          .label = t->name,
                          .idle = size > 1 ? &idle : NULL};
    hf_sched_outcome_t oc;
    e = hf_sched_run(comm, s, &so, &hooks, &oc);
    hf_err_t ce = hf_shard_destroy(&shard);
    if (e == HF_OK)
        e = ce;
    e = hf_agree_all(comm, e);
    if (e != HF_OK)
        goto out;
    MPI_Barrier(comm); /* every shard is closed before rank 0 reads them */
    /* the group's rank: the lowest that ran the idle task, else the last (while rank 0 merges) */
    int owner = idle.ran ? rank : size;
    MPI_Allreduce(MPI_IN_PLACE, &owner, 1, MPI_INT, MPI_MIN, comm);
    owner = owner == size ? size - 1 : owner;
    if (oc.interrupted) {
        /* say truthfully what is kept: ranges of cells of this run and of earlier ones */
        long mine = hc.ranges, now = 0;
        MPI_Allreduce(&mine, &now, 1, MPI_LONG, MPI_SUM, comm);
        if (oc.last_m < so.first_m && now == 0)
            e = hf_error(HF_ERR_INTERRUPTED,
                         "interrupted while preparing the search (before its first size): "
                         "nothing was finished in this run%s; rerun the same command with "
                         "--resume (the preparation is done again)",
                         ndone ? " (what earlier runs saved stays in the shards)" : "");
        else
            e = hf_error(HF_ERR_INTERRUPTED,
                         "interrupted at size %ld: %ld ranges of cells finished in this run "
                         "and %ld in earlier runs are saved in %s; rerun the same command with "
                         "--resume to continue",
                         oc.last_m + 1, now, ndone, cfg->shard_dir);
        goto out;
    }

    row->nodes = oc.nodes;
    row->units = oc.units;
    ro.m_star = oc.m_star;
    /* every size up to UB decided without a support: no head with keys in the span
     * represents the target (a result, with its own status: there is no m* here) */
    ro.none = oc.m_star < 0 && oc.last_m >= so.last_m && sopts->max_atoms == 0;
    /* a minimum proven over all integer keys (two dimensions, search.h) certifies the row
     * when the span holds it: then LB is m* itself */
    hf_certificate_t cert;
    e = stop_said(hf_agree_all(comm, hf_search_certify(t, &cert)),
                  "every unit of the search is finished and saved in %s: rerun the same "
                  "command with --resume to write the table (the search is prepared again, "
                  "no unit is run again)",
                  cfg->shard_dir);
    if (e != HF_OK)
        goto out;
    ro.cert = &cert;
    row_settle(row, &ro);
    if (rank == owner && rank != 0) /* while rank 0 merges */
        hf_sched_idle_run(&idle);
    int large = hf_search_is_large(s);
    if (rank == 0) {
        e = hf_shards_merge(cfg->shard_dir, fp, &g);
        if (e == HF_OK && oc.m_star >= 0 && !large) {
            hf_supports_clear(sup);
            hf_supports_init(sup, oc.m_star, t->d, t->dv);
            e = reduce_supports(t, &g, oc.m_star, sup);
            if (e == HF_OK && sup->n != oc.nfound)
                e = hf_error(HF_ERR_CORRUPT,
                             "%s: the shards hold %ld supports of size %ld but the search "
                             "found %ld",
                             cfg->shard_dir, sup->n, oc.m_star, oc.nfound);
            row->n_min_raw = sup->n;
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
    e = hf_agree_root(comm, e);
    if (e == HF_OK && large && oc.m_star >= 0)
        e = large_supports(comm, rank, cfg, t, s, &g, oc.m_star, oc.nfound, sup, row);
    if (rank == owner)
        hf_sched_idle_run(&idle);
    e = e != HF_OK ? e : share_group(comm, owner, s, idle.status, &grp, &grp_own);
    if (e == HF_OK) {
        row->group_order = hf_group_order(grp);
        const char *why = hf_group_unknown_reason(grp);
        snprintf(row->group_note, sizeof row->group_note, "%s", why ? why : "");
    }
    if (e == HF_OK && oc.m_star >= 0) {
        long nsym = -1;
        e = hf_campaign_count_orbits(comm, grp, sup, &nsym);
        row->n_min_sym = nsym;
    }
    e = stop_said(e,
                  "every unit of the search is finished and saved in %s: rerun the same "
                  "command with --resume to write the table (the search is prepared again, "
                  "no unit is run again)",
                  cfg->shard_dir);
    row->seconds = MPI_Wtime() - t0;
    report_idle(comm, rank, size, t->name, &oc, cfg->quiet);
out:
    if (shard)
        hf_shard_destroy(&shard);
    hf_group_destroy(&grp_own);
    hf_shards_merged_clear(&g);
    free(done);
    hf_search_destroy(&s);
    hf_bounds_clear(&own);
    return e;
}

/* ------------------------------------------------------------------ result files */

void hf_campaign_iso_time(char *buf, size_t n)
{
    time_t now = time(NULL);
    struct tm tm;
    gmtime_r(&now, &tm);
    strftime(buf, n, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

char *hf_campaign_command_line(int argc, char **argv)
{
    size_t len = 16;
    for (int i = 0; i < argc; i++)
        len += strlen(argv[i]) + 3;
    char *s = hf_malloc(len);
    if (!s)
        return NULL;
    s[0] = '\0';
    strcat(s, "headfuse");
    for (int i = 0; i < argc; i++) {
        strcat(s, " ");
        int quote = strpbrk(argv[i], " ;\"'") != NULL;
        if (quote)
            strcat(s, "'");
        strcat(s, argv[i]);
        if (quote)
            strcat(s, "'");
    }
    return s;
}

hf_err_t hf_campaign_provenance(hf_result_t *res, const char *cmdline, const char *start, int ranks)
{
    /* NULL is the command line out of memory: a result without its command is refused */
    if (!cmdline)
        return hf_error(HF_ERR_NOMEM, "out of memory recording the command line");
    char host[256] = "?", endt[32];
    gethostname(host, sizeof host);
    host[sizeof host - 1] = '\0';
    hf_campaign_iso_time(endt, sizeof endt);
    char **fields[] = {&res->version, &res->git_commit, &res->command_line,
                       &res->host,    &res->start_time, &res->end_time};
    const char *values[] = {HF_VERSION, HF_GIT_COMMIT, cmdline, host, start, endt};
    for (int i = 0; i < 6; i++) {
        free(*fields[i]);
        if (!(*fields[i] = hf_strdup(values[i])))
            return HF_ERR_NOMEM;
    }
    res->ranks = ranks;
    return HF_OK;
}

hf_err_t hf_campaign_result_read(const char *path, hf_result_t *r)
{
    hf_err_t e = hf_result_read(path, r);
    struct stat st;
    char shards[4200];
    snprintf(shards, sizeof shards, "%s.shards", path);
    if (e == HF_ERR_IO && access(path, F_OK) != 0 && errno == ENOENT && stat(shards, &st) == 0 &&
        S_ISDIR(st.st_mode))
        e = hf_error(HF_ERR_IO,
                     "%s: no such file, but %s/ holds the saved work of a search or run that was "
                     "stopped before writing it: rerun that command with --resume to finish it "
                     "and write %s",
                     path, shards, path);
    return e;
}

hf_err_t hf_campaign_check_ranks(int size)
{
    const char *expect = getenv("HF_EXPECT_RANKS");
    if (!expect || !*expect)
        return HF_OK;
    long n = 0;
    if (hf_parse_long(expect, -1, 1, INT_MAX, &n) != HF_PARSE_OK)
        return hf_error(HF_ERR_INPUT, "HF_EXPECT_RANKS=%s: must be a positive integer", expect);
    if (n != size)
        return hf_error(HF_ERR_MPI,
                        "HF_EXPECT_RANKS=%s but this MPI job has %d rank(s): the launcher did "
                        "not start the tasks as one MPI job (with srun use --mpi=pmix; see "
                        "docs/cluster.md)",
                        expect, size);
    return HF_OK;
}

hf_err_t hf_campaign_check_output(const char *opt, const char *path, int force, const char *keep)
{
    char why[1024];
    int p = hf_job_output_problem(path, why, sizeof why);
    if (p < 0)
        return HF_ERR_NOMEM;
    if (p > 0)
        return hf_error(HF_ERR_INPUT, "%s %s: %s", opt, path, why);
    if (!force && access(path, F_OK) == 0)
        return hf_error(HF_ERR_INPUT, "%s %s: exists; give --force to overwrite it%s%s", opt, path,
                        keep ? ", or " : "", keep ? keep : "");
    return HF_OK;
}

/* ------------------------------------------------------------------ one search, one file */

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
    hf_supports_clear(&sup);
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
            e = stop_said(hf_result_write(o->out, &res),
                          "%s was not written; every unit is saved in %s: rerun the same "
                          "command with --resume to write it",
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
