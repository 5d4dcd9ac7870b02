/* Campaigns: the work behind `headfuse search` and `headfuse run`, as a library.
 *
 * A campaign searches rows (a target at a span) across the MPI ranks: each rank writes
 * its shard (store), an interrupted search resumes from the finished units, and rank 0
 * reduces the shards to one table row with its minimal supports. A job file is run
 * entry by entry with its state in RESULT.h5.shards/ (entry rows, a journalled move of
 * an edited job's state) until RESULT.h5 holds every row.
 *
 * Every function taking an MPI_Comm is collective; errors are agreed on by all ranks
 * (headfuse/agree.h), so every rank returns the same code and the rank that holds the
 * message reports it (hf_agree_reporter). The command line parses and prints only. */
#ifndef HEADFUSE_CAMPAIGN_H
#define HEADFUSE_CAMPAIGN_H

#include <mpi.h>
#include <stddef.h>

#include "headfuse/approx.h"
#include "headfuse/approx_store.h"
#include "headfuse/bounds.h"
#include "headfuse/job.h"
#include "headfuse/search.h"
#include "headfuse/store.h"
#include "headfuse/target.h"

/* headfuse/symmetry.h (not included: its FLINT headers clash with PETSc's complex I) */
typedef struct hf_group_s hf_group_t;

/* ------------------------------------------------------------------ memory */

/* The memory a search may take per rank (docs/targets.md, "Limits"; docs/cluster.md,
 * "Memory"): bytes, and where the figure comes from, for messages. */
typedef struct {
    double bytes;
    char source[256]; /* "--max-memory 4G", "HEADFUSE_MAX_MEMORY=4G", ... */
    int ranks;        /* the ranks of the run the estimates are for (1 unless the caller sets
                       * it: a large row's share of P/Q depends on it) */
    /* A plan's nodes (hf_campaign_memory_plan; 0 otherwise: no check per node): the ranks
     * spread over `nodes` nodes, the fullest holding node_ranks = ceil(ranks / nodes),
     * each node node_bytes of memory (0: unknown) from node_source. */
    int nodes, node_ranks;
    double node_bytes;
    /* whether the ranks of a node must fit node_bytes: a node's memory given
     * (--node-memory, SLURM_MEM_PER_NODE), or this machine's when it also sets the limit
     * per rank (a limit given by the user on a login node is about other nodes) */
    int node_check;
    char node_source[128]; /* "--node-memory 250G", "SLURM_MEM_PER_NODE 250 GiB", ... */
} hf_campaign_memory_t;

/* The limit, the first of: option (the text of --max-memory, or NULL), the job's
 * max_memory (job, or NULL), the environment's HEADFUSE_MAX_MEMORY, and this machine's
 * memory per rank: Slurm's allocation (SLURM_MEM_PER_CPU times SLURM_CPUS_PER_TASK, or
 * SLURM_MEM_PER_NODE over node_ranks) inside a Slurm job, else the physical memory over
 * node_ranks (the ranks of the run on this node, >= 1). A bad size is HF_ERR_INPUT
 * naming the option or the variable. Not collective. */
hf_err_t hf_campaign_memory_limit(const char *option, const hf_job_t *job, int node_ranks,
                                  hf_campaign_memory_t *out);
/* The limits of a plan (`run --list`, `target --span`, `slurm/submit --dry-run`): `ranks`
 * ranks on `nodes` nodes (>= 1 each; nodes above ranks count as ranks), a node's memory
 * from node_memory (the text of --node-memory: slurm/submit passes sbatch's --mem), else
 * SLURM_MEM_PER_NODE, else this machine's physical memory; the limit per rank as
 * hf_campaign_memory_limit gives it for node_ranks ranks a node, except that a node_memory
 * given replaces the machine's memory there (node_memory / node_ranks); node_check as
 * above. A bad size is
 * HF_ERR_INPUT naming the option. Not collective. */
hf_err_t hf_campaign_memory_plan(const char *max_memory, const char *node_memory,
                                 const hf_job_t *job, int ranks, int nodes,
                                 hf_campaign_memory_t *out);
/* Collective: the ranks of comm on this rank's node. */
int hf_campaign_node_ranks(MPI_Comm comm);

/* The checks of one row before anything is built, the same for `headfuse search`, `run`,
 * `run --list`, `slurm/submit --dry-run` and a job's preflight: LB and UB fit a table row
 * (HF_BIGINT_LEN - 1 digits); unless the bounds certify the row alone (shortcut), the
 * search's options and box (hf_search_check) and its memory estimate (hf_search_memory,
 * into est when not NULL) against lim: more is HF_ERR_LIMIT, naming the target, the
 * estimate, the limit with its source, the option that raises it and `headfuse target`
 * for the bounds only. When lim plans nodes (hf_campaign_memory_plan) and knows their
 * memory, the ranks of the fullest node times the estimate must fit it too: more is
 * HF_ERR_LIMIT naming the ranks, the estimate, their product and the node's memory with
 * its source ("64 ranks x 65.7 GiB = 4.11 TiB on one node, over ..."). Not collective. */
hf_err_t hf_campaign_check_row(const hf_target_t *t, const hf_search_opts_t *so,
                               const hf_bounds_t *b, int shortcut, const hf_campaign_memory_t *lim,
                               hf_search_memory_t *est);

/* ------------------------------------------------------------------ plans */

/* The cost model of a large row's search time (docs/cluster.md, "A plan before a run"):
 *     seconds = keys x (ALPHA + BETA / ranks),   keys = UB (= |supp Q| for chain),
 * fitted by least squares on the relative error to the search times of chain:d=12..16 at
 * span 3 on 1 and 2 ranks (docs/performance.md §18: 3.15 s to 215.3 s, every one within 12 %
 * of the model) on the project's 2-core 2026 x86 machine. ALPHA is what every rank repeats
 * (the class tables' exchange and merge, the double description, the candidates' tests),
 * BETA / ranks what is divided (the slices, the points' classes, the witness). */
#define HF_CAMPAIGN_LARGE_SECONDS_ALPHA 0.32e-6
#define HF_CAMPAIGN_LARGE_SECONDS_BETA 1.51e-6
#define HF_CAMPAIGN_TIME_BASIS                                                                     \
    "cost model of docs/cluster.md, fitted on chain at span 3 on a 2-core 2026 x86 machine; "      \
    "scale by your cores' speed"

/* A cone of more unknowns than this (auto's own limit for the cone where the layered
 * engine's slack is 0) may keep hundreds of thousands of rays for minutes to hours:
 * chain:d=3 at span 6 (100 unknowns) took 3.5 min and 822 MB, a 4-variable target at span
 * 4 (144 unknowns) kept 252,016 rays after 165 s (docs/search.md, "Which engine auto
 * takes"). The plan and the search warn of it before the double description starts. */
#define HF_CAMPAIGN_CONE_WARN_UNKNOWNS 64

/* A row's plan before it runs (`run --list`, `target --span`, `slurm/submit --dry-run`). */
typedef struct {
    int shortcut;           /* hf_campaign_certified's: 1 LB = UB certifies it, 2 no support fits
                             * the span (infeasible); then no search runs and the rest is 0 */
    hf_engine_t engine;     /* the engine that will run (auto resolved: hf_search_engine_planned) */
    long unknowns;          /* the cone's unknowns |B_R| */
    int busy;               /* ranks kept busy by work dealt before the search's preparation: a
                             * large row's slices of P/Q over the ranks (min(ranks, slices)); 0
                             * when it is known only after the preparation (the cone's
                             * candidates, the layered and plain engines' units and cells) */
    hf_search_memory_t mem; /* per rank (mem.ranks ranks; mem.total 0 without a search) */
    int node_ranks;         /* the ranks on the fullest node (1 unless lim plans nodes) */
    double node_total;      /* node_ranks x mem.total */
    double keys;            /* the cost model's keys (UB), large rows */
    double seconds;         /* the search's estimated seconds; < 0: unknown (no basis) */
    int cone_warn;          /* an ordinary cone row of more than HF_CAMPAIGN_CONE_WARN_UNKNOWNS
                             * unknowns: possibly hours (hf_campaign_cone_warning) */
} hf_campaign_plan_t;

/* The warning of a cone with `unknowns` unknowns, in words, with what to do. */
void hf_campaign_cone_warning(long unknowns, char *buf, size_t n);

/* The plan of one row: hf_campaign_check_row (every check, the refusals included) and
 * then the engine, the busy ranks and the time as above. Not collective. */
hf_err_t hf_campaign_plan_row(const hf_target_t *t, const hf_search_opts_t *so,
                              const hf_bounds_t *b, int shortcut, const hf_campaign_memory_t *lim,
                              hf_campaign_plan_t *plan);
/* The plan's engine in words: "cone", "layered", "plain", "none (LB = UB)" or "none (no
 * support fits the span)". */
const char *hf_campaign_plan_engine(const hf_campaign_plan_t *plan);

/* ------------------------------------------------------------------ one row */

typedef struct {
    const char *shard_dir; /* where this entry's shards live */
    int resume;
    int quiet;
    int row;                  /* row index in the result (unit log) */
    const char *command_line; /* provenance */
    const char *max_name;     /* how the user gave max_atoms, for messages ("--max-atoms") */
    /* the target's bounds when computed already (a job's preflight), else NULL: the entry
     * computes them, once, for the certified shortcut, the search's sizes and the row */
    const hf_bounds_t *bounds;
    /* the memory limit per rank, or NULL: this machine's (hf_campaign_memory_limit) */
    const hf_campaign_memory_t *memory;
} hf_campaign_cfg_t;

/* The target's symmetry group (symmetry.h) for the row of search s of t: from the P/Q the
 * search holds, or for a large row, which holds only its slices, from the whole P/Q built
 * once where the group needs it (hf_group_needs_fraction), else the group unknown. The
 * search never needs the group: the campaign makes it on one rank while that rank would
 * wait (hf_sched_idle_t). *out: a new group (hf_group_destroy). Not collective. */
hf_err_t hf_campaign_group(const hf_search_t *s, const hf_target_t *t, hf_group_t **out);

/* Collective: the number of orbits under grp among the sorted supports of sup (read on
 * rank 0 only; the others may pass an empty one) into *n_sym on rank 0: -1 when the
 * group's order is unknown and there are several supports; one support is one orbit.
 * The representatives (hf_group_orbit_rep) are computed across the ranks, the stop flag
 * polled between them (HF_ERR_INTERRUPTED on every rank after a stop). */
hf_err_t hf_campaign_count_orbits(MPI_Comm comm, const hf_group_t *grp, const hf_supports_t *sup,
                                  long *n_sym);

/* Collective: support j of sup, held in a file (a large row's: every rank reads it, the same
 * path), checked against t by the independent verifier across the ranks of comm, each rank
 * a run of its slices (docs/exact-test.md §7b): *ok = 1 when it equals t, else *why says
 * why (static text); a witness that is not a multiple of the target's denominator is checked
 * whole on rank 0. *maxerr: the numeric cross-check's largest error at a few queries. The
 * same on every rank; errors agreed (a damaged file: HF_ERR_CORRUPT naming it). */
hf_err_t hf_campaign_verify_large(MPI_Comm comm, const hf_target_t *t, const hf_supports_t *sup,
                                  long j, int *ok, const char **why, double *maxerr);

/* Collective: one row searched across the ranks (admitted, created, run, reduced, shared:
 * src/campaign/entry.c). On rank 0, fills row, replaces sup (initialised by the caller, as
 * hf_supports_init leaves it, on every rank; kept on error) with the row's minimal supports
 * and appends the unit log to units/nunits (realloc'd). Returns HF_ERR_INTERRUPTED after a
 * stop signal (shards keep the finished units). */
hf_err_t hf_campaign_entry(MPI_Comm comm, const hf_target_t *t, const hf_search_opts_t *sopts,
                           const hf_campaign_cfg_t *cfg, hf_row_t *row, hf_supports_t *sup,
                           hf_unit_record_t **units, long *nunits);

/* Whether row i of a result is the search of the target whose JSON is t_json with
 * options o: the same target, span, max_atoms and engine (a row of a format-1 file,
 * whose settings are unknown, never matches). Not collective. */
int hf_campaign_row_matches(const hf_result_t *r, long i, const char *t_json,
                            const hf_search_opts_t *o);

/* When LB = UB already certifies a row, its one size m* is still enumerated to count
 * the minimal supports, unless the box has more points or m* more atoms than these
 * (one exact test of a support of thousands of atoms is out of proportion): then the
 * product head is stored and the counts are left unknown. 3^12 points: W_d at span 2 is
 * counted up to d = 12 (8.4 million candidates, 70 s on 2 ranks; docs/performance.md
 * §17). */
#define HF_CERTIFIED_ENUM_POINTS 531441
#define HF_CERTIFIED_ENUM_ATOMS 4096

/* Whether a row is decided without a search: *shortcut = 1 when its bounds b certify it
 * alone (LB = UB, the product's exact size, the product head fits the span; see above), 2
 * when it is infeasible (a pruning search whose span is below an extent of Newt(Q): no
 * support fits, docs/math.md §5.6), else 0. A max_atoms below LB is HF_ERR_INPUT naming it
 * as max_name: no head of fewer atoms than LB equals the target, for any keys, so nothing
 * would be searched. Not collective. */
hf_err_t hf_campaign_certified(const hf_target_t *t, const hf_search_opts_t *o,
                               const hf_bounds_t *b, const char *max_name, int *shortcut);

/* What a one-row search writes (`headfuse search`). */
typedef struct {
    const char *out; /* RESULT.h5; its shards go to OUT.shards/ */
    int force, resume, quiet;
    const char *command_line, *start; /* provenance */
    const char *max_memory;           /* --max-memory's text, or NULL */
} hf_campaign_search_opts_t;

/* Collective: search t with so into o->out. An existing out is refused unless force;
 * with resume, an existing result of this very search is kept (*complete = 1, nothing
 * searched). On rank 0, row is the row written (or kept). */
hf_err_t hf_campaign_search(MPI_Comm comm, const hf_target_t *t, const hf_search_opts_t *so,
                            const hf_campaign_search_opts_t *o, hf_row_t *row, int *complete);

/* ------------------------------------------------------------------ job files */

typedef struct {
    int resume, force, quiet;
    int collect;              /* write RESULT.h5 from the finished entries only */
    long entry;               /* run only this entry (keeping its row in the state), or -1 */
    const char *command_line; /* provenance; NULL (out of memory) is HF_ERR_NOMEM */
    const char *start;
    const char *max_memory; /* --max-memory's text, or NULL */
} hf_campaign_job_opts_t;

/* Not collective (`headfuse run --list`, no MPI): every entry of the job checked as the
 * preflight checks it (its bounds, hf_campaign_check_row against lim), its plan into
 * plan[i] (hf_campaign_plan_row; plan may be NULL). The first failing entry's error, its
 * message prefixed with the job file, line and entry. */
hf_err_t hf_campaign_job_check(const hf_job_t *job, const hf_campaign_memory_t *lim,
                               hf_campaign_plan_t *plan);

/* Called on rank 0 after entry i of n finished in this run. */
typedef void (*hf_campaign_row_fn)(void *ctx, long i, long n, const hf_row_t *row);

typedef struct {
    int complete;   /* the output already held every row: nothing was run */
    int entry_done; /* the selected entry had finished earlier */
    long ran, skipped;
} hf_campaign_job_outcome_t;

/* Collective: run the job (docs/jobs.md) with its state in OUTPUT.shards/. On rank 0,
 * res (initialised by the caller) receives the rows: the result written, or the one
 * row of the selected entry, or the existing output when it was complete. */
hf_err_t hf_campaign_job_run(MPI_Comm comm, const hf_job_t *job, const hf_campaign_job_opts_t *o,
                             hf_campaign_row_fn on_row, void *ctx, hf_result_t *res,
                             hf_campaign_job_outcome_t *oc);

/* ------------------------------------------------------------------ approximations */

typedef struct {
    const char *out;  /* APPROX.h5 (checked by the caller: hf_campaign_check_output) */
    const char *from; /* a RESULT.h5 whose first witness of the target warm-starts, or NULL */
    const char *command_line, *start; /* provenance; command_line NULL -> HF_ERR_NOMEM */
} hf_campaign_approx_opts_t;

/* Collective: fit o's budgets (hf_approx_run) and write ao->out on rank 0. With from,
 * the first minimal support stored for t's name is checked exactly against t and used
 * as the exact warm start (a missing row, other dimensions or a witness that is not
 * exact -> HF_ERR_INPUT naming --from). res and prov are initialised by the caller and
 * hold, on rank 0, what was written. */
hf_err_t hf_campaign_approx(MPI_Comm comm, const hf_target_t *t, hf_approx_opts_t *o,
                            const hf_campaign_approx_opts_t *ao, hf_approx_result_t *res,
                            hf_approx_prov_t *prov);

/* ------------------------------------------------------------------ result files */

/* Current time as ISO 8601 UTC ("2026-01-31T12:00:00Z"). */
void hf_campaign_iso_time(char *buf, size_t n);

/* The command line as a result records it: "headfuse ARG ..." with arguments holding
 * spaces or quotes in single quotes (malloc'd; NULL when out of memory). argv are the
 * arguments after the program name. */
char *hf_campaign_command_line(int argc, char **argv);

/* Fill the provenance of a result (version, commit, command line, host, start and end
 * time, ranks), replacing what was there. cmdline NULL -> HF_ERR_NOMEM. */
hf_err_t hf_campaign_provenance(hf_result_t *res, const char *cmdline, const char *start,
                                int ranks);

/* hf_result_read for a file named by the user: when it does not exist but PATH.shards/
 * does, the message says that a search or run was stopped before writing it and that
 * --resume finishes it. */
hf_err_t hf_campaign_result_read(const char *path, hf_result_t *r);

/* When the environment sets HF_EXPECT_RANKS=N (batch scripts set it to SLURM_NTASKS),
 * fail with HF_ERR_MPI unless the MPI job has exactly N ranks: N singletons started by a
 * misconfigured launcher would otherwise all write the same files. */
hf_err_t hf_campaign_check_ranks(int size);

/* Before any work: whether the output file `path` given by option `opt` ("--out") can
 * be written. Its directory must exist and be writable (HF_ERR_INPUT "OPT PATH: cannot
 * write 'PATH': directory D: ..."); an existing file is refused unless force
 * (HF_ERR_INPUT "OPT PATH: exists; give --force to overwrite it", followed by
 * ", or KEEP" when keep is not NULL). Not collective. */
hf_err_t hf_campaign_check_output(const char *opt, const char *path, int force, const char *keep);

/* Testing hooks (src/campaign/faults.c, docs/reliability.md, "Fault injection"), read
 * from the environment once at start, before MPI: HEADFUSE_FAIL_H5_WRITE=N and
 * HEADFUSE_FAIL_ALLOC=N make the Nth store write call / allocation fail
 * (HEADFUSE_FAULT_RANK=R: on rank R only); HEADFUSE_FAULT_COUNT=1 prints how many of
 * each were made at exit. A malformed value -> HF_ERR_INPUT naming the variable. */
hf_err_t hf_campaign_faults_from_env(void);

#endif
