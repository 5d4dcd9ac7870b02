/* The journalled move of an edited job's state (docs/jobs.md, "Extending a campaign"): when a
 * resumed job's entries moved, every entry whose definition is unchanged keeps its state
 * under its new index, and a process killed half-way leaves a journal that the next run
 * finishes first. */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "headfuse/control.h"
#include "campaign/campaign_impl.h"

/* When the job file gained entries (say `span: 1..3` became `1..4`), --resume keeps the
 * state of every entry whose definition is unchanged and runs only the new ones. An
 * entry's definition is its job.txt line without the index: what it searches (target
 * name, span, max_atoms, prune) and a hash of its target. The state of entry o that is
 * entry n of the new job moves from entry-<o>.h5 and entry-<o>/ to entry-<n>...; an
 * entry with state whose definition is no longer in the job (changed or removed) is
 * refused with its name, so nothing finished is dropped without the user saying so.
 *
 * The moves are journalled in migrate.txt, so that a process killed half-way leaves
 * nothing ambiguous: the next run finishes them (hf_campaign_finish_migration) before anything
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
        HF_TRY(HF_GROW(&d->def, &cap, d->n + 1));
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

/* Testing hook (docs/reliability.md, "Fault injection"): HEADFUSE_FAIL_STATE_MOVE=N
 * makes the Nth rename of a state migration fail with EIO, as a process killed there
 * would leave it. */
static long moves; /* this process's moves so far */

static int move_fails(void)
{
    /* a test hook: unset, or anything but a count, is off (the knob, control.h) */
    long n = hf_knob(HF_KNOB_FAIL_STATE_MOVE, 0);
    return ++moves == n;
}

/* Move from to to (hf_io_move: renamed, the directory fsynced); with `once`, only when from
 * exists and to does not (each journal step can be run again). */
static hf_err_t move_path(const char *from, const char *to, int once)
{
    if (once && (!hf_campaign_path_exists(from) || hf_campaign_path_exists(to)))
        return HF_OK;
    return hf_io_move(from, to, move_fails());
}

/* One phase of the journal: A moves entry-<o>[.h5] to moving-<n>[.h5], B moving-<n>[.h5]
 * to entry-<n>[.h5]. pairs: o n o n ... */
static hf_err_t migrate_phase(hf_campaign_state_t *st, int phase, const long *pairs, long npairs)
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
static hf_err_t run_journal(hf_campaign_state_t *st, int phase, const long *pairs, long npairs)
{
    char jpath[4400], newjob[4400], job[4400];
    snprintf(jpath, sizeof jpath, "%s", hf_campaign_state_path(st, "migrate.txt"));
    snprintf(newjob, sizeof newjob, "%s", hf_campaign_state_path(st, "job.txt.new"));
    snprintf(job, sizeof job, "%s", hf_campaign_state_path(st, "job.txt"));
    if (phase == 'A') {
        HF_TRY(migrate_phase(st, 'A', pairs, npairs));
        char *text = journal_text('B', pairs, npairs);
        if (!text)
            return HF_ERR_NOMEM;
        hf_err_t e = hf_io_write_file(jpath, text, strlen(text), 0);
        free(text);
        HF_TRY(e);
    }
    HF_TRY(migrate_phase(st, 'B', pairs, npairs));
    if (hf_campaign_path_exists(newjob))
        HF_TRY(move_path(newjob, job, 0));
    if (unlink(jpath) != 0 && errno != ENOENT)
        return hf_error(HF_ERR_IO, "%s: cannot remove: %s", jpath, strerror(errno));
    return HF_OK;
}

/* A migration cut short (the journal is there): finish it. */
hf_err_t hf_campaign_finish_migration(hf_campaign_state_t *st)
{
    char jpath[4400];
    snprintf(jpath, sizeof jpath, "%s", hf_campaign_state_path(st, "migrate.txt"));
    if (!hf_campaign_path_exists(jpath))
        return HF_OK;
    char *text = NULL, phase = 0;
    long *pairs = NULL, npairs = 0, cap = 0, o, n;
    hf_err_t e = hf_campaign_read_file(jpath, &text);
    const char *p = text ? strchr(text, '\n') : NULL;
    if (e == HF_OK && (strncmp(text, "headfuse state migration 1\nphase ", 33) || !p ||
                       (phase = text[33]) == 0 || (phase != 'A' && phase != 'B')))
        e = hf_error(HF_ERR_CORRUPT, "%s: not a migration journal of headfuse", jpath);
    for (p = e == HF_OK ? strchr(p + 1, '\n') : NULL; p && p[1]; p = strchr(p + 1, '\n')) {
        if (sscanf(p + 1, "%ld %ld", &o, &n) != 2 || o < 0 || n < 0) {
            e = hf_error(HF_ERR_CORRUPT, "%s: a damaged line", jpath);
            break;
        }
        if ((e = HF_GROW(&pairs, &cap, 2 * (npairs + 1))) != HF_OK)
            break;
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
hf_err_t hf_campaign_migrate_state(hf_campaign_state_t *st, char *old, const char *text)
{
    defs_t od = {0, NULL}, nd = {0, NULL};
    char *copy = hf_strdup(text);
    long *pairs = NULL, npairs = 0;
    char *taken = NULL;
    hf_err_t e = copy ? HF_OK : HF_ERR_NOMEM;
    if (e == HF_OK && strncmp(old, "headfuse job state 1\n", 21))
        e = hf_error(HF_ERR_INPUT, "%s: not the state of a headfuse job; remove %s to start over",
                     hf_campaign_state_path(st, "job.txt"), st->dir);
    if (e == HF_OK)
        e = parse_defs(old, &od);
    if (e == HF_OK)
        e = parse_defs(copy, &nd);
    if (e == HF_OK && (!(taken = hf_calloc((size_t)(nd.n ? nd.n : 1), 1)) ||
                       !(pairs = hf_malloc((size_t)(od.n ? od.n : 1) * 2 * sizeof *pairs))))
        e = HF_ERR_NOMEM;
    for (long o = 0; e == HF_OK && o < od.n; o++) {
        char row[4400], dir[4400];
        snprintf(row, sizeof row, "%s", hf_campaign_entry_row(st, o));
        snprintf(dir, sizeof dir, "%s", hf_campaign_entry_dir(st, o));
        if (!hf_campaign_path_exists(row) && !hf_campaign_path_exists(dir))
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
        e = hf_io_write_file(hf_campaign_state_path(st, "job.txt.new"), text, strlen(text), 0);
    if (e == HF_OK)
        e = hf_io_write_file(hf_campaign_state_path(st, "migrate.txt"), journal, strlen(journal),
                             0);
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
