/* A job file (docs/jobs.md) run entry by entry across the ranks into one RESULT.h5 with
 * one table row per entry (row index = entry index).
 *
 * State lives in RESULT.h5.shards/ until the result is written:
 *   job.txt        what the job is (entries and a hash of each target), so the state of
 *                  one job is never continued by another
 *   entry-<i>/     the shards of entry i while it runs (hf_campaign_entry)
 *   entry-<i>.h5   entry i's finished row: a one-row result file, written atomically
 * A resumed run skips entries with a finished row and, inside the entry it was running,
 * the finished units. A resumed run of an edited job keeps the state of every entry
 * whose definition did not change, and the rows of an existing RESULT.h5 ("a changed
 * job" below). */
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "headfuse/agree.h"
#include "campaign/campaign_impl.h"
#include "headfuse/campaign.h"
#include "headfuse/sched.h"

/* ------------------------------------------------------------------ state files */

typedef struct {
    const hf_job_t *job;
    char dir[4096];       /* RESULT.h5.shards */
    char file[4096 + 32]; /* scratch for path building */
} state_t;

static const char *entry_dir(state_t *st, long i)
{
    snprintf(st->file, sizeof st->file, "%s/entry-%ld", st->dir, i);
    return st->file;
}

static const char *entry_row(state_t *st, long i)
{
    snprintf(st->file, sizeof st->file, "%s/entry-%ld.h5", st->dir, i);
    return st->file;
}

static int path_exists(const char *p)
{
    struct stat sb;
    return stat(p, &sb) == 0;
}

/* The description of the job in job.txt: one line per entry with a hash of its target
 * (so a changed data file is noticed too). Malloc'd. */
static hf_err_t job_text(const hf_job_t *job, char **out)
{
    size_t cap = 256, len = 0;
    char *s = hf_malloc(cap);
    hf_err_t e = s ? HF_OK : HF_ERR_NOMEM;
    if (s)
        len = (size_t)snprintf(s, cap, "headfuse job state 1\nentries %ld\n", job->nentries);
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
        if (len + (size_t)n + 1 > cap) {
            cap = 2 * (len + (size_t)n + 1);
            char *g = hf_realloc(s, cap);
            if (!g) {
                e = HF_ERR_NOMEM;
                break;
            }
            s = g;
        }
        memcpy(s + len, line, (size_t)n + 1);
        len += (size_t)n;
    }
    if (e != HF_OK) {
        free(s);
        s = NULL;
    }
    *out = s;
    return e;
}

static char *read_file(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    char *s = NULL;
    size_t len = 0, cap = 0, n;
    char buf[4096];
    while ((n = fread(buf, 1, sizeof buf, f)) > 0) {
        if (len + n + 1 > cap) {
            cap = 2 * (len + n + 1);
            char *g = realloc(s, cap);
            if (!g) {
                free(s);
                fclose(f);
                return NULL;
            }
            s = g;
        }
        memcpy(s + len, buf, n);
        len += n;
    }
    fclose(f);
    if (!s)
        s = calloc(1, 1);
    else
        s[len] = '\0';
    return s;
}

/* ------------------------------------------------------------------ a changed job */

/* When the job file gained entries (say `span: 1..3` became `1..4`), --resume keeps the
 * state of every entry whose definition is unchanged and runs only the new ones. An
 * entry's definition is its job.txt line without the index: what it searches (target
 * name, span, max_atoms, prune) and a hash of its target. The state of entry o that is
 * entry n of the new job moves from entry-<o>.h5 and entry-<o>/ to entry-<n>...; an
 * entry with state whose definition is no longer in the job (changed or removed) is
 * refused with its name, so nothing finished is dropped without the user saying so.
 *
 * The moves are journalled in migrate.txt, so that a process killed half-way leaves
 * nothing ambiguous: the next run finishes them (finish_migration) before anything
 * else. Phase A moves every entry-<o> to moving-<n>, phase B every moving-<n> to
 * entry-<n>; then job.txt.new replaces job.txt and the journal goes. */

/* The definitions of a job.txt text: def[i] points into text (lines are cut). */
typedef struct {
    long n;
    char **def;
} defs_t;

static hf_err_t parse_defs(char *text, defs_t *d)
{
    d->n = 0;
    d->def = NULL;
    long cap = 0;
    char *line = strchr(text, '\n');             /* "headfuse job state 1" */
    line = line ? strchr(line + 1, '\n') : NULL; /* "entries N" */
    while (line && line[1]) {
        char *p = line + 1, *end = strchr(p, '\n'), *sp = strchr(p, ' ');
        if (end)
            *end = '\0';
        if (!sp)
            return hf_error(HF_ERR_INPUT, "job.txt: line '%s' has no entry definition", p);
        if (d->n == cap) {
            cap = cap ? 2 * cap : 64;
            char **g = hf_realloc(d->def, (size_t)cap * sizeof *g);
            if (!g)
                return HF_ERR_NOMEM;
            d->def = g;
        }
        d->def[d->n++] = sp + 1;
        line = end;
    }
    return HF_OK;
}

/* A definition without its trailing target hash: the entry as --list describes it. */
static void def_desc(const char *def, char *out, size_t n)
{
    const char *sp = strrchr(def, ' ');
    snprintf(out, n, "%.*s", (int)(sp ? sp - def : (long)strlen(def)), def);
}

/* Whether two definitions describe the same row (target name and span) with possibly
 * other settings: their descriptions agree up to the end of " span S". */
static int same_row(const char *a, const char *b)
{
    char da[1024], db[1024];
    def_desc(a, da, sizeof da);
    def_desc(b, db, sizeof db);
    const char *sa = strstr(da, " span "), *sb = strstr(db, " span ");
    if (!sa || !sb)
        return 0;
    size_t la = (size_t)(sa - da) + 6 + strspn(sa + 6, "0123456789");
    size_t lb = (size_t)(sb - db) + 6 + strspn(sb + 6, "0123456789");
    return la == lb && !strncmp(da, db, la);
}

static const char *state_path(state_t *st, const char *name)
{
    snprintf(st->file, sizeof st->file, "%s/%s", st->dir, name);
    return st->file;
}

/* Write path atomically (a temporary file renamed over it). */
static hf_err_t write_atomic(const char *path, const char *text)
{
    char tmp[4400];
    snprintf(tmp, sizeof tmp, "%s.%ld.tmp", path, (long)getpid());
    FILE *f = fopen(tmp, "wb");
    if (!f || fputs(text, f) < 0 || fflush(f) != 0 || fsync(fileno(f)) != 0 || fclose(f) != 0) {
        int err = errno;
        if (f)
            fclose(f);
        unlink(tmp);
        return hf_error(HF_ERR_IO, "%s: cannot write: %s", tmp, strerror(err));
    }
    if (rename(tmp, path) != 0) {
        int err = errno;
        unlink(tmp);
        return hf_error(HF_ERR_IO, "%s: cannot write: %s", path, strerror(err));
    }
    return HF_OK;
}

/* Testing hook (docs/reliability.md, "Fault injection"): HEADFUSE_FAIL_STATE_MOVE=N
 * makes the Nth rename of a state migration fail with EIO, as a process killed there
 * would leave it. */
static int move_fails(void)
{
    static long left = -1;
    if (left < 0) {
        const char *v = getenv("HEADFUSE_FAIL_STATE_MOVE");
        if (!v || hf_parse_long(v, -1, 0, LONG_MAX, &left) != HF_PARSE_OK)
            left = 0; /* a test hook: anything but a count turns it off */
    }
    return left > 0 && --left == 0;
}

/* rename(from, to); with `once`, only when from exists and to does not (each journal
 * step can be run again). */
static hf_err_t move_path(const char *from, const char *to, int once)
{
    if (once && (!path_exists(from) || path_exists(to)))
        return HF_OK;
    if (move_fails() ? (errno = EIO, 1) : rename(from, to) != 0)
        return hf_error(HF_ERR_IO, "%s: cannot move to %s: %s", from, to, strerror(errno));
    return HF_OK;
}

/* One phase of the journal: A moves entry-<o>[.h5] to moving-<n>[.h5], B moving-<n>[.h5]
 * to entry-<n>[.h5]. pairs: o n o n ... */
static hf_err_t migrate_phase(state_t *st, int phase, const long *pairs, long npairs)
{
    static const char *const suffix[2] = {".h5", ""};
    for (long k = 0; k < npairs; k++)
        for (int j = 0; j < 2; j++) {
            char a[4400], b[4400];
            long o = pairs[2 * k], n = pairs[2 * k + 1];
            snprintf(a, sizeof a, "%s/%s-%ld%s", st->dir, phase == 'A' ? "entry" : "moving",
                     phase == 'A' ? o : n, suffix[j]);
            snprintf(b, sizeof b, "%s/%s-%ld%s", st->dir, phase == 'A' ? "moving" : "entry", n,
                     suffix[j]);
            HF_TRY(move_path(a, b, 1));
        }
    return HF_OK;
}

/* The journal's text: "headfuse state migration 1\nphase P\n" and a line "o n" per move. */
static char *journal_text(int phase, const long *pairs, long npairs)
{
    size_t cap = 64 + (size_t)npairs * 48;
    char *s = hf_malloc(cap);
    if (!s)
        return NULL;
    size_t len = (size_t)snprintf(s, cap, "headfuse state migration 1\nphase %c\n", phase);
    for (long k = 0; k < npairs; k++)
        len += (size_t)snprintf(s + len, cap - len, "%ld %ld\n", pairs[2 * k], pairs[2 * k + 1]);
    return s;
}

/* Run the journal from `phase` on, then put job.txt.new in place and drop the journal. */
static hf_err_t run_journal(state_t *st, int phase, const long *pairs, long npairs)
{
    char jpath[4400], newjob[4400], job[4400];
    snprintf(jpath, sizeof jpath, "%s", state_path(st, "migrate.txt"));
    snprintf(newjob, sizeof newjob, "%s", state_path(st, "job.txt.new"));
    snprintf(job, sizeof job, "%s", state_path(st, "job.txt"));
    if (phase == 'A') {
        HF_TRY(migrate_phase(st, 'A', pairs, npairs));
        char *text = journal_text('B', pairs, npairs);
        if (!text)
            return HF_ERR_NOMEM;
        hf_err_t e = write_atomic(jpath, text);
        free(text);
        HF_TRY(e);
    }
    HF_TRY(migrate_phase(st, 'B', pairs, npairs));
    if (path_exists(newjob))
        HF_TRY(move_path(newjob, job, 0));
    if (unlink(jpath) != 0 && errno != ENOENT)
        return hf_error(HF_ERR_IO, "%s: cannot remove: %s", jpath, strerror(errno));
    return HF_OK;
}

/* A migration cut short (the journal is there): finish it. */
static hf_err_t finish_migration(state_t *st)
{
    char jpath[4400];
    snprintf(jpath, sizeof jpath, "%s", state_path(st, "migrate.txt"));
    if (!path_exists(jpath))
        return HF_OK;
    char *text = read_file(jpath), phase = 0;
    long *pairs = NULL, npairs = 0, o, n;
    hf_err_t e = text ? HF_OK : hf_error(HF_ERR_IO, "%s: cannot read: %s", jpath, strerror(errno));
    const char *p = text ? strchr(text, '\n') : NULL;
    if (e == HF_OK && (strncmp(text, "headfuse state migration 1\nphase ", 33) || !p ||
                       (phase = text[33]) == 0 || (phase != 'A' && phase != 'B')))
        e = hf_error(HF_ERR_CORRUPT, "%s: not a migration journal of headfuse", jpath);
    for (p = e == HF_OK ? strchr(p + 1, '\n') : NULL; p && p[1]; p = strchr(p + 1, '\n')) {
        if (sscanf(p + 1, "%ld %ld", &o, &n) != 2 || o < 0 || n < 0) {
            e = hf_error(HF_ERR_CORRUPT, "%s: a damaged line", jpath);
            break;
        }
        long *g = hf_realloc(pairs, (size_t)(npairs + 1) * 2 * sizeof *g);
        if (!g) {
            e = HF_ERR_NOMEM;
            break;
        }
        pairs = g;
        pairs[2 * npairs] = o;
        pairs[2 * npairs + 1] = n;
        npairs++;
    }
    if (e == HF_OK)
        e = run_journal(st, phase, pairs, npairs);
    free(pairs);
    free(text);
    return e;
}

/* The job changed since job.txt was written (old -> text): carry the state of every
 * entry with an unchanged definition over to its new index, or refuse naming the first
 * entry whose finished work would be dropped. */
static hf_err_t migrate_state(state_t *st, char *old, const char *text)
{
    defs_t od = {0, NULL}, nd = {0, NULL};
    char *copy = hf_strdup(text);
    long *pairs = NULL, npairs = 0;
    char *taken = NULL;
    hf_err_t e = copy ? HF_OK : HF_ERR_NOMEM;
    if (e == HF_OK && strncmp(old, "headfuse job state 1\n", 21))
        e = hf_error(HF_ERR_INPUT, "%s: not the state of a headfuse job; remove %s to start over",
                     state_path(st, "job.txt"), st->dir);
    if (e == HF_OK)
        e = parse_defs(old, &od);
    if (e == HF_OK)
        e = parse_defs(copy, &nd);
    if (e == HF_OK && (!(taken = hf_calloc((size_t)(nd.n ? nd.n : 1), 1)) ||
                       !(pairs = hf_malloc((size_t)(od.n ? od.n : 1) * 2 * sizeof *pairs))))
        e = HF_ERR_NOMEM;
    for (long o = 0; e == HF_OK && o < od.n; o++) {
        char row[4400], dir[4400];
        snprintf(row, sizeof row, "%s", entry_row(st, o));
        snprintf(dir, sizeof dir, "%s", entry_dir(st, o));
        if (!path_exists(row) && !path_exists(dir))
            continue; /* nothing done for it: nothing to keep */
        long n = 0;
        while (n < nd.n && (taken[n] || strcmp(nd.def[n], od.def[o])))
            n++;
        if (n < nd.n) {
            taken[n] = 1;
            if (n != o) {
                pairs[2 * npairs] = o;
                pairs[2 * npairs + 1] = n;
                npairs++;
            }
            continue;
        }
        char was[1024], now[1024];
        def_desc(od.def[o], was, sizeof was);
        long c = 0;
        while (c < nd.n && !same_row(nd.def[c], od.def[o]))
            c++;
        if (c < nd.n) {
            def_desc(nd.def[c], now, sizeof now);
            e = hf_error(HF_ERR_INPUT,
                         "%s changed entry '%s' since its work was saved in %s: it is now entry "
                         "%ld '%s'%s; restore it, or remove %s and %s (that entry's saved work) to "
                         "compute it anew",
                         st->job->path, was, st->dir, c, now,
                         strcmp(was, now) ? "" : " (its target file changed)", row, dir);
        } else {
            e = hf_error(HF_ERR_INPUT,
                         "%s no longer has entry '%s', whose work is saved in %s; put it back, or "
                         "remove %s and %s to drop that work",
                         st->job->path, was, st->dir, row, dir);
        }
    }
    /* the plan holds: journal it, then carry it out */
    char *journal = e == HF_OK ? journal_text('A', pairs, npairs) : NULL;
    if (e == HF_OK && !journal)
        e = HF_ERR_NOMEM;
    if (e == HF_OK)
        e = write_atomic(state_path(st, "job.txt.new"), text);
    if (e == HF_OK)
        e = write_atomic(state_path(st, "migrate.txt"), journal);
    if (e == HF_OK)
        e = run_journal(st, 'A', pairs, npairs);
    free(journal);
    free(taken);
    free(pairs);
    free(od.def);
    free(nd.def);
    free(copy);
    return e;
}

/* job.txt: written once (atomically: concurrent array tasks may race to write it),
 * afterwards compared. A changed job's state is carried over when `adapt` (a run of the
 * whole job with --resume; array tasks of one job run concurrently and only compare). */
static hf_err_t claim_state(state_t *st, const char *text, int adapt)
{
    char path[4200], tmp[4300];
    snprintf(path, sizeof path, "%s/job.txt", st->dir);
    snprintf(tmp, sizeof tmp, "%s.%ld.tmp", path, (long)getpid());
    if (!path_exists(path)) {
        FILE *f = fopen(tmp, "wb");
        if (!f || fputs(text, f) < 0 || fclose(f) != 0) {
            if (f)
                fclose(f);
            unlink(tmp);
            return hf_error(HF_ERR_IO, "%s: cannot write: %s", tmp, strerror(errno));
        }
        int rc = link(tmp, path); /* fails with EEXIST when another task was first */
        int err = errno;
        unlink(tmp);
        if (rc != 0 && err != EEXIST)
            return hf_error(HF_ERR_IO, "%s: cannot create: %s", path, strerror(err));
    }
    char *old = read_file(path);
    if (!old)
        return hf_error(HF_ERR_IO, "%s: cannot read: %s", path, strerror(errno));
    hf_err_t e = HF_OK;
    if (strcmp(old, text) && adapt)
        e = migrate_state(st, old, text);
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
static hf_err_t prepare_state(state_t *st, long first, long last, int resume, int whole, int *done)
{
    if (mkdir(st->dir, 0777) != 0 && errno != EEXIST)
        return hf_error(HF_ERR_IO, "%s: cannot create the state directory: %s", st->dir,
                        strerror(errno));
    char path[4200];
    snprintf(path, sizeof path, "%s/job.txt", st->dir);
    int earlier = whole && path_exists(path);
    for (long i = first; i <= last; i++)
        if (path_exists(entry_row(st, i)) || path_exists(entry_dir(st, i)))
            earlier = 1;
    if (earlier && !resume)
        return hf_error(HF_ERR_INPUT,
                        "%s: holds the state of an earlier run; rerun with --resume to continue "
                        "it, or remove the directory to start over",
                        st->dir);
    /* a migration cut short by a kill is finished first (whole-job runs only) */
    if (whole && resume)
        HF_TRY(finish_migration(st));
    char *text;
    HF_TRY(job_text(st->job, &text));
    hf_err_t e = claim_state(st, text, whole && resume);
    free(text);
    for (long i = first; e == HF_OK && i <= last; i++)
        done[i] = path_exists(entry_row(st, i));
    return e;
}

/* Remove the state directory once RESULT.h5 holds everything. */
static void remove_state(state_t *st)
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

/* Read entry i's finished row and check it belongs to that entry. */
static hf_err_t read_row(state_t *st, long i, hf_result_t *r)
{
    const char *path = entry_row(st, i);
    hf_result_init(r);
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
static hf_err_t save_row(state_t *st, long i, const hf_target_t *t, const hf_row_t *row,
                         const hf_supports_t *sup, hf_unit_record_t *units, long nunits,
                         const char *cmdline, const char *start, int ranks)
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
            /* the row file has one row; its units point at it (assemble renumbers) */
            for (long k = 0; k < nunits; k++)
                r.units[k].row = 0;
        }
    }
    if (e == HF_OK)
        e = hf_campaign_provenance(&r, cmdline, start, ranks);
    if (e == HF_OK)
        e = hf_result_write(entry_row(st, i), &r);
    if (e == HF_OK)
        hf_shards_remove(entry_dir(st, i));
    hf_result_clear(&r);
    return e;
}

/* Rank 0: RESULT.h5 from every entry's finished row, in entry order. */
static hf_err_t assemble(state_t *st, const char *out, const char *cmdline, const char *start,
                         int ranks, hf_result_t *res)
{
    char first[32];
    snprintf(first, sizeof first, "%s", start);
    for (long i = 0; i < st->job->nentries; i++) {
        hf_result_t r;
        hf_err_t e = read_row(st, i, &r);
        if (e == HF_OK)
            e = hf_result_add_row(res, r.rows, r.supports, r.target_json[0]);
        if (e == HF_OK && r.nunits) {
            hf_unit_record_t *u =
                hf_realloc(res->units, (size_t)(res->nunits + r.nunits) * sizeof *u);
            if (!u)
                e = HF_ERR_NOMEM;
            else {
                memcpy(u + res->nunits, r.units, (size_t)r.nunits * sizeof *u);
                for (long k = 0; k < r.nunits; k++)
                    u[res->nunits + k].row = (int32_t)i; /* row index = entry index */
                res->units = u;
                res->nunits += r.nunits;
            }
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

/* The JSON text of entry i's target and its search options. */
static hf_err_t entry_search(const hf_job_t *job, long i, char **json, hf_search_opts_t *so)
{
    hf_target_t t;
    hf_target_init_empty(&t);
    HF_TRY(hf_job_entry_target(job, i, &t));
    *json = hf_target_to_json(&t);
    hf_target_clear(&t);
    const hf_job_entry_t *je = job->entries + i;
    *so = (hf_search_opts_t){.span = je->span, .prune = je->prune, .max_atoms = je->max_atoms};
    return *json ? HF_OK : HF_ERR_NOMEM;
}

/* Rows of an existing RESULT.h5 that a --resume run keeps (a job extended after its
 * result was written): row_of[i] is entry i's row in res, or -1. */
typedef struct {
    hf_result_t res;
    long *row_of;
} seed_t;

static void seed_clear(seed_t *sd)
{
    hf_result_clear(&sd->res);
    free(sd->row_of);
    sd->row_of = NULL;
}

/* Rank 0, before any state is touched: match every row of the output to an entry with
 * the same definition (hf_campaign_row_matches). A row that matches none would be dropped when
 * the output is rewritten: refused, naming it, unless --force. */
static hf_err_t plan_seed(state_t *st, const char *out, int force, seed_t *sd)
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
static hf_err_t apply_seed(state_t *st, seed_t *sd, int *done)
{
    const hf_result_t *res = &sd->res;
    for (long i = 0; sd->row_of && i < st->job->nentries; i++) {
        long r = sd->row_of[i];
        if (r < 0 || done[i])
            continue;
        hf_result_t one;
        hf_result_init(&one);
        hf_err_t e = hf_result_add_row(&one, res->rows + r, res->supports + r, res->target_json[r]);
        for (long k = 0; e == HF_OK && k < res->nunits; k++) {
            if (res->units[k].row != r)
                continue;
            hf_unit_record_t *u = hf_realloc(one.units, (size_t)(one.nunits + 1) * sizeof *u);
            if (!u) {
                e = HF_ERR_NOMEM;
                break;
            }
            one.units = u;
            u[one.nunits] = res->units[k];
            u[one.nunits++].row = 0;
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
            e = hf_result_write(entry_row(st, i), &one);
        hf_result_clear(&one);
        HF_TRY(e);
        done[i] = 1;
    }
    return HF_OK;
}

/* A finished RESULT.h5 that matches the job (rows in order): a resumed run after the
 * result was written has nothing left to do. */
static int result_complete(state_t *st, const char *out)
{
    if (path_exists(st->dir) || !path_exists(out))
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

/* ------------------------------------------------------------------ preflight */

/* Whether entry i's search can be set up (the search has limits of its own, such as the
 * size of the box); the message names the job file, line and entry. */
static hf_err_t check_entry(const hf_job_t *job, long i)
{
    hf_target_t t;
    hf_target_init_empty(&t);
    HF_TRY(hf_job_entry_target(job, i, &t));
    const hf_job_entry_t *je = job->entries + i;
    hf_search_opts_t so = {.span = je->span,
                           .prune = je->prune,
                           .max_atoms = je->max_atoms,
                           .engine = je->prune ? (hf_engine_t)je->engine : HF_ENGINE_AUTO};
    hf_search_t *s = NULL;
    char lb[HF_BIGINT_LEN], ub[HF_BIGINT_LEN], rule[HF_RULE_LEN];
    int shortcut = 0;
    /* rows certified by the bounds alone never build a search */
    hf_err_t e = hf_campaign_certified(&t, &so, "max_atoms", &shortcut, lb, ub, sizeof lb, rule,
                                       sizeof rule);
    if (e == HF_OK && !shortcut)
        e = hf_search_create(&t, &so, &s);
    hf_search_destroy(&s);
    hf_target_clear(&t);
    if (e != HF_OK) {
        char *d = hf_job_entry_describe(job, i);
        hf_error_prefix("%s:%d: entries[%d] (%s)", job->path, je->line, je->index,
                        d ? d : je->label);
        free(d);
    }
    return e;
}

/* Collective, before any work: every selected entry's search can be set up. The entries
 * are spread over the ranks; the rank that checked the first failing one keeps its
 * message (hf_agree_reporter names it) and every rank returns its error code. */
static hf_err_t preflight(MPI_Comm comm, const hf_job_t *job, long first, long last, int rank,
                          int size)
{
    long bad = LONG_MAX;
    hf_err_t e = HF_OK;
    for (long i = first + rank; i <= last; i += size)
        if ((e = check_entry(job, i)) != HF_OK) {
            bad = i;
            break;
        }
    return hf_agree_first(comm, e, bad); /* the first failing entry, not the lowest rank */
}

/* ------------------------------------------------------------------ the run */

/* Rank 0, --collect: every entry has its finished row. */
static hf_err_t check_collect(const state_t *st, const int *done)
{
    char missing[256] = "";
    long nmissing = 0, n = st->job->nentries;
    for (long i = 0; i < n; i++)
        if (!done[i] && nmissing++ < 8)
            snprintf(missing + strlen(missing), sizeof missing - strlen(missing), "%s%ld",
                     nmissing > 1 ? ", " : "", i);
    if (nmissing)
        return hf_error(HF_ERR_INPUT,
                        "--collect: %ld of %ld entries have no finished row in %s (entries %s%s); "
                        "run them with --entry I, or run without --collect",
                        nmissing, n, st->dir, missing, nmissing > 8 ? ", ..." : "");
    return HF_OK;
}

/* Entry i: search it and keep its finished row in the state (rank 0). */
static hf_err_t run_entry(MPI_Comm comm, state_t *st, long i, const hf_campaign_job_opts_t *o,
                          hf_row_t *row)
{
    int rank, size;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    const hf_job_t *job = st->job;
    hf_target_t t;
    hf_target_init_empty(&t);
    hf_err_t te = hf_job_entry_target(job, i, &t);
    /* a rank that cannot build the target must not leave the others searching */
    hf_err_t e = hf_agree_all(comm, te);
    if (e != HF_OK) {
        if (te == HF_OK)
            hf_target_clear(&t);
        return e;
    }
    const hf_job_entry_t *je = job->entries + i;
    hf_search_opts_t so = {.span = je->span,
                           .prune = je->prune,
                           .max_atoms = je->max_atoms,
                           .engine = je->prune ? (hf_engine_t)je->engine : HF_ENGINE_AUTO};
    char edir[sizeof st->file], estart[32];
    snprintf(edir, sizeof edir, "%s", entry_dir(st, i));
    hf_campaign_iso_time(estart, sizeof estart);
    hf_campaign_cfg_t cfg = {.shard_dir = edir,
                             .resume = o->resume,
                             .quiet = o->quiet,
                             .row = (int)i,
                             .command_line = o->command_line,
                             .max_name = "max_atoms"};
    hf_supports_t sup;
    hf_unit_record_t *units = NULL;
    long nunits = 0;
    e = hf_campaign_entry(comm, &t, &so, &cfg, row, &sup, &units, &nunits);
    if (e == HF_OK && rank == 0)
        e = save_row(st, i, &t, row, &sup, units, nunits, o->command_line, estart, size);
    e = hf_agree_root(comm, e);
    hf_supports_clear(&sup);
    free(units);
    hf_target_clear(&t);
    if (e != HF_OK) {
        char *d = hf_job_entry_describe(job, i);
        hf_error_prefix("entry %ld (%s)", i, d ? d : je->label);
        free(d);
    }
    return e;
}

hf_err_t hf_campaign_job_run(MPI_Comm comm, const hf_job_t *job, const hf_campaign_job_opts_t *o,
                             hf_campaign_row_fn on_row, void *ctx, hf_result_t *res,
                             hf_campaign_job_outcome_t *oc)
{
    int rank, size;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    memset(oc, 0, sizeof *oc);
    state_t st;
    seed_t seed = {.row_of = NULL};
    hf_result_init(&seed.res);
    int *done = NULL, resume = o->resume || o->collect; /* collecting continues earlier runs */
    long entry = o->entry;
    hf_err_t e = o->command_line ? HF_OK : HF_ERR_NOMEM; /* every row records the command */
    if ((e = hf_agree_all(comm, e)) != HF_OK)
        goto out;
    if ((e = hf_campaign_check_ranks(size)) != HF_OK)
        goto out;
    if (entry >= job->nentries) {
        e = hf_error(HF_ERR_INPUT, "--entry %ld: the job has %ld entries (0..%ld)", entry,
                     job->nentries, job->nentries - 1);
        goto out;
    }
    long first = entry >= 0 ? entry : 0, last = entry >= 0 ? entry : job->nentries - 1;
    if (!o->collect && (e = preflight(comm, job, first, last, rank, size)) != HF_OK)
        goto out;
    st.job = job;
    snprintf(st.dir, sizeof st.dir, "%s.shards", job->output);
    if (!(done = hf_calloc((size_t)(job->nentries ? job->nentries : 1), sizeof *done))) {
        e = HF_ERR_NOMEM;
        goto out;
    }

    if (rank == 0 && resume && entry < 0)
        oc->complete = result_complete(&st, job->output);
    MPI_Bcast(&oc->complete, 1, MPI_INT, 0, comm);
    if (oc->complete) {
        if (rank == 0)
            e = hf_result_read(job->output, res);
        e = hf_agree_root(comm, e);
        goto out;
    }

    /* a finished RESULT.h5 (hours of work) is never replaced silently */
    if (entry < 0 && !resume && !o->force && rank == 0 && path_exists(job->output))
        e = hf_error(HF_ERR_INPUT,
                     "%s: exists; rerun with --resume to keep its rows (entries not in it are "
                     "run), or with --force to overwrite it",
                     job->output);
    /* --resume with a RESULT.h5 that lacks entries (the job was extended after it was
     * written): its rows are kept as finished entries */
    if (e == HF_OK && entry < 0 && resume && rank == 0 && path_exists(job->output))
        e = plan_seed(&st, job->output, o->force, &seed);
    if (e == HF_OK && o->collect && rank == 0 && !path_exists(st.dir))
        e = hf_error(HF_ERR_INPUT,
                     "--collect: %s does not exist: no entry of this job has finished (run them "
                     "with --entry I, or run without --collect)",
                     st.dir);
    if ((e = hf_agree_root(comm, e)) != HF_OK)
        goto out;
    e = rank == 0 ? prepare_state(&st, first, last, resume, entry < 0, done) : HF_OK;
    if ((e = hf_agree_root(comm, e)) != HF_OK)
        goto out;
    if ((e = hf_agree_root(comm, rank == 0 ? apply_seed(&st, &seed, done) : HF_OK)) != HF_OK)
        goto out;
    MPI_Bcast(done, (int)job->nentries, MPI_INT, 0, comm);
    e = o->collect && rank == 0 ? check_collect(&st, done) : HF_OK;
    if ((e = hf_agree_root(comm, e)) != HF_OK)
        goto out;

    for (long i = first; i <= last; i++) {
        if (done[i]) {
            oc->skipped++;
            continue;
        }
        /* a stop signal between entries: nothing in flight, stop here */
        int stop = hf_sched_stop_requested(), any;
        MPI_Allreduce(&stop, &any, 1, MPI_INT, MPI_MAX, comm);
        if (any) {
            e = hf_error(HF_ERR_INTERRUPTED,
                         "interrupted before entry %ld; finished entries are kept in %s; rerun "
                         "the same command with --resume to continue",
                         i, st.dir);
            goto out;
        }
        hf_row_t row;
        if ((e = run_entry(comm, &st, i, o, &row)) != HF_OK)
            goto out;
        oc->ran++;
        if (rank == 0 && on_row)
            on_row(ctx, i, job->nentries, &row);
    }

    if (entry >= 0) {
        oc->entry_done = done[entry];
        if (rank == 0)
            e = hf_result_read(entry_row(&st, entry), res);
        e = hf_agree_root(comm, e);
        goto out;
    }
    if (rank == 0) {
        e = assemble(&st, job->output, o->command_line, o->start, size, res);
        if (e == HF_OK)
            remove_state(&st);
    }
    e = hf_agree_root(comm, e);
out:
    seed_clear(&seed);
    free(done);
    return e;
}
