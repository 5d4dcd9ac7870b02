/* The one test-control seam, as SQLite's sqlite3_test_control and PETSc's *SetFromOptions:
 * every knob that tests, benchmarks or a developer may turn, and every environment variable
 * the program reads, each listed once below and read in one place (src/core/control.c,
 * the only file that calls getenv; docs/reliability.md, "Knobs and variables").
 *
 * A knob has no value until it is set: a module reads it with its own default,
 * hf_knob(HF_KNOB_X, DEFAULT), so that the default stays beside the code it tunes. */
#ifndef HEADFUSE_CONTROL_H
#define HEADFUSE_CONTROL_H

#include "headfuse/error.h"

/* The knobs: id, the environment variable that sets it in hf_control_from_env (NULL: tests
 * only), its least value from the environment, whether a bad value there is an error (else
 * it is ignored), and what it does. */
#define HF_KNOB_TABLE(X)                                                                           \
    X(SEARCH_SKIP_UNIT, NULL, 0, 0,                                                                \
      "a unit index that every size skips (a lost unit: the deal's "                               \
      "tests must notice it)")                                                                     \
    X(PLAIN_UNIT_TARGET, NULL, 1, 0, "the plain engine's candidates per unit")                     \
    X(LAYERED_UNIT_TARGET, NULL, 1, 0, "the layered engine's candidates per unit")                 \
    X(LARGE_MIN_TERMS, "HEADFUSE_LARGE_MIN_TERMS", 0, 1,                                           \
      "estimated terms of Q above which a cone row is a large row (docs/search.md, \"Large "       \
      "rows\")")                                                                                   \
    X(CONE_SPLIT_PAIRS_MIN, "HF_CONE_SPLIT_PAIRS_MIN", 0, 0,                                       \
      "pair tests below which a double-description step is not dealt across ranks")                \
    X(CONE_CELL_NEGATIVES, "HF_CONE_CELL_NEGATIVES", 1, 0,                                         \
      "negative rays per cell of a dealt double-description step")                                 \
    X(CONE_DROP_CELL, NULL, 0, 0,                                                                  \
      "a cell of the cone's candidates dropped (the tests' planted bug)")                          \
    X(ORBIT_BYTES_MAX, NULL, 0, 0, "bytes of one orbit's supports before orbits are not counted")  \
    X(SHARD_FAIL_RESERVE, NULL, 0, 0, "nonzero: a shard's space reservation fails with ENOSPC")    \
    X(SUPPORTS_HOLD_MAX, "HEADFUSE_SUPPORTS_HOLD_MAX", 0, 1,                                       \
      "atoms of a row's supports above which they are read in pieces from their file")             \
    X(FAIL_STATE_MOVE, "HEADFUSE_FAIL_STATE_MOVE", 0, 0,                                           \
      "the Nth move of a job state's migration fails with EIO (fault injection)")                  \
    X(FACES3D_UNSHARED, NULL, 0, 0, "nonzero: the 3-D face accounting counts no shared faces")     \
    X(FACES3D_ZONE_THRESHOLD, NULL, 0, 0, "the 3-D zone count's threshold")                        \
    X(FACES3D_SKIP_EDGE_SEGMENTS, NULL, 0, 0, "nonzero: the 3-D count skips its edge segments")

typedef enum {
#define HF_KNOB_ENUM(id, env, least, strict, text) HF_KNOB_##id,
    HF_KNOB_TABLE(HF_KNOB_ENUM)
#undef HF_KNOB_ENUM
        HF_KNOB_COUNT
} hf_knob_t;

/* The knob's value when it was set, else dflt (the module's default). */
long hf_knob(hf_knob_t k, long dflt);
/* Set a knob (tests, benchmarks, hf_control_from_env), or take its value back. */
void hf_knob_set(hf_knob_t k, long value);
void hf_knob_unset(hf_knob_t k);

/* The environment variables the program reads as they are: id, name, what it says. The
 * knobs' variables are the knob table's env column, read by hf_control_from_env. */
#define HF_ENV_TABLE(X)                                                                            \
    X(MAX_MEMORY, "HEADFUSE_MAX_MEMORY", "the memory a rank may take (docs/cluster.md)")           \
    X(SLURM_CPUS_PER_TASK, "SLURM_CPUS_PER_TASK", "Slurm: cores of a task")                        \
    X(SLURM_MEM_PER_CPU, "SLURM_MEM_PER_CPU", "Slurm: MB of memory per core")                      \
    X(SLURM_MEM_PER_NODE, "SLURM_MEM_PER_NODE", "Slurm: MB of memory per node")                    \
    X(MPI_RANK, "OMPI_COMM_WORLD_RANK", "Open MPI: this process's rank, before MPI starts")        \
    X(READ_GUARD, "HEADFUSE_READ_GUARD", "0: readers run in this process, not a forked child")     \
    X(READ_TIMEOUT, "HEADFUSE_READ_TIMEOUT", "seconds a guarded reader may take (0: no limit)")    \
    X(EXPECT_RANKS, "HF_EXPECT_RANKS", "the ranks a job expects (a wrong launch exits 7)")         \
    X(FAIL_H5_WRITE, "HEADFUSE_FAIL_H5_WRITE", "fault injection: the Nth store write fails")       \
    X(FAIL_ALLOC, "HEADFUSE_FAIL_ALLOC", "fault injection: the Nth allocation fails")              \
    X(FAULT_COUNT, "HEADFUSE_FAULT_COUNT", "print the fault points and stop checks at exit")       \
    X(FAULT_RANK, "HEADFUSE_FAULT_RANK", "the faults and the stop on this rank alone")             \
    X(STOP_AT, "HEADFUSE_STOP_AT", "PHASE:N: a stop at the Nth check of a phase")

typedef enum {
#define HF_ENV_ENUM(id, name, text) HF_ENV_##id,
    HF_ENV_TABLE(HF_ENV_ENUM)
#undef HF_ENV_ENUM
        HF_ENV_COUNT
} hf_env_t;

/* The variable's value, NULL when it is unset (the program's one getenv). */
const char *hf_env(hf_env_t v);
const char *hf_env_name(hf_env_t v);

/* The knobs that environment variables set (the table's env column), read once at start.
 * A value that is not an integer >= the knob's least is HF_ERR_INPUT naming the variable
 * ("HEADFUSE_LARGE_MIN_TERMS=x: must be a non-negative integer") for a strict knob, else it
 * is ignored (the cone's knobs have always been). A strict knob's variable set but empty
 * sets 0. */
hf_err_t hf_control_from_env(void);

#endif
