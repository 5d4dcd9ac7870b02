/* Internal to the campaign module: the row library (row.c: fingerprints, the settling of a
 * row, what a stop says), the phases of one entry and the context they share (entry.c
 * calls entry_admit.c, entry_create.c, entry_run.c, entry_reduce.c, entry_share.c), and
 * what the files of a job run share (job_run.c, the run loop; job_paths.c, the state's
 * paths and files; job_state.c, the state directory and rows; job_migrate.c, the
 * journalled move of an edited job's state; job_preflight.c, the checks before any work).
 *
 * The files call one way (docs/architecture.md, the campaign's row): row.c, memory.c,
 * large.c at the bottom; plan.c; job_paths.c; job_migrate.c; job_state.c; job_preflight.c;
 * the entry's phases, then entry.c; search_file.c and job_run.c at the top. */
#ifndef HF_CAMPAIGN_IMPL_H
#define HF_CAMPAIGN_IMPL_H

#include <mpi.h>

#include "headfuse/bounds.h"
#include "headfuse/campaign.h"
#include "headfuse/core.h"
#include "headfuse/sched.h"

/* Fingerprints of searches (shard files) and of job entries (job.txt) are FNV-1a hashes
 * started from this value, not from FNV's offset basis HF_HASH_INIT: files written by
 * earlier versions hold them, and they must keep matching (--resume). */
#define HF_CAMPAIGN_HASH_INIT UINT64_C(1469598103934665603)

/* The fingerprint of a search of t with options o run by `engine` (auto resolved): shards
 * of another search are never merged with its own. Its text is fixed (old shards resume):
 * a test pins values written by earlier versions. out: 16 hex digits. */
hf_err_t hf_campaign_fingerprint(const hf_target_t *t, const hf_search_opts_t *o,
                                 hf_engine_t engine, char out[40]);

/* ------------------------------------------------------------------ the row library */

/* A stop that came in a phase of an entry: its message ("stopped on request while ...",
 * headfuse/stop.h) says also what was kept and what --resume will do (fmt, printf's). Other
 * errors, and a stop relayed from another rank, pass unchanged. */
hf_err_t hf_campaign_stop_said(hf_err_t e, const char *fmt, ...);
/* What a stop says before the search started, and once every unit is saved (with the
 * shard directory). */
#define HF_CAMPAIGN_NOT_STARTED                                                                    \
    "the search was not started, nothing new is saved: rerun the same command (with --resume "     \
    "if an earlier run saved units)"
#define HF_CAMPAIGN_UNITS_SAVED                                                                    \
    "every unit of the search is finished and saved in %s: rerun the same command with "           \
    "--resume to write the table (the search is prepared again, no unit is run again)"

/* The canonical order of supports: two key lists of len entries compared, and n key lists
 * sorted (idx[0..n) in their order). */
int hf_campaign_keys_cmp(const int64_t *a, const int64_t *b, long len);
hf_err_t hf_campaign_keys_sort(int64_t *const *keys, long n, long len, long *idx);

/* What decided a row: assembled into it in one place (hf_campaign_row_settle). */
typedef struct {
    const hf_bounds_t *bounds;
    const char *engine;           /* the engine that ran (auto resolved), or HF_ENGINE_NONE */
    long m_star;                  /* -1: no support found (or too large to hold) */
    int m_star_is_lb;             /* m* is LB, at any size (the certified shortcut) */
    int none;                     /* every size up to UB decided without a support */
    const hf_certificate_t *cert; /* a minimum proven over all keys, or NULL */
} hf_campaign_outcome_t;

/* The row's LB, UB, rule, engine, m* and status from its outcome. The status is
 * certified when LB = UB (as numbers), or when a minimum proven over all keys is the m*
 * found (then LB is m* and the rule the certificate's); else exhaustive (m* found),
 * infeasible (no support up to UB) or open (stopped at max_atoms). */
void hf_campaign_row_settle(hf_row_t *row, const hf_campaign_outcome_t *o);

/* ------------------------------------------------------------------ one entry in phases */

/* One call of hf_campaign_entry, shared by its phases as libuv's loop is by the steps of
 * uv_run. Each phase is collective and returns the agreed status; the entry stops at the
 * first error. The context owns what it made (the bounds, the search, the shard, the done
 * list, the supports); entry.c makes and clears it. */
typedef struct {
    /* the call */
    MPI_Comm comm;
    int rank, size;
    const hf_target_t *t;
    const hf_search_opts_t *opts;
    const hf_campaign_cfg_t *cfg;
    hf_row_t *row;
    hf_unit_record_t **units; /* rank 0's unit log, appended to */
    long *nunits;
    hf_supports_t sup; /* the row's supports, swapped into the caller's on success */
    /* the clock: the entry's start (MPI_Wtime, less the seconds of earlier runs of a resumed
     * row) and its second (time(NULL)), from which this run's shards take their stamp */
    double t0;
    long long started;
    /* admit */
    hf_bounds_t own;          /* the bounds, when the caller has none */
    const hf_bounds_t *b;     /* cfg->bounds, else &own */
    hf_campaign_outcome_t ro; /* what decided the row */
    int decided;              /* the bounds decided the row (settled): nothing is searched */
    /* create */
    hf_search_t *s;
    char fp[40];           /* the search's fingerprint */
    hf_sched_done_t *done; /* ranges finished by earlier runs */
    long ndone;
    hf_shard_t *shard; /* this rank's shard of this run, until the run ends */
    /* run */
    long last_m;          /* the largest size dealt */
    hf_sched_idle_t idle; /* the symmetry group, made by a rank while it would wait */
    hf_group_t *group;    /* that group, on the rank that made it (x->owner) */
    hf_sched_outcome_t oc;
    int owner; /* the rank that makes the group */
    /* reduce */
    int settled; /* the row settled from the run: its seconds and the idle report follow */
} hf_campaign_entry_ctx_t;

/* Admit (entry_admit.c): the memory limit, the bounds (once), the certified shortcut and the
 * checks of the row (hf_campaign_check_row: the one check of the search's options); a row
 * its bounds decide is settled (x->decided) with its product head, and nothing is built. */
hf_err_t hf_campaign_entry_admit(hf_campaign_entry_ctx_t *x);
/* Create (entry_create.c): the search and its fingerprint, the shard directory, the ranges
 * finished by earlier runs (--resume), and this run's shard on every rank. */
hf_err_t hf_campaign_entry_create(hf_campaign_entry_ctx_t *x);
/* Run (entry_run.c): the scheduler, every found support and finished range into the shard;
 * a stop is HF_ERR_INTERRUPTED saying what is saved. */
hf_err_t hf_campaign_entry_run(hf_campaign_entry_ctx_t *x);
/* After the row settled (x->settled, even when a later step failed): its seconds, and on
 * rank 0 (unless quiet) the share of the run each rank spent waiting. Collective. */
void hf_campaign_entry_report(hf_campaign_entry_ctx_t *x);
/* Reduce (entry_reduce.c): the row settled from the run's outcome (x->settled), rank 0's
 * merge of the shards into its sorted minimal supports and the unit log; a large row's
 * supports written by every rank. */
hf_err_t hf_campaign_entry_reduce(hf_campaign_entry_ctx_t *x);
/* Share (entry_share.c): the symmetry group from the rank that made it to every rank, and
 * the orbits of the minimal supports counted across the ranks. */
hf_err_t hf_campaign_entry_share(hf_campaign_entry_ctx_t *x);

/* Collective: a large row's n minimal supports (search.h, "large rows") from rank 0's
 * found records of size m (records[nrec], their texts: multipliers) into the file path, which
 * every rank writes from its slices (large.c); sup (initialised with m, d, dv) then refers
 * to it on every rank. The agreed status. */
hf_err_t hf_campaign_large_supports(MPI_Comm comm, const hf_search_t *s, char *const *records,
                                    long nrec, long m, const char *path, hf_supports_t *sup);

/* ------------------------------------------------------------------ job runs */

/* The state directory of a job run. */
typedef struct {
    const hf_job_t *job;
    char dir[4096];       /* RESULT.h5.shards */
    char file[4096 + 32]; /* scratch for path building */
} hf_campaign_state_t;

/* Paths in the state (job_paths.c; into st->file: valid until the next call). */
const char *hf_campaign_entry_dir(hf_campaign_state_t *st, long i); /* entry-<i>/ */
const char *hf_campaign_entry_row(hf_campaign_state_t *st, long i); /* entry-<i>.h5 */
const char *hf_campaign_state_path(hf_campaign_state_t *st, const char *name);
int hf_campaign_path_exists(const char *p);
/* The whole file as a string (hf_malloc'd) into *out; HF_ERR_IO "PATH: cannot read: ..."
 * (hf_read_stream's errors). */
hf_err_t hf_campaign_read_file(const char *path, char **out);

/* Entry i's search options: the one place a job entry becomes hf_search_opts_t. */
void hf_campaign_entry_opts(const hf_job_t *job, long i, hf_search_opts_t *so);

/* Rank 0, before any work: make the state directory and check it against the job.
 * Without --resume, state of the selected entries is refused (never mixed silently);
 * done[first..last] says which entries have their finished row. */
hf_err_t hf_campaign_prepare_state(hf_campaign_state_t *st, long first, long last, int resume,
                                   int whole, int *done);
/* Remove the state directory once RESULT.h5 holds everything. */
void hf_campaign_remove_state(hf_campaign_state_t *st);
/* Rank 0: keep entry i's finished row (atomically) and drop its shards. */
hf_err_t hf_campaign_save_row(hf_campaign_state_t *st, long i, const hf_target_t *t,
                              const hf_row_t *row, const hf_supports_t *sup,
                              hf_unit_record_t *units, long nunits, const char *cmdline,
                              const char *start, int ranks);
/* Rank 0: RESULT.h5 from every entry's finished row, in entry order. */
hf_err_t hf_campaign_assemble(hf_campaign_state_t *st, const char *out, const char *cmdline,
                              const char *start, int ranks, hf_result_t *res);

/* Rows of an existing RESULT.h5 that a --resume run keeps (a job extended after its
 * result was written): row_of[i] is entry i's row in res, or -1. */
typedef struct {
    hf_result_t res;
    long *row_of;
} hf_campaign_seed_t;
void hf_campaign_seed_clear(hf_campaign_seed_t *sd);
/* Rank 0, before any state is touched: match every row of the output to an entry with
 * the same definition; a row that matches none is refused unless force. */
hf_err_t hf_campaign_plan_seed(hf_campaign_state_t *st, const char *out, int force,
                               hf_campaign_seed_t *sd);
/* Rank 0, once the state matches the job: every kept row not finished in the state yet
 * becomes its entry's finished row. */
hf_err_t hf_campaign_apply_seed(hf_campaign_state_t *st, hf_campaign_seed_t *sd, int *done);
/* A finished RESULT.h5 that matches the job (rows in order): nothing left to do. */
int hf_campaign_result_complete(hf_campaign_state_t *st, const char *out);

/* A migration cut short (its journal is there): finish it (job_migrate.c). */
hf_err_t hf_campaign_finish_migration(hf_campaign_state_t *st);
/* The job changed since job.txt was written (old -> text): carry the state of every entry
 * with an unchanged definition over to its new index, or refuse naming the first entry
 * whose finished work would be dropped. */
hf_err_t hf_campaign_migrate_state(hf_campaign_state_t *st, char *old, const char *text);

/* Whether entry i's row can be made: its bounds into b (initialised), then
 * hf_campaign_check_row against lim (the box, the memory estimate), or, when plan is not
 * NULL, hf_campaign_plan_row into it. The message names the job file, line and entry. Not
 * collective. */
hf_err_t hf_campaign_check_entry(const hf_job_t *job, long i, hf_bounds_t *b,
                                 const hf_campaign_memory_t *lim, hf_campaign_plan_t *plan);

/* Collective, before any work: every entry first..last can be searched within lim (the
 * memory limit per rank), and its bounds (bounds[i], initialised by the caller) computed
 * once, on one rank, and shared with all. The error of the first failing entry wins,
 * whichever rank checked it (hf_agree_first); its message names the job file, line and
 * entry. */
hf_err_t hf_campaign_preflight(MPI_Comm comm, const hf_job_t *job, long first, long last,
                               const hf_campaign_memory_t *lim, hf_bounds_t *bounds);

#endif
