/* What the commands report, as values (part of the campaign module): `headfuse target`'s
 * bounds, certificate, product head and plan at a span, `check`'s decision of one key set,
 * `table`'s files and supports, `verify`'s witnesses, `run --list`'s plans and `approx`'s
 * summary. Each call fills a plain value (_init/_clear, under the ownership rule of
 * docs/architecture.md) that the command line prints in words, and gives it its documented
 * JSON form, which the command line writes as it is (--json). Nothing here prints.
 *
 * JSON integers: jansson holds 64 bits, so a larger integer is held as a marked string
 * that hf_json_dumps writes as bare digits (Python's json, jq 1.7 and other readers of
 * arbitrary-precision integers read it exactly). */
#ifndef HEADFUSE_REPORT_H
#define HEADFUSE_REPORT_H

#include <jansson.h>
#include <flint/fmpz.h>

#include "headfuse/campaign.h"
#include "headfuse/error.h"

/* ------------------------------------------------------------------ JSON */

/* A JSON integer when |x| < 2^53, else a decimal string (lb, ub). New reference. */
json_t *hf_json_bigint(const fmpz_t x);
/* A JSON integer of any size from its decimal text ("-1": null; text that is not a
 * nonnegative integer stays a string). New reference; NULL when out of memory. */
json_t *hf_json_decimal(const char *decimal);
/* json_dumps (compact, key order preserved) with hf_json_decimal's integers written as
 * numbers. Free with free(); NULL when out of memory. */
char *hf_json_dumps(const json_t *j);

/* The fields of a table row, in the documented order (`headfuse table`'s columns). */
typedef enum {
    HF_FIELD_NAME,
    HF_FIELD_D,
    HF_FIELD_SPAN,
    HF_FIELD_M_STAR,
    HF_FIELD_LB,
    HF_FIELD_LB_RULE,
    HF_FIELD_UB,
    HF_FIELD_STATUS,
    HF_FIELD_ENGINE,
    HF_FIELD_MAX_ATOMS,
    HF_FIELD_N_MIN_RAW,
    HF_FIELD_N_MIN_SYM,
    HF_FIELD_GROUP_ORDER,
    HF_FIELD_NODES,
    HF_FIELD_UNITS,
    HF_FIELD_SECONDS,
    HF_FIELD_COUNT
} hf_field_t;
/* Their names: "name", "d", ..., "seconds". */
extern const char *const hf_report_row_fields[HF_FIELD_COUNT];
/* Field i of a row as text: m_star exact at any size, seconds with 3 decimals, "" for an
 * unknown value (-1). buf (n bytes, at least HF_BIGINT_LEN) may hold the text. */
const char *hf_report_row_field(const hf_row_t *r, int i, char *buf, size_t n);
/* The upper end of what a row proves over all integer keys (docs/math.md §1.4): a support
 * within the span is one over all keys, so the smaller of its m* within the span (when it
 * has one) and UB, as decimal text (buf: HF_BIGINT_LEN bytes, may hold m*). */
const char *hf_report_row_upper(const hf_row_t *r, char *buf);
/* A table row with the documented field names (README.md, docs/hdf5-format.md). New
 * reference. */
json_t *hf_report_row_json(const hf_row_t *r);
/* A row's supports into its JSON object o: "supports" (the keys of each) and "witnesses"
 * (their exact weights and values, as check --json writes heads). A support that cannot
 * be read is left out. */
void hf_report_supports_json(json_t *o, const hf_supports_t *s);
/* A row's supports as text: their keys in the --keys syntax, "0,0;1,0 | 0,0;0,1"
 * (malloc'd; NULL when one cannot be read, the message saying why). */
char *hf_report_supports_text(const hf_supports_t *s);
/* A row's plan (hf_campaign_plan_row) in words, beside hf_campaign_plan_engine and
 * hf_campaign_cone_warning (`target --span`, `run --list`; docs/cluster.md, "A plan before
 * a run"): the engine, the ranks kept busy, the memory per rank and per node, the time
 * with its basis, and the cone's warning ("" when none). */
typedef struct {
    char engine[96], ranks[320], memory[256], time[224];
    char warning[512];
} hf_report_plan_words_t;
void hf_report_plan_words(const hf_campaign_plan_t *p, hf_report_plan_words_t *w);
/* The nodes of a plan in words: "64 rank(s) on 1 node(s) (64 a node), a node's memory
 * 250 GiB (SOURCE)". */
void hf_report_plan_nodes(const hf_campaign_memory_t *lim, char *buf, size_t n);
/* A plan (hf_campaign_plan_t): engine, search, large_row, unknowns, warning, ranks,
 * busy_ranks, slices, memory_per_rank, node_ranks, memory_per_node, seconds, time_basis
 * (null where unknown or without a search). New reference. */
json_t *hf_report_plan_json(const hf_campaign_plan_t *p);

/* ------------------------------------------------------------------ target */

/* The product head is built and verified exactly up to this many atoms. */
#define HF_REPORT_PRODUCT_MAX (1L << 16)

/* What `headfuse target` says of a target: the best lower bound with its rule, the upper
 * bound, the certificate over all keys, the product head, the memory of P/Q. */
typedef struct {
    double fraction_bytes;  /* hf_fraction_estimate: P/Q on each rank of a search */
    hf_lower_t low;         /* the bounds' LB with its rule (hf_bounds_lower_info) */
    hf_certificate_t cert;  /* the 2-D or 3-D argument (hf_search_certify) */
    fmpz_t lb;              /* the best lower bound: cert's or low's (hf_search_best_lower) */
    const char *lb_rule;    /* its rule (static) */
    fmpz_t ub;              /* the product construction's upper bound */
    int ub_exact;           /* 0: too large to merge keys (the product of head sizes) */
    int lb_ub;              /* 1: low.lb = ub certifies m* (docs/math.md §1.4) */
    int certified;          /* m* proven over all keys: lb_ub or cert.certified */
    int product;            /* 1: UB <= HF_REPORT_PRODUCT_MAX, product_head built */
    hf_head_t product_head; /* the product head, verified exactly (empty unless product) */
    double product_err;     /* its numeric cross-check's largest error */
} hf_report_target_t;

void hf_report_target_init(hf_report_target_t *r); /* empty; cannot fail */
void hf_report_target_clear(hf_report_target_t *r);
/* Fill r (initialised), replacing its value; on failure r keeps it. A product head that
 * fails exact verification is HF_ERR_INTERNAL. Not collective. */
hf_err_t hf_report_target(const hf_target_t *t, hf_report_target_t *r);
/* The report as `target --json` writes it: name, d, dv, heads, head_atoms, lb, lb_rule,
 * newton_vertices, ub, ub_exact, certified, m_star_certified, certified_rule, span_free,
 * span_free_note, fraction_bytes_estimate, product_head. New reference. */
json_t *hf_report_target_json(const hf_target_t *t, const hf_report_target_t *r);
/* The 2-D or 3-D argument's counts ("span_free"), or null when none ran. New reference. */
json_t *hf_report_certificate_json(const hf_certificate_t *c);

/* What a plan at a span is asked for (`target --span`): the span, the ranks and nodes
 * (>= 1), --max-memory and --node-memory's text (NULL: not given). */
typedef struct {
    int span, ranks, nodes;
    const char *max_memory, *node_memory;
} hf_report_span_opts_t;

/* A search of the target at a span, before it runs: what `search` and `run` check
 * (hf_campaign_check_row) and its plan, against the limits, not refused here. */
typedef struct {
    int span;
    int shortcut;             /* hf_campaign_certified's: 1 certified, 2 no support fits */
    hf_err_t refused;         /* HF_OK, or why no search can be built (hf_campaign_plan_row) */
    char why[2048];           /* the message of refused ("" when HF_OK) */
    hf_campaign_memory_t lim; /* the limits (hf_campaign_memory_plan) */
    hf_campaign_plan_t plan;  /* when refused is HF_OK; plan.mem the estimate per rank */
    int fits;                 /* plan.mem.total within lim.bytes */
    int node_fits;            /* the ranks of a node within its memory (or not checked) */
} hf_report_span_t;

/* Fill r (a plain value, no _clear), replacing its value; on failure r keeps it. The errors
 * are those of the limits and the bounds; a search that cannot be built is r->refused, not
 * an error (but HF_ERR_NOMEM is). */
hf_err_t hf_report_span(const hf_target_t *t, const hf_report_span_opts_t *o, hf_report_span_t *r);
/* As `target --json --span` writes it ("memory"): span, search, refused, bytes, ranks,
 * large_row, process, fraction, box, keys, bytes_per_key, fits, limit, limit_source and
 * plan (hf_report_plan_json with nodes, node_memory_bytes, node_memory_source, node_fits,
 * node_checked). New reference. */
json_t *hf_report_span_json(const hf_report_span_t *r);

/* ------------------------------------------------------------------ check */

/* `headfuse check`: whether m keys carry one head equal to the target. */
typedef struct {
    long m;
    int feasible;
    int reason;        /* hf_reason_t (exact.h: not included, its FLINT headers clash with
                        * PETSc's complex I in approx's command) */
    hf_head_t witness; /* when feasible: checked again by the independent verifier */
    double err;        /* the numeric cross-check at 64 queries */
} hf_report_check_t;

void hf_report_check_init(hf_report_check_t *r); /* empty; cannot fail */
void hf_report_check_clear(hf_report_check_t *r);
/* Decide keys[m * t->d] exactly (P/Q, hf_exact_check) into r (initialised), replacing its
 * value; on failure r keeps it. Infeasible is an outcome, not an error; a witness that
 * fails the independent verifier is HF_ERR_INTERNAL. Not collective. */
hf_err_t hf_report_check(const hf_target_t *t, long m, const int64_t *keys, hf_report_check_t *r);
/* As `check --json` writes it: target, m, feasible, reason, reason_text and, when
 * feasible, witness, verified, max_abs_error. New reference. */
json_t *hf_report_check_json(const hf_target_t *t, const hf_report_check_t *r);

/* ------------------------------------------------------------------ table */

/* The files of `headfuse table`, read before anything is printed. */
typedef struct {
    int n; /* the files kept, paths[0..n) (the caller's strings) */
    const char **paths;
    int nmissing; /* files skipped: they do not exist while another does */
    const char **missing;
    unsigned char *missing_shards; /* 1: its PATH.shards/ holds a stopped run */
    int napprox;      /* how many of the kept files are APPROX.h5 (hf_approx_file_detect) */
    hf_result_t *res; /* the results of the kept files when none is APPROX.h5 */
    int nread;        /* how many of res hold a value to clear */
} hf_report_table_t;

void hf_report_table_init(hf_report_table_t *r); /* empty; cannot fail */
void hf_report_table_clear(hf_report_table_t *r);
/* The n files of a table into r (initialised), replacing its value: a file that does not
 * exist is skipped while another exists (a sweep's table prints while some of its files
 * are still to come); none existing, every file is kept (the reader's own message then
 * says so, exit 4, with the hint when FILE.shards/ holds a stopped run). */
hf_err_t hf_report_table(const char *const *paths, int n, hf_report_table_t *r);
/* Then read them into r's napprox and res: APPROX.h5 files are counted (HF_ERR_CORRUPT
 * when one cannot be opened safely) and, when there is none, every result is read
 * (hf_campaign_result_read: the messages name the file). On failure r keeps its value. */
hf_err_t hf_report_table_read(hf_report_table_t *r);

/* ------------------------------------------------------------------ verify */

/* What `verify` reports as it goes, on rank 0 (ctx is passed back; NULL: not reported): */
typedef struct {
    /* support j of row i of r failed, and why */
    void (*failed)(void *ctx, const hf_result_t *r, long i, long j, const char *why);
    /* row i is done: bad of its witnesses failed; maxerr is the numeric cross-check's
     * largest error over the verified ones (NaN shows) */
    void (*row)(void *ctx, const hf_result_t *r, long i, long bad, double maxerr);
    void *ctx;
} hf_report_verify_fns_t;

/* Collective: every witness stored in the result file path (read on every rank) checked
 * against the target stored with its row by the independent verifier: a witness held in
 * memory on rank 0, a large one slice by slice across the ranks (hf_campaign_verify_large).
 * fns (or NULL) hears of each failure and each row. *failed: how many failed, on every rank. A row
 * whose target cannot be read or does not match its supports is HF_ERR_CORRUPT; errors are agreed.
 */
hf_err_t hf_report_verify(MPI_Comm comm, const char *path, const hf_report_verify_fns_t *fns,
                          long *failed);

/* ------------------------------------------------------------------ run --list */

/* A job checked and planned without MPI (`run --list`). */
typedef struct {
    hf_job_t job;
    hf_campaign_memory_t lim;
    hf_campaign_plan_t *plan; /* one per entry */
    long big;                 /* the entry with the largest estimate per rank, -1: none
                               * (every entry is certified by its bounds) */
} hf_report_job_t;

void hf_report_job_init(hf_report_job_t *r); /* empty; cannot fail */
void hf_report_job_clear(hf_report_job_t *r);
/* Load the job at path (out: --out or NULL) into r (initialised), replacing its value (on
 * failure r keeps it), its limits for `ranks` ranks on `nodes` nodes (hf_campaign_memory_plan) and
 * every entry checked and planned as the preflight does (hf_campaign_job_check). */
hf_err_t hf_report_job(const char *path, const char *out, const char *max_memory,
                       const char *node_memory, int ranks, int nodes, hf_report_job_t *r);
/* As `run --list --json` writes it: job, output, max_memory_bytes, max_memory_source,
 * ranks, nodes, node_ranks, node_memory_bytes, node_memory_source, entries (index,
 * target, span, max_atoms, prune, engine, engine_requested, line, memory_bytes, plan).
 * New reference. */
json_t *hf_report_job_json(const hf_report_job_t *r);

/* ------------------------------------------------------------------ approx */

/* What an approximation table says about the exact minimum (docs/approx.md): */
typedef enum {
    HF_VERDICT_NONE,      /* no budget reached rounding level */
    HF_VERDICT_CONFIRMED, /* first at the known exact head's size, and LB = that size */
    HF_VERDICT_AT_EXACT,  /* first at the known exact head's size */
    HF_VERDICT_BELOW,     /* first below it: a smaller exact head probably exists */
    HF_VERDICT_AT_LB,     /* first at the exact lower bound: numerically m* */
    HF_VERDICT_IN_RANGE   /* first at m, nothing more to say */
} hf_approx_verdict_t;

/* The verdict of r (with p's lower bound) and m, the first budget at rounding level (0
 * for HF_VERDICT_NONE). */
hf_approx_verdict_t hf_report_approx_verdict(const hf_approx_result_t *r, const hf_approx_prov_t *p,
                                             int *m);

/* A mean squared error as RMS (infinite when it is not finite). */
double hf_report_rms(double mse);
/* A row of the table as JSON (file first when not NULL): name, d, m, train_mse, test_mse,
 * train_rms, test_rms, restarts, best_restart, start, iterations, converged_reason, status,
 * seconds (null when not finite). New reference. */
json_t *hf_report_approx_row_json(const hf_approx_result_t *r, const hf_approx_row_t *row,
                                  const char *file);
/* The whole result as `approx --json` writes it: name, d, dv, the fits' settings, target_rms,
 * exact_atoms, exact_source, lower_bound, ranks, file (when not NULL) and rows. New
 * reference. */
json_t *hf_report_approx_json(const hf_approx_result_t *r, const hf_approx_prov_t *p,
                              const char *file);

#endif
