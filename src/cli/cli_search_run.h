/* One search of one target at one span across the ranks, with shards, resume and the
 * reduction to a table row. Shared by `headfuse search` and (later) `headfuse run`. */
#ifndef HF_CLI_SEARCH_RUN_H
#define HF_CLI_SEARCH_RUN_H

#include <mpi.h>

#include "headfuse/search.h"
#include "headfuse/store.h"
#include "headfuse/target.h"

typedef struct {
    const char *shard_dir; /* where this entry's shards live */
    int resume;
    int quiet;
    int row;                  /* row index in the result (unit log) */
    const char *command_line; /* provenance */
    const char *max_name;     /* how the user gave max_atoms, for messages ("--max-atoms") */
} cli_search_cfg_t;

/* Collective. On rank 0, fills row, supports (initialised by the call) and appends the
 * unit log to units/nunits (realloc'd). Returns HF_ERR_INTERRUPTED after a stop
 * signal (shards keep the finished units). Errors are agreed on by all ranks. */
hf_err_t cli_search_entry(MPI_Comm comm, const hf_target_t *t, const hf_search_opts_t *sopts,
                          const cli_search_cfg_t *cfg, hf_row_t *row, hf_supports_t *sup,
                          hf_unit_record_t **units, long *nunits);

/* The name of the search engine that options select, as a row records it
 * (hf_row_t.engine): "layered" (the pruned search), "plain" (--no-prune, the reference
 * enumerator). The one place that names them: a new engine adds its name here. */
const char *cli_search_engine(const hf_search_opts_t *o);

/* Whether row i of a result is the search of the target whose JSON is t_json with
 * options o: the same target, span, max_atoms and engine (a row of a format-1 file,
 * whose settings are unknown, never matches). Not collective. */
int cli_row_matches(const hf_result_t *r, long i, const char *t_json, const hf_search_opts_t *o);

/* When LB = UB already certifies a row, its one size m* is still enumerated to count
 * the minimal supports, unless the box has more points or m* more atoms than these
 * (one exact test of a support of thousands of atoms is out of proportion): then the
 * product head is stored and the counts are left unknown. */
#define CLI_CERTIFIED_ENUM_POINTS 65536
#define CLI_CERTIFIED_ENUM_ATOMS 4096

/* Whether a row is certified by the bounds alone (see above). Writes LB and UB as
 * decimal strings (n bytes) and the rule that gives LB (rn bytes). A max_atoms below LB
 * is HF_ERR_INPUT naming it as max_name: no head of fewer atoms than LB equals the
 * target, for any keys, so nothing would be searched. Not collective. */
hf_err_t cli_certified_shortcut(const hf_target_t *t, const hf_search_opts_t *o,
                                const char *max_name, int *shortcut, char *lb_out, char *ub_out,
                                size_t n, char *rule_out, size_t rn);

#endif
