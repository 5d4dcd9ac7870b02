/* Tests of the campaign layer and what it stands on, run under mpirun with 1 and 2 ranks
 * (CTest: unit.test_campaign.np1, .np2): the error agreement across ranks (which error
 * wins), one row searched across the ranks with shards and resumed from them, a search
 * written to its result file, a job file run and resumed, the shard merge, and the one
 * witness conversion (head <-> JSON, head <-> supports, shard records). */
#include <dirent.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "headfuse/symmetry.h" /* before campaign.h: FLINT before PETSc's complex I */
#include "headfuse/agree.h"
#include "campaign/campaign_impl.h"
#include "headfuse/campaign.h"
#include "headfuse/stop.h"
#include "unit.h"

static int rank, size;
static char tmpdir[64]; /* the same on every rank (rank 0 makes it) */

static void scratch_make(void)
{
    if (rank == 0) {
        strcpy(tmpdir, "/tmp/hf_campaign_XXXXXX");
        if (!mkdtemp(tmpdir))
            tmpdir[0] = '\0';
    }
    MPI_Bcast(tmpdir, sizeof tmpdir, MPI_CHAR, 0, MPI_COMM_WORLD);
    CU_ASSERT_FATAL(tmpdir[0] != '\0');
}

static void scratch_done(void)
{
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0)
        hf_unit_rm_tree(tmpdir);
}

/* ------------------------------------------------------------------ agreement */

static void test_agree_none(void)
{
    hf_error_clear();
    CU_ASSERT_EQUAL(hf_agree_all(MPI_COMM_WORLD, HF_OK), HF_OK);
    CU_ASSERT_EQUAL(hf_agree_root(MPI_COMM_WORLD, HF_OK), HF_OK);
    CU_ASSERT_EQUAL(hf_agree_all_message(MPI_COMM_WORLD, HF_OK), HF_OK);
    CU_ASSERT_STRING_EQUAL(hf_error_msg(), "");
}

/* The last rank fails alone: every rank returns its code, the others relay it, and the
 * failing rank is the one that reports. */
static void test_agree_one_fails(void)
{
    int bad = size - 1;
    hf_error_clear();
    hf_err_t mine = rank == bad ? hf_error(HF_ERR_IO, "disk gone on rank %d", rank) : HF_OK;
    CU_ASSERT_EQUAL(hf_agree_all(MPI_COMM_WORLD, mine), HF_ERR_IO);
    CU_ASSERT_EQUAL(hf_error_is_relayed(), rank != bad);
    if (rank != bad)
        CU_ASSERT_PTR_NOT_NULL(strstr(hf_error_msg(), "failed"));
    CU_ASSERT_EQUAL(hf_agree_reporter(MPI_COMM_WORLD), bad);
    hf_error_clear();
}

/* Several ranks fail with different codes: the lowest rank's own error wins on every
 * rank (not the order of the error table), and it reports. */
static void test_agree_lowest_wins(void)
{
    hf_error_clear();
    hf_err_t mine = rank == 0 ? hf_error(HF_ERR_CORRUPT, "bad shard") : hf_error(HF_ERR_IO, "io");
    CU_ASSERT_EQUAL(hf_agree_all(MPI_COMM_WORLD, mine), HF_ERR_CORRUPT);
    CU_ASSERT_EQUAL(hf_error_is_relayed(), 0); /* a rank whose own error lost keeps it */
    CU_ASSERT_EQUAL(hf_agree_reporter(MPI_COMM_WORLD), 0);
    hf_error_clear();
}

/* A relayed error loses to an own error on a higher rank. */
static void test_agree_relayed_loses(void)
{
    hf_error_clear();
    hf_err_t mine = rank == 0 ? hf_error_relay(HF_ERR_MPI, "another rank stopped")
                              : hf_error(HF_ERR_INPUT, "bad input on rank %d", rank);
    hf_err_t want = size == 1 ? HF_ERR_MPI : HF_ERR_INPUT;
    CU_ASSERT_EQUAL(hf_agree_all(MPI_COMM_WORLD, mine), want);
    CU_ASSERT_EQUAL(hf_agree_reporter(MPI_COMM_WORLD), size == 1 ? 0 : 1);
    hf_error_clear();
}

/* The first failing item in an order of its own wins, not the lowest rank. */
static void test_agree_first(void)
{
    hf_error_clear();
    /* rank r fails on item 10 - r: the last rank holds the first item */
    hf_err_t mine = hf_error(rank == size - 1 ? HF_ERR_LIMIT : HF_ERR_IO, "item %d", 10 - rank);
    CU_ASSERT_EQUAL(hf_agree_first(MPI_COMM_WORLD, mine, 10 - rank), HF_ERR_LIMIT);
    CU_ASSERT_EQUAL(hf_error_is_relayed(), rank != size - 1);
    CU_ASSERT_EQUAL(hf_agree_reporter(MPI_COMM_WORLD), size - 1);
    hf_error_clear();
    CU_ASSERT_EQUAL(hf_agree_first(MPI_COMM_WORLD, HF_OK, 3), HF_OK);
}

static void test_agree_root_and_message(void)
{
    hf_error_clear();
    /* only rank 0's code counts for a step only rank 0 takes */
    hf_err_t mine = rank == 0 ? hf_error(HF_ERR_LIMIT, "too big") : HF_ERR_IO;
    CU_ASSERT_EQUAL(hf_agree_root(MPI_COMM_WORLD, mine), HF_ERR_LIMIT);
    hf_error_clear();
    CU_ASSERT_EQUAL(hf_agree_root(MPI_COMM_WORLD, rank == 0 ? HF_OK : HF_ERR_IO), HF_OK);
    /* the winner's message on every rank */
    int bad = size - 1;
    mine = rank == bad ? hf_error(HF_ERR_INPUT, "the message of rank %d", bad) : HF_OK;
    CU_ASSERT_EQUAL(hf_agree_all_message(MPI_COMM_WORLD, mine), HF_ERR_INPUT);
    char want[64];
    snprintf(want, sizeof want, "the message of rank %d", bad);
    CU_ASSERT_STRING_EQUAL(hf_error_msg(), want);
    CU_ASSERT_EQUAL(hf_error_is_relayed(), 0);
    hf_error_clear();
}

/* ------------------------------------------------------------------ one row */

/* chain:d=2 at span 3 with the plain engine: 28 units, m* = 7, one minimal support. */
static hf_search_opts_t chain_opts(void)
{
    return (hf_search_opts_t){.span = 3, .max_atoms = 0, .engine = HF_ENGINE_PLAIN};
}

/* The orbit count across the ranks: W_2's group (order 4: the swap, and negating both
 * coordinates) on four 2-key supports, {(0,0),(0,1)} and {(0,0),(1,0)} one orbit (the swap),
 * {(0,0),(1,1)} and {(0,1),(1,0)} one each: 3 orbits on every rank count; one support is
 * one orbit; a stop between representatives stops every rank. */
static void test_count_orbits(void)
{
    hf_target_t t;
    hf_fraction_t f;
    hf_fraction_init(&f);
    hf_group_t *g = NULL;
    hf_target_init_empty(&t);
    CU_ASSERT_FATAL(hf_target_from_family(&t, "wd:d=2") == HF_OK);
    CU_ASSERT_FATAL(hf_fraction_from_target(&f, &t) == HF_OK);
    CU_ASSERT_FATAL(hf_group_create(&t, &f, &g) == HF_OK);
    CU_ASSERT_EQUAL_FATAL(hf_group_order(g), 4);
    const int64_t keys[4][4] = {{0, 0, 0, 1}, {0, 0, 1, 0}, {0, 0, 1, 1}, {0, 1, 1, 0}};
    fmpz w[2] = {1, 1}; /* small fmpz values are the integers themselves */
    hf_supports_t sup;
    long n_sym = -7;
    hf_supports_init(&sup, 2, 2, 1);
    for (int i = 0; rank == 0 && i < 4; i++)
        CU_ASSERT_FATAL(hf_supports_push_ints(&sup, keys[i], w, w) == HF_OK);
    CU_ASSERT_EQUAL(hf_campaign_count_orbits(MPI_COMM_WORLD, g, &sup, &n_sym), HF_OK);
    if (rank == 0)
        CU_ASSERT_EQUAL(n_sym, 3);
    /* a stop at the first representative of rank 0 reaches every rank */
    hf_stop_at(HF_STOP_ORBITS, rank == 0 ? 1 : 0);
    CU_ASSERT_EQUAL(hf_campaign_count_orbits(MPI_COMM_WORLD, g, &sup, &n_sym), HF_ERR_INTERRUPTED);
    hf_stop_reset();
    hf_supports_clear(&sup);
    hf_supports_init(&sup, 2, 2, 1);
    if (rank == 0)
        CU_ASSERT_FATAL(hf_supports_push_ints(&sup, keys[3], w, w) == HF_OK);
    CU_ASSERT_EQUAL(hf_campaign_count_orbits(MPI_COMM_WORLD, g, &sup, &n_sym), HF_OK);
    if (rank == 0)
        CU_ASSERT_EQUAL(n_sym, 1);
    hf_supports_clear(&sup);
    hf_group_destroy(&g);
    hf_fraction_clear(&f);
    hf_target_clear(&t);
}

static void test_entry_and_resume(void)
{
    scratch_make();
    hf_target_t t;
    hf_target_init_empty(&t);
    CU_ASSERT_FATAL(hf_target_from_family(&t, "chain:d=2") == HF_OK);
    hf_search_opts_t so = chain_opts();
    char dir[128];
    snprintf(dir, sizeof dir, "%s/r.h5.shards", tmpdir);
    hf_campaign_cfg_t cfg = {
        .shard_dir = dir, .resume = 0, .quiet = 1, .row = 0, .command_line = "test"};
    hf_row_t row, again;
    hf_supports_t sup; /* the caller's (campaign.h): cleared after each call, filled again */
    hf_supports_init(&sup, 0, t.d, t.dv);
    hf_unit_record_t *units = NULL;
    long nunits = 0;
    CU_ASSERT_EQUAL_FATAL(
        hf_campaign_entry(MPI_COMM_WORLD, &t, &so, &cfg, &row, &sup, &units, &nunits), HF_OK);
    if (rank == 0) {
        CU_ASSERT_EQUAL(row.m_star, 7);
        CU_ASSERT_STRING_EQUAL(row.status, "certified");
        CU_ASSERT_STRING_EQUAL(row.engine, "plain");
        CU_ASSERT_EQUAL(row.n_min_raw, 1);
        CU_ASSERT_EQUAL(row.n_min_sym, 1);
        CU_ASSERT_EQUAL(row.units, 28);
        CU_ASSERT_EQUAL(nunits, 28); /* the unit log: every unit once, whichever rank ran it */
        CU_ASSERT_EQUAL(sup.n, 1);
        CU_ASSERT_EQUAL(sup.m, 7);
        /* the stored witness is an exact head of the target */
        hf_head_t h;
        const char *why = "unset";
        hf_head_init(&h, t.d, t.dv);
        CU_ASSERT_EQUAL(hf_supports_head(&sup, 0, &h, &why), HF_OK);
        CU_ASSERT_PTR_NULL(why);
        CU_ASSERT_EQUAL(h.natoms, 7);
        hf_head_clear(&h);
    }
    hf_supports_clear(&sup);

    /* the shards are still there: without --resume they are refused, with it every unit
     * is taken from them and the row is the same */
    CU_ASSERT_EQUAL(hf_campaign_entry(MPI_COMM_WORLD, &t, &so, &cfg, &again, &sup, &units, &nunits),
                    HF_ERR_INPUT);
    if (rank == 0)
        CU_ASSERT_PTR_NOT_NULL(strstr(hf_error_msg(), "holds shards of an earlier run"));
    hf_supports_clear(&sup);
    hf_error_clear();
    cfg.resume = 1;
    CU_ASSERT_EQUAL_FATAL(
        hf_campaign_entry(MPI_COMM_WORLD, &t, &so, &cfg, &again, &sup, &units, &nunits), HF_OK);
    if (rank == 0) {
        CU_ASSERT_EQUAL(again.m_star, row.m_star);
        CU_ASSERT_EQUAL(again.nodes, row.nodes);
        CU_ASSERT_EQUAL(again.n_min_raw, row.n_min_raw);
        CU_ASSERT_STRING_EQUAL(again.status, row.status);
    }
    hf_supports_clear(&sup);

    /* the merge of the directory: 28 finished units, one found record of size 7 */
    if (rank == 0) {
        hf_shards_merged_t g;
        hf_shards_merged_init(&g);
        CU_ASSERT_EQUAL(hf_shards_merge(dir, "no such fingerprint", &g), HF_ERR_INPUT);
        hf_error_clear();
        char **paths;
        long n;
        CU_ASSERT_EQUAL(hf_shards_list(dir, &paths, &n), HF_OK);
        CU_ASSERT(n >= size); /* one shard per rank and run (the resumed run added more) */
        hf_shards_list_free(paths, n);
        hf_shards_remove(dir);
        CU_ASSERT_EQUAL(access(dir, F_OK), -1);
    }
    free(units);
    hf_target_clear(&t);
    scratch_done();
}

/* A max_atoms below the lower bound: nothing can be searched, the message names how
 * the user gave it. */
static void test_certified_shortcut(void)
{
    hf_target_t t;
    hf_target_init_empty(&t);
    CU_ASSERT_FATAL(hf_target_from_family(&t, "wd:d=2") == HF_OK);
    hf_search_opts_t so = {.span = 2, .max_atoms = 3, .engine = HF_ENGINE_AUTO};
    hf_bounds_t b;
    hf_bounds_init(&b);
    int shortcut = -1;
    CU_ASSERT_EQUAL_FATAL(hf_bounds_compute(&t, &b), HF_OK);
    CU_ASSERT_EQUAL(fmpz_get_si(b.low.lb), 4);
    CU_ASSERT_EQUAL(fmpz_get_si(b.ub), 4);
    CU_ASSERT_STRING_EQUAL(b.low.rule, "newton_vertices");
    CU_ASSERT_EQUAL(hf_campaign_certified(&t, &so, &b, "--max-atoms", &shortcut), HF_ERR_INPUT);
    CU_ASSERT_PTR_NOT_NULL(strstr(hf_error_msg(), "--max-atoms 3: below the lower bound LB = 4"));
    hf_error_clear();
    so.max_atoms = 0;
    CU_ASSERT_EQUAL(hf_campaign_certified(&t, &so, &b, "max_atoms", &shortcut), HF_OK);
    CU_ASSERT_EQUAL(shortcut, 0); /* a 3x3 box is small: m* is still enumerated */
    so.span = 800; /* a box of 801^2 points (over 3^12): the bounds alone certify the row */
    CU_ASSERT_EQUAL(hf_campaign_certified(&t, &so, &b, "max_atoms", &shortcut), HF_OK);
    CU_ASSERT_EQUAL(shortcut, 1);
    hf_bounds_clear(&b);
    hf_target_clear(&t);
}

/* The fingerprints of searches are fixed: these were read from shards written by the
 * version before the engine seam (headfuse search --family ... under mpirun, stopped with
 * SIGUSR1; h5dump -a fingerprint), so those shards still resume. */
static void test_fingerprints_pinned(void)
{
    static const struct {
        const char *spec;
        int span;
        hf_engine_t asked, ran;
        const char *fp;
    } cases[] = {{"wd:d=3", 2, HF_ENGINE_PLAIN, HF_ENGINE_PLAIN, "ebe463b23198101c"},
                 {"chain:d=3", 4, HF_ENGINE_LAYERED, HF_ENGINE_LAYERED, "213762e41caa476d"},
                 /* auto takes the layered engine here: 100 unknowns for the cone */
                 {"chain:d=3", 6, HF_ENGINE_AUTO, HF_ENGINE_LAYERED, "2d642a1733269927"},
                 {"chain:d=3", 6, HF_ENGINE_CONE, HF_ENGINE_CONE, "56b7b98ee6b885ca"}};
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        hf_target_t t;
        hf_target_init_empty(&t);
        CU_ASSERT_FATAL(hf_target_from_family(&t, cases[i].spec) == HF_OK);
        hf_search_opts_t so = {.span = cases[i].span, .engine = cases[i].asked};
        char fp[40];
        CU_ASSERT_EQUAL(hf_campaign_fingerprint(&t, &so, cases[i].ran, fp), HF_OK);
        CU_ASSERT_STRING_EQUAL(fp, cases[i].fp);
        if (strcmp(fp, cases[i].fp))
            fprintf(stderr, "\n%s span %d: fingerprint %s, was %s\n", cases[i].spec, cases[i].span,
                    fp, cases[i].fp);
        hf_target_clear(&t);
    }
}

/* The memory limit: --max-memory, then the job's max_memory, then HEADFUSE_MAX_MEMORY,
 * then Slurm's allocation, then the machine's memory over the node's ranks; a row whose
 * estimate exceeds it is refused naming the target, the estimate, the limit and the
 * option that raises it, and `headfuse target`; a row certified by its bounds is not
 * estimated; LB or UB of more digits than a row holds is refused (docs/targets.md,
 * "Limits"). Not collective. */
static void test_memory_checks(void)
{
    hf_campaign_memory_t lim;
    hf_job_t job;
    hf_job_init(&job);
    const char *keep[3] = {"HEADFUSE_MAX_MEMORY", "SLURM_MEM_PER_CPU", "SLURM_MEM_PER_NODE"};
    for (int i = 0; i < 3; i++)
        unsetenv(keep[i]);
    CU_ASSERT_EQUAL_FATAL(hf_campaign_memory_limit(NULL, NULL, 2, &lim), HF_OK);
    CU_ASSERT(lim.bytes > 1 << 20);
    CU_ASSERT(strstr(lim.source, "this machine's memory per rank") && strstr(lim.source, "/ 2"));
    setenv("SLURM_MEM_PER_NODE", "4096", 1);
    CU_ASSERT_EQUAL(hf_campaign_memory_limit(NULL, NULL, 2, &lim), HF_OK);
    CU_ASSERT_EQUAL(lim.bytes, 2048.0 * 1048576);
    setenv("SLURM_MEM_PER_CPU", "1000", 1);
    CU_ASSERT_EQUAL(hf_campaign_memory_limit(NULL, NULL, 2, &lim), HF_OK);
    CU_ASSERT_EQUAL(lim.bytes, 1000.0 * 1048576);
    setenv("HEADFUSE_MAX_MEMORY", "3G", 1);
    CU_ASSERT_EQUAL(hf_campaign_memory_limit(NULL, NULL, 2, &lim), HF_OK);
    CU_ASSERT_EQUAL(lim.bytes, 3.0 * 1073741824);
    CU_ASSERT_STRING_EQUAL(lim.source, "HEADFUSE_MAX_MEMORY=3G");
    job.max_memory = strdup("2G");
    job.max_memory_bytes = 2.0 * 1073741824;
    job.path = strdup("j.yaml");
    job.max_memory_line = 3;
    CU_ASSERT_EQUAL(hf_campaign_memory_limit(NULL, &job, 2, &lim), HF_OK);
    CU_ASSERT_EQUAL(lim.bytes, 2.0 * 1073741824);
    CU_ASSERT_STRING_EQUAL(lim.source, "max_memory: 2G, j.yaml:3");
    CU_ASSERT_EQUAL(hf_campaign_memory_limit("100M", &job, 2, &lim), HF_OK);
    CU_ASSERT_EQUAL(lim.bytes, 100.0 * 1048576);
    CU_ASSERT_STRING_EQUAL(lim.source, "--max-memory 100M");
    CU_ASSERT_EQUAL(hf_campaign_memory_limit("lots", &job, 2, &lim), HF_ERR_INPUT);
    CU_ASSERT(strstr(hf_error_msg(), "--max-memory lots: must be a size in bytes") != NULL);
    setenv("HEADFUSE_MAX_MEMORY", "0", 1);
    CU_ASSERT_EQUAL(hf_campaign_memory_limit(NULL, NULL, 1, &lim), HF_ERR_INPUT);
    CU_ASSERT(strstr(hf_error_msg(), "HEADFUSE_MAX_MEMORY=0: must be") != NULL);
    for (int i = 0; i < 3; i++)
        unsetenv(keep[i]);
    hf_job_clear(&job);

    /* chain:d=10 span 3: about 211 MiB (docs/performance.md §15); refused under 100M,
     * passes under 1G */
    hf_target_t t;
    hf_target_init_empty(&t);
    hf_bounds_t b;
    hf_bounds_init(&b);
    hf_search_memory_t est;
    hf_search_opts_t so = {.span = 3};
    int shortcut = 1;
    CU_ASSERT_EQUAL_FATAL(hf_target_from_family(&t, "chain:d=10"), HF_OK);
    CU_ASSERT_EQUAL_FATAL(hf_bounds_compute(&t, &b), HF_OK);
    CU_ASSERT_EQUAL_FATAL(hf_campaign_certified(&t, &so, &b, "max_atoms", &shortcut), HF_OK);
    CU_ASSERT_EQUAL(shortcut, 0);
    CU_ASSERT_EQUAL_FATAL(hf_campaign_memory_limit("100M", NULL, 1, &lim), HF_OK);
    CU_ASSERT_EQUAL(hf_campaign_check_row(&t, &so, &b, 0, &lim, &est), HF_ERR_LIMIT);
    const char *msg = hf_error_msg();
    CU_ASSERT(strstr(msg, "chain:d=10 span 3: the search needs about ") != NULL);
    CU_ASSERT(strstr(msg, " MiB per rank on 1 rank(s) (") != NULL);
    CU_ASSERT(strstr(msg, "more than the limit of 100 MiB (--max-memory 100M)") != NULL);
    CU_ASSERT(strstr(msg, "raise it with --max-memory SIZE") != NULL);
    CU_ASSERT(strstr(msg, "headfuse target --family chain:d=10") != NULL);
    CU_ASSERT_EQUAL(est.keys, 129904);
    CU_ASSERT_EQUAL_FATAL(hf_campaign_memory_limit("1G", NULL, 1, &lim), HF_OK);
    CU_ASSERT_EQUAL(hf_campaign_check_row(&t, &so, &b, 0, &lim, &est), HF_OK);
    /* the box comes first: it cannot be raised */
    so.span = 16;
    CU_ASSERT_EQUAL(hf_campaign_check_row(&t, &so, &b, 0, &lim, &est), HF_ERR_INPUT);
    CU_ASSERT(strstr(hf_error_msg(), "point indices are 32 bits") != NULL);
    /* certified by its bounds (wd:d=64): no search, no estimate */
    so.span = 1;
    CU_ASSERT_EQUAL_FATAL(hf_target_from_family(&t, "wd:d=64"), HF_OK);
    CU_ASSERT_EQUAL_FATAL(hf_bounds_compute(&t, &b), HF_OK);
    CU_ASSERT_EQUAL_FATAL(hf_campaign_certified(&t, &so, &b, "max_atoms", &shortcut), HF_OK);
    CU_ASSERT_EQUAL(shortcut, 1);
    CU_ASSERT_EQUAL(hf_campaign_check_row(&t, &so, &b, shortcut, &lim, &est), HF_OK);
    CU_ASSERT_EQUAL(est.total, 0);
    /* a UB of more digits than a row holds */
    fmpz_set_ui(b.ub, 10);
    fmpz_pow_ui(b.ub, b.ub, HF_BIGINT_LEN);
    CU_ASSERT_EQUAL(hf_campaign_check_row(&t, &so, &b, shortcut, &lim, &est), HF_ERR_LIMIT);
    CU_ASSERT(strstr(hf_error_msg(), "a table row holds at most 127") != NULL);
    hf_bounds_clear(&b);
    hf_target_clear(&t);
}

/* A plan's nodes (docs/cluster.md, "A plan before a run"): the ranks of the fullest node
 * times the estimate per rank must fit a node's memory, given or Slurm's, and the refusal
 * names the ranks and the node; the default limit per rank divides a node's memory by the
 * ranks of a node. chain:d=15 at span 3 with the layered engine: about 65.7 GiB a rank on
 * any number of ranks; as a large row (auto: the cone) about 127 MiB on 64. */
static void test_plan_nodes(void)
{
    const char *keep[4] = {"HEADFUSE_MAX_MEMORY", "SLURM_MEM_PER_CPU", "SLURM_MEM_PER_NODE",
                           "SLURM_CPUS_PER_TASK"};
    for (int i = 0; i < 4; i++)
        unsetenv(keep[i]);
    hf_campaign_memory_t lim;
    CU_ASSERT_EQUAL_FATAL(hf_campaign_memory_plan("70G", "250G", NULL, 64, 1, &lim), HF_OK);
    CU_ASSERT_EQUAL(lim.ranks, 64);
    CU_ASSERT_EQUAL(lim.node_ranks, 64);
    CU_ASSERT(lim.node_check);
    CU_ASSERT_EQUAL(lim.node_bytes, 250.0 * 1073741824);
    hf_target_t t;
    hf_target_init_empty(&t);
    hf_bounds_t b;
    hf_bounds_init(&b);
    hf_campaign_plan_t plan;
    hf_search_opts_t so = {.span = 3, .engine = HF_ENGINE_LAYERED};
    CU_ASSERT_EQUAL_FATAL(hf_target_from_family(&t, "chain:d=15"), HF_OK);
    CU_ASSERT_EQUAL_FATAL(hf_bounds_compute(&t, &b), HF_OK);
    CU_ASSERT_EQUAL(hf_campaign_plan_row(&t, &so, &b, 0, &lim, &plan), HF_ERR_LIMIT);
    CU_ASSERT(strstr(hf_error_msg(), "chain:d=15 span 3: 64 ranks x 65.7 GiB = 4.10 TiB on one "
                                     "node, over the node's 250 GiB (--node-memory 250G") != NULL);
    /* 2 ranks a node on 32 nodes fit */
    CU_ASSERT_EQUAL_FATAL(hf_campaign_memory_plan("70G", "250G", NULL, 64, 32, &lim), HF_OK);
    CU_ASSERT_EQUAL(lim.node_ranks, 2);
    CU_ASSERT_EQUAL(hf_campaign_plan_row(&t, &so, &b, 0, &lim, &plan), HF_OK);
    CU_ASSERT_EQUAL(plan.engine, HF_ENGINE_LAYERED);
    CU_ASSERT_EQUAL(plan.busy, 0); /* known after the preparation */
    CU_ASSERT(plan.seconds < 0);   /* no basis */
    CU_ASSERT_EQUAL(plan.node_total, 2 * plan.mem.total);
    /* no limit given: the node's memory over the ranks of a node, named */
    CU_ASSERT_EQUAL_FATAL(hf_campaign_memory_plan(NULL, "250G", NULL, 64, 1, &lim), HF_OK);
    CU_ASSERT_EQUAL(lim.bytes, 250.0 * 1073741824 / 64);
    CU_ASSERT(strstr(lim.source, "250 GiB / 64 rank(s) on the node") != NULL);
    setenv("SLURM_MEM_PER_NODE", "256000", 1);
    CU_ASSERT_EQUAL_FATAL(hf_campaign_memory_plan("1P", NULL, NULL, 4, 1, &lim), HF_OK);
    CU_ASSERT(lim.node_check && lim.node_bytes == 256000.0 * 1048576);
    unsetenv("SLURM_MEM_PER_NODE");
    /* a limit given, no node memory: this machine's is not the compute node's */
    CU_ASSERT_EQUAL_FATAL(hf_campaign_memory_plan("1P", NULL, NULL, 64, 1, &lim), HF_OK);
    CU_ASSERT(!lim.node_check);
    CU_ASSERT_EQUAL(hf_campaign_memory_plan(NULL, "lots", NULL, 2, 1, &lim), HF_ERR_INPUT);
    CU_ASSERT(strstr(hf_error_msg(), "--node-memory lots: must be a size") != NULL);
    /* the large row: the cone, every rank busy with the slices, the cost model's time */
    so.engine = HF_ENGINE_AUTO;
    CU_ASSERT_EQUAL_FATAL(hf_campaign_memory_plan(NULL, "256G", NULL, 64, 1, &lim), HF_OK);
    CU_ASSERT_EQUAL(hf_campaign_plan_row(&t, &so, &b, 0, &lim, &plan), HF_OK);
    CU_ASSERT_EQUAL(plan.engine, HF_ENGINE_CONE);
    CU_ASSERT(plan.mem.large);
    CU_ASSERT_EQUAL(plan.unknowns, 4);
    CU_ASSERT_EQUAL(plan.busy, 64);
    CU_ASSERT_EQUAL(plan.keys, 60266496);
    CU_ASSERT(plan.seconds > 10 && plan.seconds < 40);
    CU_ASSERT_STRING_EQUAL(hf_campaign_plan_engine(&plan), "cone");
    hf_bounds_clear(&b);
    hf_target_clear(&t);
}

/* A job entry's options are its engine (prune: false is plain), and a row matches them
 * only when it ran that engine, or any pruning one for auto: an entry asking for the cone
 * does not take a layered row as its own. */
static void test_entry_opts_and_rows(void)
{
    scratch_make();
    char path[128];
    snprintf(path, sizeof path, "%s/e.yaml", tmpdir);
    if (rank == 0) {
        FILE *f = fopen(path, "w");
        CU_ASSERT_PTR_NOT_NULL_FATAL(f);
        fputs("entries:\n  - {family: wd, d: 2, span: 1, engine: cone}\n"
              "  - {family: wd, d: 2, span: 1}\n  - {family: wd, d: 2, span: 1, prune: false}\n",
              f);
        fclose(f);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    hf_job_t job;
    hf_job_init(&job);
    CU_ASSERT_EQUAL_FATAL(hf_job_load(&job, path, NULL), HF_OK);
    hf_search_opts_t so[3];
    static const hf_engine_t want[3] = {HF_ENGINE_CONE, HF_ENGINE_AUTO, HF_ENGINE_PLAIN};
    for (long i = 0; i < 3; i++) {
        hf_campaign_entry_opts(&job, i, &so[i]);
        CU_ASSERT_EQUAL(so[i].engine, want[i]);
        CU_ASSERT_EQUAL(so[i].span, 1);
    }
    hf_target_t t;
    hf_target_init_empty(&t);
    CU_ASSERT_FATAL(hf_target_from_family(&t, "wd:d=2") == HF_OK);
    char *json = hf_target_to_json(&t);
    hf_result_t r;
    hf_result_init(&r);
    hf_row_t row;
    memset(&row, 0, sizeof row);
    row.span = 1;
    hf_supports_t sup;
    hf_supports_init(&sup, 0, 2, 1);
    static const char *const engines[3] = {"cone", "layered", "plain"};
    for (int k = 0; k < 3; k++) {
        snprintf(row.engine, sizeof row.engine, "%s", engines[k]);
        CU_ASSERT_EQUAL(hf_result_add_row(&r, &row, &sup, json), HF_OK);
    }
    /* rows: cone, layered, plain; entries: cone, auto, plain */
    static const int match[3][3] = {{1, 0, 0}, {1, 1, 0}, {0, 0, 1}};
    for (int e = 0; e < 3; e++)
        for (int k = 0; k < 3; k++)
            CU_ASSERT_EQUAL(hf_campaign_row_matches(&r, k, json, &so[e]), match[e][k]);
    hf_supports_clear(&sup);
    hf_result_clear(&r);
    free(json);
    hf_target_clear(&t);
    hf_job_clear(&job);
    scratch_done();
}

/* A search into its own RESULT.h5; with --resume the finished file is kept. */
static void test_search_file(void)
{
    scratch_make();
    hf_target_t t;
    hf_target_init_empty(&t);
    CU_ASSERT_FATAL(hf_target_from_family(&t, "wd:d=2") == HF_OK);
    hf_search_opts_t so = {.span = 1, .engine = HF_ENGINE_AUTO};
    char out[128];
    snprintf(out, sizeof out, "%s/r.h5", tmpdir);
    hf_campaign_search_opts_t o = {
        .out = out, .quiet = 1, .command_line = "headfuse search test", .start = "now"};
    hf_row_t row;
    int complete = -1;
    CU_ASSERT_EQUAL_FATAL(hf_campaign_search(MPI_COMM_WORLD, &t, &so, &o, &row, &complete), HF_OK);
    CU_ASSERT_EQUAL(complete, 0);
    if (rank == 0) {
        CU_ASSERT_EQUAL(row.m_star, 4);
        hf_result_t r;
        hf_result_init(&r);
        CU_ASSERT_EQUAL(hf_campaign_result_read(out, &r), HF_OK);
        CU_ASSERT_EQUAL(r.nrows, 1);
        CU_ASSERT_EQUAL(r.ranks, size);
        CU_ASSERT_STRING_EQUAL(r.command_line, "headfuse search test");
        char *json = hf_target_to_json(&t);
        CU_ASSERT(hf_campaign_row_matches(&r, 0, json, &so));
        free(json);
        hf_result_clear(&r);
        char shards[160];
        snprintf(shards, sizeof shards, "%s.shards", out);
        CU_ASSERT_EQUAL(access(shards, F_OK), -1); /* removed once the result holds all */
    }
    /* again: refused without --force or --resume; kept with --resume */
    CU_ASSERT_EQUAL(hf_campaign_search(MPI_COMM_WORLD, &t, &so, &o, &row, &complete), HF_ERR_INPUT);
    hf_error_clear();
    o.resume = 1;
    CU_ASSERT_EQUAL(hf_campaign_search(MPI_COMM_WORLD, &t, &so, &o, &row, &complete), HF_OK);
    CU_ASSERT_EQUAL(complete, 1);
    hf_target_clear(&t);
    scratch_done();
}

/* ------------------------------------------------------------------ a job */

static long rows_seen;

static void count_row(void *ctx, long i, long n, const hf_row_t *row)
{
    (void)ctx;
    (void)row;
    CU_ASSERT(i >= 0 && i < n);
    rows_seen++;
}

static void test_job(void)
{
    scratch_make();
    char path[128], out[128];
    snprintf(path, sizeof path, "%s/j.yaml", tmpdir);
    snprintf(out, sizeof out, "%s/j.h5", tmpdir);
    if (rank == 0) {
        FILE *f = fopen(path, "w");
        CU_ASSERT_PTR_NOT_NULL_FATAL(f);
        fputs("entries:\n  - {family: wd, d: 1, span: 1}\n  - {family: wd, d: 2, span: 1}\n", f);
        fclose(f);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    hf_job_t job;
    hf_job_init(&job);
    CU_ASSERT_EQUAL_FATAL(hf_job_load(&job, path, out), HF_OK);
    hf_campaign_job_opts_t o = {
        .quiet = 1, .entry = -1, .command_line = "headfuse run test", .start = "now"};
    hf_campaign_job_outcome_t oc;
    hf_result_t res;
    hf_result_init(&res);
    rows_seen = 0;
    CU_ASSERT_EQUAL_FATAL(hf_campaign_job_run(MPI_COMM_WORLD, &job, &o, count_row, NULL, &res, &oc),
                          HF_OK);
    CU_ASSERT_EQUAL(oc.ran, 2);
    CU_ASSERT_EQUAL(oc.complete, 0);
    if (rank == 0) {
        CU_ASSERT_EQUAL(rows_seen, 2);
        CU_ASSERT_EQUAL(res.nrows, 2);
        CU_ASSERT_EQUAL(res.rows[0].m_star, 2);
        CU_ASSERT_EQUAL(res.rows[1].m_star, 4);
        CU_ASSERT_PTR_NOT_NULL(res.job_text);
    }
    hf_result_clear(&res);
    /* the result is written: a second run is refused, a resumed one has nothing to do */
    hf_result_init(&res);
    CU_ASSERT_EQUAL(hf_campaign_job_run(MPI_COMM_WORLD, &job, &o, count_row, NULL, &res, &oc),
                    HF_ERR_INPUT);
    hf_error_clear();
    hf_result_clear(&res);
    hf_result_init(&res);
    o.resume = 1;
    CU_ASSERT_EQUAL(hf_campaign_job_run(MPI_COMM_WORLD, &job, &o, count_row, NULL, &res, &oc),
                    HF_OK);
    CU_ASSERT_EQUAL(oc.complete, 1);
    CU_ASSERT_EQUAL(oc.ran, 0);
    if (rank == 0)
        CU_ASSERT_EQUAL(res.nrows, 2);
    hf_result_clear(&res);
    /* an entry index beyond the job */
    o.entry = 5;
    hf_result_init(&res);
    CU_ASSERT_EQUAL(hf_campaign_job_run(MPI_COMM_WORLD, &job, &o, NULL, NULL, &res, &oc),
                    HF_ERR_INPUT);
    CU_ASSERT_PTR_NOT_NULL(strstr(hf_error_msg(), "--entry 5: the job has 2 entries"));
    hf_error_clear();
    hf_result_clear(&res);
    hf_job_clear(&job);
    scratch_done();
}

/* ------------------------------------------------------------------ witnesses */

/* A two-atom head with dv = 2: keys (0,1), (2,-3), weights 1/2, 3, values. */
static void make_head(hf_head_t *h)
{
    hf_head_init(h, 2, 2);
    CU_ASSERT_FATAL(hf_head_resize(h, 2) == HF_OK);
    int64_t keys[4] = {0, 1, 2, -3};
    memcpy(h->keys, keys, sizeof keys);
    fmpq_set_si(h->weights + 0, 1, 2);
    fmpq_set_si(h->weights + 1, 3, 1);
    fmpq_set_si(h->values + 0, -1, 3);
    fmpq_set_si(h->values + 1, 0, 1);
    fmpq_set_si(h->values + 2, 5, 7);
    fmpq_set_si(h->values + 3, 1, 1);
}

static int heads_equal(const hf_head_t *a, const hf_head_t *b)
{
    if (a->natoms != b->natoms || a->d != b->d || a->dv != b->dv)
        return 0;
    for (long i = 0; i < a->natoms; i++) {
        if (!fmpq_equal(a->weights + i, b->weights + i))
            return 0;
        for (int j = 0; j < a->d; j++)
            if (a->keys[i * a->d + j] != b->keys[i * b->d + j])
                return 0;
        for (int j = 0; j < a->dv; j++)
            if (!fmpq_equal(a->values + i * a->dv + j, b->values + i * b->dv + j))
                return 0;
    }
    return 1;
}

static void test_head_json(void)
{
    hf_head_t h, back;
    make_head(&h);
    hf_head_init(&back, 2, 2);
    json_t *o = hf_head_to_json(&h, NULL, 1);
    CU_ASSERT_PTR_NOT_NULL_FATAL(o);
    char *s = json_dumps(o, JSON_COMPACT | JSON_PRESERVE_ORDER);
    CU_ASSERT_STRING_EQUAL(s, "{\"keys\":[[0,1],[2,-3]],\"weights\":[\"1/2\",\"3\"],"
                              "\"values\":[[\"-1/3\",\"0\"],[\"5/7\",\"1\"]]}");
    free(s);
    CU_ASSERT_EQUAL(hf_head_from_json(&back, o, 2), HF_OK);
    CU_ASSERT(heads_equal(&h, &back));
    CU_ASSERT_EQUAL(hf_head_from_json(&back, o, 3), HF_ERR_INPUT); /* wrong atom count */
    hf_error_clear();
    json_decref(o);

    /* shard record: the same form, keys given apart from the witness */
    char *rec = NULL;
    int64_t keys[4] = {1, 1, 0, 0};
    hf_found_t fd = {.m = 2, .keys = keys, .witness = &h};
    CU_ASSERT_EQUAL(hf_found_encode(&fd, &rec), HF_OK);
    CU_ASSERT_EQUAL(hf_found_decode(rec, 2, &back), HF_OK);
    CU_ASSERT_EQUAL(back.keys[0], 1);
    CU_ASSERT_EQUAL(back.keys[3], 0);
    CU_ASSERT(fmpq_equal(back.values + 2, h.values + 2));
    CU_ASSERT_EQUAL(hf_found_decode("{\"keys\":[]}", 2, &back), HF_ERR_CORRUPT);
    CU_ASSERT_PTR_NOT_NULL(strstr(hf_error_msg(), "found-support record"));
    hf_error_clear();
    CU_ASSERT(!hf_found_is_implicit(rec));
    free(rec);

    /* an implicit support (a large row's): its multiplier, any size, read back exactly */
    fmpz r[3], rb[3];
    for (int i = 0; i < 3; i++) {
        fmpz_init(r + i);
        fmpz_init(rb + i);
    }
    fmpz_set_si(r + 0, -7);
    fmpz_set_str(r + 2, "123456789012345678901234567890", 10);
    hf_found_t fr = {.m = 5, .nr = 3, .r = r};
    CU_ASSERT_EQUAL(hf_found_encode(&fr, &rec), HF_OK);
    CU_ASSERT_STRING_EQUAL(rec, "{\"r\":[\"-7\",\"0\",\"123456789012345678901234567890\"]}");
    CU_ASSERT(hf_found_is_implicit(rec));
    CU_ASSERT_EQUAL(hf_found_decode_r(rec, 3, rb), HF_OK);
    for (int i = 0; i < 3; i++)
        CU_ASSERT(fmpz_equal(r + i, rb + i));
    CU_ASSERT_EQUAL(hf_found_decode_r(rec, 2, rb), HF_ERR_CORRUPT); /* wrong length */
    CU_ASSERT_EQUAL(hf_found_decode_r("{\"r\":[\"1x\"]}", 1, rb), HF_ERR_CORRUPT);
    hf_error_clear();
    for (int i = 0; i < 3; i++) {
        fmpz_clear(r + i);
        fmpz_clear(rb + i);
    }
    free(rec);

    /* dv = 1: flat values in the command line's JSON, either form read back */
    hf_head_t one, got;
    hf_head_init(&one, 1, 1);
    hf_head_init(&got, 1, 1);
    int64_t k = 4;
    fmpq_t w, v;
    fmpq_init(w);
    fmpq_init(v);
    fmpq_set_si(w, 2, 3);
    fmpq_set_si(v, -5, 1);
    CU_ASSERT_EQUAL(hf_head_push(&one, &k, w, v), HF_OK);
    o = hf_head_to_json(&one, NULL, 1);
    s = json_dumps(o, JSON_COMPACT | JSON_PRESERVE_ORDER);
    CU_ASSERT_STRING_EQUAL(s, "{\"keys\":[[4]],\"weights\":[\"2/3\"],\"values\":[\"-5\"]}");
    CU_ASSERT_EQUAL(hf_head_from_json(&got, o, 1), HF_OK);
    CU_ASSERT(heads_equal(&one, &got));
    free(s);
    json_decref(o);
    fmpq_clear(w);
    fmpq_clear(v);
    hf_head_clear(&one);
    hf_head_clear(&got);

    /* supports: the primitive integers (c, u = c v) RESULT.h5 stores, and back: the same
     * values, the weights scaled by one positive factor (42: the same head) */
    hf_supports_t sup;
    hf_supports_init(&sup, 2, 2, 2);
    CU_ASSERT_EQUAL(hf_supports_push_head(&sup, &h), HF_OK);
    const slong c_want[2] = {21, 126}, u_want[4] = {-7, 0, 90, 126};
    for (int i = 0; i < 2; i++)
        CU_ASSERT(fmpz_equal_si(sup.weights + i, c_want[i]));
    for (int i = 0; i < 4; i++)
        CU_ASSERT(fmpz_equal_si(sup.wvalues + i, u_want[i]));
    const char *why = "unset";
    CU_ASSERT_EQUAL(hf_supports_head(&sup, 0, &back, &why), HF_OK);
    CU_ASSERT_PTR_NULL(why);
    for (int i = 0; i < 4; i++)
        CU_ASSERT(fmpq_equal(h.values + i, back.values + i));
    for (int i = 0; i < 2; i++) {
        fmpq_t t;
        fmpq_init(t);
        fmpq_mul_si(t, h.weights + i, 42);
        CU_ASSERT(fmpq_equal(t, back.weights + i));
        fmpq_clear(t);
    }
    fmpz_zero(sup.weights + 1); /* a weight that is not positive: a bad witness, not an error */
    CU_ASSERT_EQUAL(hf_supports_head(&sup, 0, &back, &why), HF_OK);
    CU_ASSERT_PTR_NOT_NULL(why);
    hf_error_clear();
    hf_supports_clear(&sup);
    hf_head_clear(&h);
    hf_head_clear(&back);
}

static void finalize(void)
{
    MPI_Finalize();
}

int hf_register_tests(void)
{
    /* every rank runs every test; collective tests stay in step because CUnit
     * assertions do not stop a test */
    MPI_Init(NULL, NULL);
    atexit(finalize);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    static const hf_unit_case_t agree[] = {{"no error", test_agree_none},
                                           {"one rank fails", test_agree_one_fails},
                                           {"lowest own error wins", test_agree_lowest_wins},
                                           {"relayed errors lose", test_agree_relayed_loses},
                                           {"first item wins", test_agree_first},
                                           {"root and message", test_agree_root_and_message},
                                           {NULL, NULL}};
    static const hf_unit_case_t campaign[] = {
        {"orbits counted across the ranks", test_count_orbits},
        {"entry and resume", test_entry_and_resume},
        {"certified shortcut", test_certified_shortcut},
        {"fingerprints pinned", test_fingerprints_pinned},
        {"entry options and rows", test_entry_opts_and_rows},
        {"memory limit and row checks", test_memory_checks},
        {"a plan's nodes, engine, busy ranks and time", test_plan_nodes},
        {"search to a file", test_search_file},
        {"job run and resume", test_job},
        {NULL, NULL}};
    static const hf_unit_case_t witness[] = {{"head json, records, supports", test_head_json},
                                             {NULL, NULL}};
    if (hf_unit_suite("agree", agree) || hf_unit_suite("campaign", campaign) ||
        hf_unit_suite("witness", witness))
        return -1;
    return 0;
}
