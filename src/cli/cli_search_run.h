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
} cli_search_cfg_t;

/* Collective. On rank 0, fills row, supports (initialised by the call) and appends the
 * unit log to units/nunits (realloc'd). Returns HF_ERR_INTERRUPTED after a stop
 * signal (shards keep the finished units). Errors are agreed on by all ranks. */
hf_err_t cli_search_entry(MPI_Comm comm, const hf_target_t *t, const hf_search_opts_t *sopts,
                          const cli_search_cfg_t *cfg, hf_row_t *row, hf_supports_t *sup,
                          hf_unit_record_t **units, long *nunits);

/* Boxes with more points than this are not enumerated when LB = UB already certifies
 * the row: the product head is stored and the counts are left unknown. */
#define CLI_CERTIFIED_ENUM_POINTS 4096

#endif
