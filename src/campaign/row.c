/* The campaign's row library, below every phase of an entry and every command: the
 * fingerprint of a search (its shards'), whether a row of a result is a given search, the
 * certified shortcut (a row its bounds decide), a row settled from what decided it, the
 * canonical order of supports, what a stop says in a phase, and the result files'
 * provenance, output checks and reading (headfuse/campaign.h, campaign_impl.h). It calls
 * no other file of the campaign. */
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <flint/fmpz.h>

#include "headfuse/control.h"
#include "campaign/campaign_impl.h"

/* ------------------------------------------------------------------ searches and rows */

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

int hf_campaign_row_matches(const hf_result_t *r, long i, const char *t_json,
                            const hf_search_opts_t *o)
{
    /* a row records the engine that ran (auto resolved) */
    const hf_row_t *w = r->rows + i;
    return w->span == o->span && w->max_atoms == o->max_atoms &&
           hf_engine_satisfies(o->engine, w->engine) && !strcmp(r->target_json[i], t_json);
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

void hf_campaign_row_settle(hf_row_t *row, const hf_campaign_outcome_t *o)
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

/* ------------------------------------------------------------------ supports in order */

int hf_campaign_keys_cmp(const int64_t *a, const int64_t *b, long len)
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
    return hf_campaign_keys_cmp(k->keys[a], k->keys[b], k->len);
}

hf_err_t hf_campaign_keys_sort(int64_t *const *keys, long n, long len, long *idx)
{
    keylists_t k = {keys, len};
    for (long i = 0; i < n; i++)
        idx[i] = i;
    return hf_sort(idx, n, cmp_keylists, &k);
}

/* ------------------------------------------------------------------ stops */

hf_err_t hf_campaign_stop_said(hf_err_t e, const char *fmt, ...)
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
    const char *expect = hf_env(HF_ENV_EXPECT_RANKS);
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
