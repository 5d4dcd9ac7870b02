/* The scheduler with a runner in place of the search (the hook bench/scaling_driver uses
 * to replay recorded costs): sizes in order, stop after the first size with a support,
 * every unit run once, resumed units skipped, the search itself never called. One rank
 * (MPI singleton); cli.search_ranks covers several. */
#include <CUnit/CUnit.h>
#include <mpi.h>
#include <string.h>

#include "headfuse/sched.h"
#include "unit.h"

enum { FIRST = 3, LAST = 7, UNITS = 4, FOUND_M = 5, FOUND_UNIT = 2 };

typedef struct {
    int prepared;
    int levels[LAST + 1];
    int ran[LAST + 1][UNITS];
    int done_hook;
} fake_t;

static hf_err_t f_prepare(void *ctx, hf_search_poll_fn poll, void *poll_ctx)
{
    (void)poll;
    (void)poll_ctx;
    ((fake_t *)ctx)->prepared++;
    return HF_OK;
}

static hf_err_t f_level(void *ctx, long m, long *nunits)
{
    ((fake_t *)ctx)->levels[m]++;
    *nunits = UNITS;
    return HF_OK;
}

static hf_err_t f_run_unit(void *ctx, long m, long unit, hf_search_found_fn found, void *found_ctx,
                           hf_search_poll_fn poll, void *poll_ctx, long *nodes)
{
    fake_t *f = ctx;
    f->ran[m][unit]++;
    if (poll)
        poll(poll_ctx);
    *nodes = 10 * m + unit;
    if (m == FOUND_M && unit == FOUND_UNIT)
        HF_TRY(found(found_ctx, m, NULL, NULL));
    return HF_OK;
}

static hf_err_t f_unit_done(void *ctx, long m, long unit, long nodes, long found, double seconds)
{
    (void)m;
    (void)unit;
    (void)nodes;
    (void)found;
    (void)seconds;
    ((fake_t *)ctx)->done_hook++;
    return HF_OK;
}

static void run(fake_t *f, const hf_sched_done_t *done, long ndone, hf_sched_outcome_t *out)
{
    memset(f, 0, sizeof *f);
    hf_sched_runner_t runner = {f_prepare, f_level, f_run_unit, f};
    hf_sched_hooks_t hooks = {NULL, f_unit_done, f};
    hf_sched_opts_t o = {.first_m = FIRST,
                         .last_m = LAST,
                         .done = done,
                         .ndone = ndone,
                         .quiet = 1,
                         .progress_interval = 1e9,
                         .runner = &runner};
    CU_ASSERT_EQUAL(hf_sched_run(MPI_COMM_WORLD, NULL, &o, &hooks, out), HF_OK);
}

static void test_runner_sizes_in_order(void)
{
    fake_t f;
    hf_sched_outcome_t out;
    run(&f, NULL, 0, &out);
    CU_ASSERT_EQUAL(out.m_star, FOUND_M);
    CU_ASSERT_EQUAL(out.last_m, FOUND_M);
    CU_ASSERT_EQUAL(out.nfound, 1);
    CU_ASSERT_EQUAL(out.units, (FOUND_M - FIRST + 1) * UNITS);
    long nodes = 0;
    for (long m = FIRST; m <= FOUND_M; m++)
        for (long u = 0; u < UNITS; u++)
            nodes += 10 * m + u;
    CU_ASSERT_EQUAL(out.nodes, nodes);
    CU_ASSERT_EQUAL(f.prepared, 1);
    for (long m = FIRST; m <= LAST; m++) {
        CU_ASSERT_EQUAL(f.levels[m], m <= FOUND_M ? 1 : 0);
        for (long u = 0; u < UNITS; u++)
            CU_ASSERT_EQUAL(f.ran[m][u], m <= FOUND_M ? 1 : 0);
    }
    CU_ASSERT_EQUAL(f.done_hook, (FOUND_M - FIRST + 1) * UNITS);
    CU_ASSERT_EQUAL(out.coord_messages, 0); /* one rank: nobody to answer */
}

static void test_runner_resume(void)
{
    /* size 3 finished earlier, and the unit that finds at size 5 */
    hf_sched_done_t done[UNITS + 1];
    for (long u = 0; u < UNITS; u++)
        done[u] = (hf_sched_done_t){FIRST, u, 10 * FIRST + u, 0};
    done[UNITS] = (hf_sched_done_t){FOUND_M, FOUND_UNIT, 10 * FOUND_M + FOUND_UNIT, 1};
    fake_t f;
    hf_sched_outcome_t out;
    run(&f, done, UNITS + 1, &out);
    CU_ASSERT_EQUAL(out.m_star, FOUND_M);
    CU_ASSERT_EQUAL(out.nfound, 1);
    for (long u = 0; u < UNITS; u++)
        CU_ASSERT_EQUAL(f.ran[FIRST][u], 0);
    CU_ASSERT_EQUAL(f.ran[FOUND_M][FOUND_UNIT], 0);
    CU_ASSERT_EQUAL(f.done_hook, (FOUND_M - FIRST + 1) * UNITS - UNITS - 1);
}

static int sched_cleanup(void)
{
    return MPI_Finalize() == MPI_SUCCESS ? 0 : -1;
}

int hf_register_tests(void)
{
    static const hf_unit_case_t cases[] = {
        {"runner: sizes in order, stop at the first support", test_runner_sizes_in_order},
        {"runner: resumed units are skipped, their yield counts", test_runner_resume},
        {NULL, NULL},
    };
    if (MPI_Init(NULL, NULL) != MPI_SUCCESS)
        return -1;
    return hf_unit_suite_with("sched", sched_cleanup, cases);
}
