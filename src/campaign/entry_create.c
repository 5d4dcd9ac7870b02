/* The second phase of an entry (hf_campaign_entry): the search is made with its
 * fingerprint, the shard directory is made (or, with --resume, the ranges finished by
 * earlier runs are read from its shards and sent to every rank), and every rank creates its
 * shard of this run. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <flint/fmpz.h>

#include "headfuse/agree.h"
#include "campaign/campaign_impl.h"

/* Before a cone of many unknowns is built: the plan's warning (hf_campaign_cone_warning),
 * on rank 0 unless quiet. The engine planned is the engine made (cli.plan checks it). */
static void cone_warn(int rank, const hf_campaign_cfg_t *cfg, const hf_target_t *t,
                      const hf_search_opts_t *o, const hf_bounds_t *b)
{
    hf_engine_t eng;
    long unknowns = 0;
    char why[512];
    if (rank != 0 || cfg->quiet)
        return;
    if (hf_search_engine_planned(t, o, b, &eng, &unknowns) != HF_OK) {
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

static int cmp_done(const void *a, const void *b)
{
    const hf_sched_done_t *x = a, *y = b;
    if (x->m != y->m)
        return x->m < y->m ? -1 : 1;
    if (x->unit != y->unit)
        return x->unit < y->unit ? -1 : 1;
    return x->lo < y->lo ? -1 : x->lo > y->lo;
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

/* A shard's path: run-<stamp>-<pid>-r<rank>.h5 in dir (shards.c reads the names back). */
static void shard_path(char *buf, size_t n, const char *dir, long long stamp, long long pid,
                       int rank)
{
    snprintf(buf, n, "%s/run-%lld-%lld-r%03d.h5", dir, stamp, pid, rank);
}

/* Rank 0: this run's stamp, its shards' names: the entry's second, or the next one free
 * when a shard of this process with that stamp is in the directory already (a later entry
 * of the same process in the same second). */
static long long shard_stamp(const hf_campaign_entry_ctx_t *x)
{
    char path[4096];
    long long stamp = x->started;
    for (;; stamp++) {
        shard_path(path, sizeof path, x->cfg->shard_dir, stamp, (long long)getpid(), 0);
        if (access(path, F_OK) != 0)
            return stamp;
    }
}

hf_err_t hf_campaign_entry_create(hf_campaign_entry_ctx_t *x)
{
    const hf_campaign_cfg_t *cfg = x->cfg;
    const hf_target_t *t = x->t;
    cone_warn(x->rank, cfg, t, x->opts, x->b);
    hf_err_t e = hf_search_create(t, x->opts, x->b, &x->s);
    if (e == HF_OK) {
        e = hf_campaign_fingerprint(t, x->opts, hf_search_engine(x->s), x->fp);
        x->ro.engine = hf_engine_name(hf_search_engine(x->s));
    }
    HF_TRY(hf_campaign_stop_said(hf_agree_all(x->comm, e), HF_CAMPAIGN_NOT_STARTED));
    first_size_said(x->rank, cfg, t, x->s);
    HF_TRY(hf_agree_root(x->comm, x->rank == 0 ? prepare_shard_dir(cfg) : HF_OK));
    char about[600];
    search_about(t, x->opts, about, sizeof about);
    /* a resumed row's seconds are those of all its runs (README, "seconds") */
    double earlier = 0;
    HF_TRY(load_done(x->comm, x->rank, cfg, x->fp, about, &x->done, &x->ndone, &earlier));
    x->t0 -= earlier;

    /* each rank its own shard, named by rank 0's clock and pid for this run */
    long long stamp[2] = {x->rank == 0 ? shard_stamp(x) : 0, (long long)getpid()};
    MPI_Bcast(stamp, 2, MPI_LONG_LONG, 0, x->comm);
    char path[4096];
    shard_path(path, sizeof path, cfg->shard_dir, stamp[0], stamp[1], x->rank);
    return hf_agree_all(x->comm, hf_shard_create(path, x->fp, about, &x->shard));
}
