/* The scheduler with a runner in place of the search (the hook bench/scaling_driver uses
 * to replay recorded costs): sizes in order, stop after the first size with a support,
 * every unit run once, resumed units skipped, the search itself never called. One rank
 * (MPI singleton); cli.search_ranks covers several. */
#include <CUnit/CUnit.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "headfuse/sched.h"
#include "unit.h"

enum { FIRST = 3, LAST = 7, UNITS = 4, FOUND_M = 5, FOUND_UNIT = 2, FOUND_CELL = 3, MAXC = 8 };

/* Unit u has 3 + u cells; cell c of (m, u) is worth 100 m + 10 u + c nodes. */
static int64_t cells_of(long unit)
{
    return 3 + unit;
}

typedef struct {
    int prepared;
    int levels[LAST + 1];
    int ran[LAST + 1][UNITS][MAXC];
    int done_hook;
    int64_t done_cells;
} fake_t;

static hf_err_t f_prepare(void *ctx, hf_search_poll_fn poll, void *poll_ctx)
{
    (void)poll;
    (void)poll_ctx;
    ((fake_t *)ctx)->prepared++;
    return HF_OK;
}

static void f_set_split(void *ctx, const hf_search_split_t *split)
{
    (void)ctx;
    (void)split;
}

static hf_err_t f_level(void *ctx, long m, hf_search_poll_fn poll, void *poll_ctx, long *nunits)
{
    (void)poll;
    (void)poll_ctx;
    ((fake_t *)ctx)->levels[m]++;
    *nunits = UNITS;
    return HF_OK;
}

static hf_err_t f_unit_cells(void *ctx, long m, long unit, int64_t *cells)
{
    (void)ctx;
    (void)m;
    *cells = cells_of(unit);
    return HF_OK;
}

static hf_err_t f_run_cells(void *ctx, long m, long unit, int64_t lo, hf_search_range_t *range,
                            hf_search_found_fn found, void *found_ctx, hf_search_poll_fn poll,
                            void *poll_ctx, long *nodes)
{
    fake_t *f = ctx;
    *nodes = 0;
    for (int64_t c = lo; c < range->hi; c++) {
        range->pos = c;
        f->ran[m][unit][c]++;
        *nodes += 100 * m + 10 * unit + c;
        if (m == FOUND_M && unit == FOUND_UNIT && c == FOUND_CELL) {
            hf_found_t fd = {.m = m};
            HF_TRY(found(found_ctx, &fd));
        }
        if (poll)
            poll(poll_ctx);
    }
    return HF_OK;
}

static hf_err_t f_unit_done(void *ctx, long m, long unit, int64_t lo, int64_t hi, long nodes,
                            long found, double seconds)
{
    (void)m;
    (void)unit;
    (void)nodes;
    (void)found;
    (void)seconds;
    fake_t *f = ctx;
    f->done_hook++;
    f->done_cells += hi - lo;
    return HF_OK;
}

static void run_with(fake_t *f, const hf_sched_done_t *done, long ndone, int quiet, double interval,
                     hf_sched_outcome_t *out)
{
    memset(f, 0, sizeof *f);
    hf_sched_runner_t runner = {.prepare = f_prepare,
                                .set_split = f_set_split,
                                .level = f_level,
                                .unit_cells = f_unit_cells,
                                .run_cells = f_run_cells,
                                .ctx = f};
    hf_sched_hooks_t hooks = {NULL, f_unit_done, f};
    hf_sched_opts_t o = {.first_m = FIRST,
                         .last_m = LAST,
                         .done = done,
                         .ndone = ndone,
                         .quiet = quiet,
                         .progress_interval = interval,
                         .label = "fake",
                         .runner = &runner};
    CU_ASSERT_EQUAL(hf_sched_run(MPI_COMM_WORLD, NULL, &o, &hooks, out), HF_OK);
}

static void run(fake_t *f, const hf_sched_done_t *done, long ndone, hf_sched_outcome_t *out)
{
    run_with(f, done, ndone, 1, 1e9, out);
}

static long cell_nodes(long m, long u, int64_t c)
{
    return 100 * m + 10 * u + (long)c;
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
    long nodes = 0, cells = 0;
    for (long m = FIRST; m <= FOUND_M; m++)
        for (long u = 0; u < UNITS; u++)
            for (int64_t c = 0; c < cells_of(u); c++, cells++)
                nodes += cell_nodes(m, u, c);
    CU_ASSERT_EQUAL(out.nodes, nodes);
    CU_ASSERT_EQUAL(f.prepared, 1);
    for (long m = FIRST; m <= LAST; m++) {
        CU_ASSERT_EQUAL(f.levels[m], m <= FOUND_M ? 1 : 0);
        for (long u = 0; u < UNITS; u++)
            for (int64_t c = 0; c < MAXC; c++)
                CU_ASSERT_EQUAL(f.ran[m][u][c], m <= FOUND_M && c < cells_of(u) ? 1 : 0);
    }
    CU_ASSERT_EQUAL(f.done_hook, (FOUND_M - FIRST + 1) * UNITS);
    CU_ASSERT_EQUAL(f.done_cells, cells);
    CU_ASSERT_EQUAL(out.coord_messages, 0); /* one rank: nobody to answer */
    CU_ASSERT_EQUAL(out.steals, 0);
}

static void test_runner_resume(void)
{
    /* size 3 finished earlier as whole units (older shards), the unit that finds at size 5
     * in two ranges, and parts of unit 1 of size 4: cells 0, 1 and 3 */
    enum { A = 0, W = INT64_MAX };
    hf_sched_done_t done[UNITS + 4];
    long n = 0;
    for (long u = 0; u < UNITS; u++)
        done[n++] = (hf_sched_done_t){.m = FIRST, .unit = u, .lo = A, .hi = W, .nodes = 7};
    done[n++] = (hf_sched_done_t){.m = 4, .unit = 1, .lo = 0, .hi = 2, .nodes = 5};
    done[n++] = (hf_sched_done_t){.m = 4, .unit = 1, .lo = 3, .hi = 4, .nodes = 6};
    done[n++] = (hf_sched_done_t){
        .m = FOUND_M, .unit = FOUND_UNIT, .lo = 0, .hi = 2, .nodes = 1, .found = 0};
    done[n++] = (hf_sched_done_t){
        .m = FOUND_M, .unit = FOUND_UNIT, .lo = 2, .hi = W, .nodes = 2, .found = 1};
    fake_t f;
    hf_sched_outcome_t out;
    run(&f, done, n, &out);
    CU_ASSERT_EQUAL(out.m_star, FOUND_M);
    CU_ASSERT_EQUAL(out.nfound, 1);
    for (long u = 0; u < UNITS; u++)
        for (int64_t c = 0; c < MAXC; c++) {
            CU_ASSERT_EQUAL(f.ran[FIRST][u][c], 0);
            CU_ASSERT_EQUAL(f.ran[FOUND_M][FOUND_UNIT][c], 0);
        }
    /* unit 1 of size 4 (4 cells): only cell 2 is left */
    CU_ASSERT_EQUAL(f.ran[4][1][0], 0);
    CU_ASSERT_EQUAL(f.ran[4][1][1], 0);
    CU_ASSERT_EQUAL(f.ran[4][1][2], 1);
    CU_ASSERT_EQUAL(f.ran[4][1][3], 0);
    CU_ASSERT_EQUAL(f.ran[4][0][0], 1);
    /* the yield of what was resumed counts, the rest is run */
    long nodes = 7 * UNITS + 5 + 6 + 1 + 2;
    for (long m = 4; m <= FOUND_M; m++)
        for (long u = 0; u < UNITS; u++)
            for (int64_t c = 0; c < cells_of(u); c++)
                if (f.ran[m][u][c])
                    nodes += cell_nodes(m, u, c);
    CU_ASSERT_EQUAL(out.nodes, nodes);
    /* every unit of sizes 4 and 5 but the resumed ones once, unit 1 of size 4 in one range */
    CU_ASSERT_EQUAL(f.done_hook, 2 * UNITS - 1);
}

static void test_progress_no_estimate_before_a_unit(void)
{
    /* a progress line at every poll: the first ones come before any unit of the size
     * has finished, when there is no rate and no time left to give */
    char path[] = "/tmp/hf-sched-progress.XXXXXX";
    int fd = mkstemp(path), saved = dup(2);
    CU_ASSERT_FATAL(fd >= 0 && saved >= 0);
    fflush(stderr);
    dup2(fd, 2);
    fake_t f;
    hf_sched_outcome_t out;
    run_with(&f, NULL, 0, 0, 0, &out);
    fflush(stderr);
    dup2(saved, 2);
    close(saved);
    FILE *in = fdopen(fd, "r");
    CU_ASSERT_FATAL(in != NULL);
    rewind(in);
    char line[512];
    int before = 0, after = 0;
    while (fgets(line, sizeof line, in)) {
        if (!strstr(line, ": units "))
            continue;
        if (strstr(line, ": units 0/")) {
            before++;
            CU_ASSERT_PTR_NULL(strstr(line, "remaining"));
            CU_ASSERT_PTR_NULL(strstr(line, " 0 supports/s"));
            CU_ASSERT_PTR_NOT_NULL(strstr(line, "no estimate yet"));
        } else if (strstr(line, "remaining ~")) {
            after++;
        }
    }
    fclose(in);
    unlink(path);
    CU_ASSERT(before > 0); /* the case was shown */
    CU_ASSERT(after > 0);  /* and the estimate once a unit finished */
    CU_ASSERT_EQUAL(out.m_star, FOUND_M);
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
        {"progress: no estimate before a unit of the size finished",
         test_progress_no_estimate_before_a_unit},
        {NULL, NULL},
    };
    if (MPI_Init(NULL, NULL) != MPI_SUCCESS)
        return -1;
    return hf_unit_suite_with("sched", sched_cleanup, cases);
}
