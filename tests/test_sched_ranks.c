/* The deal of work to ranks (hf_sched_deal) and the split of a size's preparation across
 * ranks (hf_sched_split_t, hf_search_split_t), under mpirun with 1, 2 and 3 ranks: every
 * cell of a round is run exactly once, long ranges are split by steals, a failure on one
 * rank ends the round on all; the layered engine's face tables and units are those of a
 * search prepared alone on one process, whatever the rank count; a stop or an allocation
 * failure on one rank during the split preparation stops or fails every rank at the same
 * exchange, none is left waiting, and the size can be prepared again; the exchange's
 * all-gather (Bruck's) gives MPI_Allgatherv's bytes.
 * Collective: every rank runs every test, so assertions are never fatal. */
#include <CUnit/CUnit.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "headfuse/control.h"
#include "families.h"
#include "headfuse/sched.h"
#include "search/cone_impl.h"
#include "search/layered_impl.h"
#include "unit.h"

static int rank, nranks;

/* chain:d=3 at span 3 (layered): sizes 21..24 (LB 21: the slices, docs/math.md §12.9), face
 * tables of two and one dimensions. */
static const char *const SPEC = "chain:d=3";
enum { SPAN = 3, SIZES = 3 };

static hf_search_t *make(hf_target_t *t)
{
    hf_search_opts_t so = {.span = SPAN, .max_atoms = 0, .engine = HF_ENGINE_LAYERED};
    hf_search_t *s = NULL;
    CU_ASSERT_EQUAL(hf_search_create(t, &so, NULL, &s), HF_OK);
    return s;
}

/* 1 when every face table of a and b lists the same entries in the same order, by size. */
static int same_tables(const hf_search_t *a, const hf_search_t *b)
{
    const hf_fs_registry_t *ra = hf_layered(a)->reg, *rb = hf_layered(b)->reg;
    if (ra->n != rb->n)
        return 0;
    for (long i = 0; i < ra->n; i++) {
        const hf_fs_t *x = ra->fs[i], *y = rb->fs[i];
        if (x->dim != y->dim || x->done != y->done || x->n != y->n)
            return 0;
        for (long sz = 1; sz <= x->done + 1 && x->done > 0; sz++)
            if (x->by_size[sz] != y->by_size[sz])
                return 0;
        for (long e = 0; e < x->n; e++)
            if (x->size[e] != y->size[e] || memcmp(x->idx + x->start[e], y->idx + y->start[e],
                                                   (size_t)x->size[e] * sizeof *x->idx))
                return 0;
    }
    return 1;
}

/* 1 when the prepared sizes of a and b have the same units. */
static int same_units(const hf_search_t *a, const hf_search_t *b)
{
    if (a->level_m != b->level_m || a->nunits != b->nunits)
        return 0;
    for (long i = 0; i < a->nunits; i++) {
        const hf_unit_t *x = a->units + i, *y = b->units + i;
        if (x->block != y->block || x->first != y->first || x->count != y->count ||
            x->npre != y->npre || (x->npre > 0 && x->pre[0] != y->pre[0]) ||
            (x->npre > 1 && x->pre[1] != y->pre[1]))
            return 0;
    }
    return 1;
}

/* 1 on every rank when cond holds on every rank. */
static int all(int cond)
{
    int r;
    MPI_Allreduce(&cond, &r, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    return r;
}

static int load(hf_target_t *t)
{
    hf_target_init_empty(t);
    return hf_target_from_family(t, SPEC) == HF_OK;
}

static hf_err_t count_found(void *ctx, long unit, int64_t lo, const hf_found_t *f)
{
    (void)unit;
    (void)lo;
    (void)f;
    (*(long *)ctx)++;
    return HF_OK;
}

/* Prepare sizes first..last of s (with poll), stopping at the first failure; the size it
 * failed at, or last + 1. With a split, the ranks agree after each size, as the scheduler
 * does (a failure after the face tables, in the units of the size, is one rank's own). */
static long prepare(hf_search_t *s, const hf_sched_split_t *sp, long first, long last,
                    hf_search_poll_fn poll, void *ctx, hf_err_t *err)
{
    long m = first, nu = 0;
    *err = HF_OK;
    for (; m <= last; m++) {
        *err = hf_search_level_polled(s, m, poll, ctx, &nu);
        if (sp)
            *err = sp->split.allgather(sp->split.ctx, *err, NULL, 0, NULL, NULL);
        if (*err != HF_OK)
            break;
    }
    return m;
}

/* The whole search through the scheduler (which splits each size's preparation when it
 * has several ranks): the figures of one process, and the face tables and units of a
 * search prepared alone. */
static void test_sched_split_same_result(void)
{
    hf_target_t t;
    CU_ASSERT(load(&t));
    hf_search_t *s = make(&t), *ref = make(&t);
    long found = 0, total = 0;
    hf_sched_hooks_t hooks = {count_found, NULL, &found};
    hf_sched_opts_t o = {.first_m = hf_search_first_size(s),
                         .last_m = hf_search_last_size(s),
                         .quiet = 1,
                         .progress_interval = 1e9};
    hf_sched_outcome_t out;
    CU_ASSERT(all(hf_sched_run(MPI_COMM_WORLD, s, &o, &hooks, &out) == HF_OK));
    MPI_Allreduce(&found, &total, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
    /* the figures of `headfuse search --family chain:d=3 --span 3 --engine layered` */
    CU_ASSERT_EQUAL(out.m_star, 24);
    CU_ASSERT_EQUAL(out.nfound, 1);
    CU_ASSERT_EQUAL(total, 1);
    CU_ASSERT_EQUAL(out.nodes, 354958); /* 355408 from size 18, before the slices */
    hf_err_t err;
    CU_ASSERT_EQUAL(prepare(ref, NULL, o.first_m, out.m_star, NULL, NULL, &err), out.m_star + 1);
    CU_ASSERT(all(same_tables(s, ref) && same_units(s, ref)));
    hf_search_destroy(&ref);
    hf_search_destroy(&s);
    hf_target_clear(&t);
}

/* A stop request on one rank (the first or the last) while the sizes are prepared with
 * the split, at its first poll, its middle one or its last: every rank stops at the
 * same size, with that size unprepared; preparing again without a stop gives the
 * tables and units of a search prepared alone. */
static void test_split_stop_on_one_rank(void)
{
    hf_target_t t;
    CU_ASSERT(load(&t));
    hf_sched_split_t split;
    hf_sched_split_init(&split, MPI_COMM_WORLD);
    hf_search_t *ref = make(&t);
    long m0 = hf_search_first_size(ref), m1 = m0 + SIZES - 1;
    hf_err_t err;
    hf_unit_poll_count_t alone = {0, 0};
    CU_ASSERT_EQUAL(prepare(ref, NULL, m0, m1, hf_unit_poll_count, &alone, &err), m1 + 1);
    /* how often each rank polls in a split preparation of these sizes: less than alone
     * (it runs a share of the sub-units) */
    hf_search_t *s = make(&t);
    hf_search_set_split(s, &split.split);
    hf_unit_poll_count_t pc = {0, 0};
    CU_ASSERT(all(prepare(s, &split, m0, m1, hf_unit_poll_count, &pc, &err) == m1 + 1));
    CU_ASSERT(all(same_tables(s, ref) && same_units(s, ref)));
    /* one rank alone polls as often; of several, some rank polls less (each runs a share,
     * but under load one rank may run nearly all, in more ranges than alone, and poll more:
     * a CI run with a simulation beside it did) */
    long fewest = pc.calls;
    MPI_Allreduce(&pc.calls, &fewest, 1, MPI_LONG, MPI_MIN, MPI_COMM_WORLD);
    CU_ASSERT(nranks == 1 ? pc.calls == alone.calls : fewest < alone.calls);
    hf_search_destroy(&s);
    int stoppers[2] = {0, nranks - 1};
    for (int k = 0; k < 2; k++) {
        long calls = pc.calls; /* the stopping rank's count is broadcast */
        MPI_Bcast(&calls, 1, MPI_LONG, stoppers[k], MPI_COMM_WORLD);
        long limits[3] = {1, calls / 2 > 0 ? calls / 2 : 1, calls};
        for (int l = 0; l < 3; l++) {
            s = make(&t);
            hf_search_set_split(s, &split.split);
            hf_unit_poll_count_t stop = {0, rank == stoppers[k] ? limits[l] : 0};
            long at = prepare(s, &split, m0, m1, hf_unit_poll_count, &stop, &err), lo, hi;
            MPI_Allreduce(&at, &lo, 1, MPI_LONG, MPI_MIN, MPI_COMM_WORLD);
            MPI_Allreduce(&at, &hi, 1, MPI_LONG, MPI_MAX, MPI_COMM_WORLD);
            CU_ASSERT(lo == hi);
            /* the deal is dynamic: a rank may poll less often than in the run counted, and
             * then never reach a late stop; its first poll it always reaches */
            if (l > 0 && all(err == HF_OK && at == m1 + 1)) {
                hf_search_destroy(&s);
                continue;
            }
            CU_ASSERT(at <= m1);
            CU_ASSERT(all(err == HF_ERR_INTERRUPTED));
            /* the size is not prepared: running a unit is refused */
            CU_ASSERT(
                all(hf_search_run_unit(s, at, 0, NULL, NULL, NULL, NULL, NULL) == HF_ERR_INPUT));
            CU_ASSERT(all(prepare(s, &split, at, m1, NULL, NULL, &err) == m1 + 1));
            CU_ASSERT(all(same_tables(s, ref) && same_units(s, ref)));
            hf_search_destroy(&s);
        }
    }
    hf_search_destroy(&ref);
    hf_target_clear(&t);
}

/* An allocation failing on one rank (the last) at points spread over its split
 * preparation: every rank fails with HF_ERR_NOMEM at the same size (none waits), the
 * others relaying it; or, when the failure point is past the preparation, all succeed. */
static void test_split_nomem_on_one_rank(void)
{
    hf_target_t t;
    CU_ASSERT(load(&t));
    hf_sched_split_t split;
    hf_sched_split_init(&split, MPI_COMM_WORLD);
    long m0 = 0, m1 = 0, calls = 0, failed = 0;
    hf_err_t err;
    {
        hf_search_t *s = make(&t);
        m0 = hf_search_first_size(s);
        m1 = m0 + SIZES - 1;
        hf_search_set_split(s, &split.split);
        long before = hf_alloc_calls();
        CU_ASSERT(all(prepare(s, &split, m0, m1, NULL, NULL, &err) == m1 + 1));
        calls = hf_alloc_calls() - before;
        hf_search_destroy(&s);
    }
    MPI_Bcast(&calls, 1, MPI_LONG, nranks - 1, MPI_COMM_WORLD);
    enum { SAMPLES = 40 };
    for (long i = 0; i < SAMPLES; i++) {
        long point = 1 + i * (calls - 1) / (SAMPLES - 1);
        hf_search_t *s = make(&t);
        hf_search_set_split(s, &split.split);
        if (rank == nranks - 1)
            hf_fail_after(point);
        long at = prepare(s, &split, m0, m1, NULL, NULL, &err), lo, hi;
        hf_fail_after(0);
        MPI_Allreduce(&at, &lo, 1, MPI_LONG, MPI_MIN, MPI_COMM_WORLD);
        MPI_Allreduce(&at, &hi, 1, MPI_LONG, MPI_MAX, MPI_COMM_WORLD);
        CU_ASSERT(lo == hi);
        CU_ASSERT(all(err == HF_OK || err == HF_ERR_NOMEM));
        int e = (int)err, e0 = 0;
        MPI_Allreduce(&e, &e0, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
        CU_ASSERT(all(e == e0));
        /* with more than one rank the others relay the failing rank's error */
        if (err != HF_OK && nranks > 1)
            CU_ASSERT_EQUAL(hf_error_is_relayed(), rank != nranks - 1);
        failed += err != HF_OK;
        hf_search_destroy(&s);
    }
    CU_ASSERT(failed > SAMPLES / 2);
    hf_target_clear(&t);
}

/* ---------------------------------------------------------------- the deal */

/* A round of DEAL_UNITS units: unit u has 50 (u + 1) cells; the cells of unit 0 below 40
 * take 5 ms each (the range holding them is stolen from, even when the ranks share two
 * cores), every other one 2 us. */
enum { DEAL_UNITS = 6, DEAL_MAXC = 300 };

typedef struct {
    int ran[DEAL_UNITS][DEAL_MAXC]; /* this rank's runs of each cell */
    long fail_at;                   /* this rank fails at its fail_at-th cell (0: never) */
    long cells_run;
    int64_t done_cells; /* rank 0: cells of the ranges reported finished */
    long done_nodes;
} deal_test_t;

static void spin(double seconds)
{
    double t0 = MPI_Wtime();
    while (MPI_Wtime() - t0 < seconds)
        ;
}

static hf_err_t deal_run(void *ctx, const hf_sched_item_t *it, hf_search_range_t *range,
                         hf_search_poll_fn poll, void *poll_ctx, long *nodes, long *found)
{
    deal_test_t *t = ctx;
    *nodes = *found = 0;
    for (int64_t c = it->lo; c < range->hi; c++) {
        range->pos = c;
        if (t->fail_at && ++t->cells_run == t->fail_at)
            return hf_error(HF_ERR_IO, "test: failing at cell %lld", (long long)c);
        t->ran[it->unit][c]++;
        *nodes += 1;
        spin(it->unit == 0 && c < 40 ? 5e-3 : 2e-6);
        poll(poll_ctx);
    }
    return HF_OK;
}

static void deal_done(void *ctx, const hf_sched_item_t *it, long nodes, long found)
{
    (void)found;
    deal_test_t *t = ctx;
    t->done_cells += it->hi - it->lo;
    t->done_nodes += nodes;
}

/* One round on every rank; *runs[u][c]: how many ranks ran each cell, on every rank. */
static hf_err_t deal_round(deal_test_t *t, int dedicated, hf_err_t status, int (*runs)[DEAL_MAXC],
                           hf_sched_deal_stats_t *stats)
{
    hf_sched_split_t sp;
    hf_sched_split_init(&sp, MPI_COMM_WORLD);
    sp.dedicated = dedicated;
    hf_sched_item_t items[DEAL_UNITS];
    for (long u = 0; u < DEAL_UNITS; u++)
        items[u] = (hf_sched_item_t){u, 0, 50 * (u + 1)};
    hf_err_t e = hf_sched_deal(&sp, status, items, DEAL_UNITS, deal_run, t, deal_done, t);
    MPI_Allreduce(t->ran, runs, DEAL_UNITS * DEAL_MAXC, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    *stats = sp.stats;
    return e;
}

/* Every cell exactly once (or at most once, when the round was abandoned). */
static int cells_once(int (*runs)[DEAL_MAXC], int exact)
{
    for (long u = 0; u < DEAL_UNITS; u++)
        for (long c = 0; c < DEAL_MAXC; c++) {
            int want = c < 50 * (u + 1) ? 1 : 0;
            if (exact ? runs[u][c] != want : runs[u][c] > want)
                return 0;
        }
    return 1;
}

static void test_deal_every_cell_once(void)
{
    for (int dedicated = 0; dedicated <= (nranks > 1); dedicated++) {
        static deal_test_t t;
        static int runs[DEAL_UNITS][DEAL_MAXC];
        hf_sched_deal_stats_t st;
        /* a steal needs a rank to ask while the long range runs: on an overloaded machine
         * (the ranks descheduled while the 5 ms cells spin on the clock) one round can end
         * without one, so up to three rounds are run, each checked, until one steals */
        for (int attempt = 0;; attempt++) {
            memset(&t, 0, sizeof t);
            CU_ASSERT(all(deal_round(&t, dedicated, HF_OK, runs, &st) == HF_OK));
            CU_ASSERT(all(cells_once(runs, 1)));
            long steals = st.steals;
            MPI_Bcast(&steals, 1, MPI_LONG, 0, MPI_COMM_WORLD);
            if (steals > 0 || nranks - dedicated <= 1 || attempt == 2)
                break;
        }
        long mine = 0;
        for (long u = 0; u < DEAL_UNITS; u++)
            for (long c = 0; c < DEAL_MAXC; c++)
                mine += t.ran[u][c];
        if (rank == 0) {
            /* the ranges reported finished cover the round once */
            CU_ASSERT_EQUAL(t.done_cells, 50 * DEAL_UNITS * (DEAL_UNITS + 1) / 2);
            CU_ASSERT_EQUAL(t.done_nodes, t.done_cells);
            CU_ASSERT_EQUAL(st.rounds, 1);
            /* the expensive cells of unit 0 are shared out by stealing */
            if (nranks - dedicated > 1)
                CU_ASSERT(st.steals > 0);
            if (dedicated)
                CU_ASSERT_EQUAL(mine, 0);
        }
    }
}

static long idle_runs; /* this rank's runs of the idle task */

static hf_err_t idle_spin(void *ctx)
{
    (void)ctx;
    idle_runs++;
    spin(2e-2);
    return HF_OK;
}

/* The idle task (hf_sched_idle_t) over several rounds of one split: run by rank 0 or the
 * last rank, once in all (twice at most, when both waited at the same moment), never on
 * one process, and every round still runs every cell once. */
static void test_deal_idle_task(void)
{
    for (int first_long = 0; first_long <= 1; first_long++) {
        static deal_test_t t;
        static int runs[DEAL_UNITS][DEAL_MAXC];
        hf_sched_split_t sp;
        hf_sched_split_init(&sp, MPI_COMM_WORLD);
        hf_sched_idle_t idle = {.run = idle_spin};
        sp.idle = &idle;
        idle_runs = 0;
        for (int round = 0; round < 3; round++) {
            memset(&t, 0, sizeof t);
            hf_sched_item_t items[DEAL_UNITS];
            for (long u = 0; u < DEAL_UNITS; u++) /* first_long: rank 0's first range is long */
                items[u] = (hf_sched_item_t){u, 0, first_long ? 50 * (u + 1) : 300 - 50 * u};
            CU_ASSERT(all(hf_sched_deal(&sp, HF_OK, items, DEAL_UNITS, deal_run, &t, NULL, NULL) ==
                          HF_OK));
            MPI_Allreduce(t.ran, runs, DEAL_UNITS * DEAL_MAXC, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
            for (long u = 0; u < DEAL_UNITS; u++)
                for (int64_t c = 0; c < items[u].hi; c++)
                    CU_ASSERT_EQUAL(runs[u][c], 1);
        }
        CU_ASSERT_EQUAL(idle_runs, idle.ran ? 1 : 0);
        CU_ASSERT(idle.status == HF_OK);
        if (rank != 0 && rank != nranks - 1)
            CU_ASSERT_EQUAL(idle_runs, 0);
        long total = 0;
        MPI_Allreduce(&idle_runs, &total, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
        CU_ASSERT(nranks == 1 ? total == 0 : total >= 1 && total <= 2);
    }
}

/* The idle task's outcome agreed after the deal (hf_sched_idle_agree): an error on any rank
 * that ran it fails every rank, also when another rank ran it too and succeeded (the double
 * run of two ranks that waited at once, set here by hand: a fault there once went unseen);
 * a rank that did not run it adds nothing. */
static void test_idle_agree(void)
{
    for (int fails = -1; fails < nranks; fails++) {
        hf_sched_idle_t idle = {.run = idle_spin};
        if (rank == 0 || rank == nranks - 1 || rank == fails) {
            idle.ran = 1;
            idle.status =
                rank == fails ? hf_error(HF_ERR_NOMEM, "out of memory on rank %d", rank) : HF_OK;
        }
        hf_err_t e = hf_sched_idle_agree(MPI_COMM_WORLD, &idle);
        CU_ASSERT_EQUAL(e, fails < 0 ? HF_OK : HF_ERR_NOMEM);
        hf_error_clear();
        /* one that ran it but did not fail: OK whatever the others that did not run it */
        idle = (hf_sched_idle_t){.run = idle_spin, .ran = rank == fails, .status = HF_OK};
        CU_ASSERT_EQUAL(hf_sched_idle_agree(MPI_COMM_WORLD, &idle), HF_OK);
    }
}

/* A rank that fails in the middle of the round, or enters it failed: every rank returns
 * (none waits), that rank with its own error; no cell runs twice. */
static void test_deal_failure_on_one_rank(void)
{
    for (int k = 0; k < 2; k++) {
        static deal_test_t t;
        static int runs[DEAL_UNITS][DEAL_MAXC];
        hf_sched_deal_stats_t st;
        memset(&t, 0, sizeof t);
        int failing = nranks - 1;
        if (rank == failing && k == 0)
            t.fail_at = 5;
        hf_err_t status = rank == failing && k == 1 ? HF_ERR_NOMEM : HF_OK;
        hf_err_t e = deal_round(&t, 0, status, runs, &st);
        CU_ASSERT(all(cells_once(runs, 0)));
        CU_ASSERT_EQUAL(e, rank == failing ? (k == 0 ? HF_ERR_IO : HF_ERR_NOMEM) : HF_OK);
    }
}

/* Rounds smaller than the ranks: none, one range of one cell (only one rank takes part),
 * and rank 0 entering failed (nobody runs anything, rank 0 returns its error). */
static void test_deal_small_rounds(void)
{
    static deal_test_t t;
    hf_sched_split_t sp;
    hf_sched_split_init(&sp, MPI_COMM_WORLD);
    hf_sched_item_t one = {3, 7, 8};
    memset(&t, 0, sizeof t);
    CU_ASSERT(all(hf_sched_deal(&sp, HF_OK, NULL, 0, deal_run, &t, NULL, NULL) == HF_OK));
    CU_ASSERT(all(hf_sched_deal(&sp, HF_OK, &one, 1, deal_run, &t, deal_done, &t) == HF_OK));
    int ran = t.ran[3][7], total = 0;
    MPI_Allreduce(&ran, &total, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    CU_ASSERT_EQUAL(total, 1);
    if (rank == 0)
        CU_ASSERT_EQUAL(t.done_cells, 1);
    hf_err_t e =
        hf_sched_deal(&sp, rank == 0 ? HF_ERR_NOMEM : HF_OK, &one, 1, deal_run, &t, NULL, NULL);
    CU_ASSERT_EQUAL(e, rank == 0 ? HF_ERR_NOMEM : HF_OK);
    ran = t.ran[3][7];
    MPI_Allreduce(&ran, &total, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    CU_ASSERT_EQUAL(total, 1); /* not run again */
    CU_ASSERT_EQUAL(sp.stats.rounds, 3);
}

/* ---------------------------------------------------------------- the cone across ranks */

/* The cone engine's rays for target t at span: prepared by this process alone, or with
 * the split (collective: every step dealt across the ranks). Returns the search (NULL when
 * the cone does not apply: a span below an extent of Newt(Q)). */
static hf_search_t *cone_rays_of(const hf_target_t *t, int span, const hf_sched_split_t *sp)
{
    hf_search_opts_t so = {.span = span, .engine = HF_ENGINE_CONE};
    hf_search_t *s = NULL;
    CU_ASSERT_EQUAL_FATAL(hf_search_create(t, &so, NULL, &s), HF_OK);
    if (sp)
        hf_search_set_split(s, &sp->split);
    hf_err_t e = hf_search_prepare(s, NULL, NULL);
    CU_ASSERT_EQUAL(e, HF_OK);
    if (sp)
        hf_search_set_split(s, NULL);
    return s;
}

/* 1 when both searches hold the same rays (count, supports, sizes, order). */
static int same_rays(const hf_search_t *a, const hf_search_t *b)
{
    long na, nb, wa, wb;
    const uint64_t *sa, *sb;
    const long *za, *zb;
    hf_search_cone_rays(a, &na, &wa, &sa, &za);
    hf_search_cone_rays(b, &nb, &wb, &sb, &zb);
    if (na != nb || wa != wb)
        return 0;
    return na == 0 || (!memcmp(sa, sb, (size_t)(na * wa) * sizeof *sa) &&
                       !memcmp(za, zb, (size_t)na * sizeof *za));
}

/* A small random target in d = 2 or 3: sums of 1..3 heads of 2..3 atoms with keys in
 * {0..2}^d, small weights and values (the same on every rank: seeded). */
static void random_target(hf_target_t *t, int trial)
{
    char name[32];
    snprintf(name, sizeof name, "cone_random%d", trial);
    int d = 2 + (int)(fam_rng() % 2), nh = 1 + (int)(fam_rng() % 3);
    fam_die(hf_target_init(t, name, d, 1));
    for (int k = 0; k < nh; k++) {
        hf_head_t h;
        hf_head_init(&h, d, 1);
        int na = 2 + (int)(fam_rng() % 2);
        int64_t keys[9];
        for (int a = 0; a < na; a++) {
            int dup = 1;
            while (dup) {
                for (int j = 0; j < d; j++)
                    keys[a * d + j] = (int64_t)(fam_rng() % 3);
                dup = 0;
                for (int b = 0; b < a; b++)
                    dup |= !memcmp(keys + a * d, keys + b * d, (size_t)d * sizeof *keys);
            }
            fam_atom(&h, keys + a * d, fam_rnd(1, 3), fam_rnd(-2, 2));
        }
        fam_die(hf_target_add_head(t, &h));
        hf_head_clear(&h);
    }
}

/* chain:d=2's heads with weights of 2^70 and more, so that the rays' integers exceed a
 * word and travel as limbs. */
static void big_weights_target(hf_target_t *t)
{
    fam_die(hf_target_init(t, "cone_big_weights", 2, 1));
    static const int64_t keys[3][2][2] = {{{0, 0}, {1, 0}}, {{0, 0}, {0, 1}}, {{0, 0}, {1, 1}}};
    for (int k = 0; k < 3; k++) {
        hf_head_t h;
        hf_head_init(&h, 2, 1);
        for (int a = 0; a < 2; a++) {
            fmpq_t w, v;
            fmpq_init(w);
            fmpq_init(v);
            fmpz_set_ui(fmpq_numref(w), 1);
            fmpz_mul_2exp(fmpq_numref(w), fmpq_numref(w), 70 + 3 * (ulong)(k + a));
            fmpz_add_ui(fmpq_numref(w), fmpq_numref(w), (ulong)(7 * k + a + 1));
            fmpq_set_si(v, a, 1);
            fam_die(hf_head_push(&h, keys[k][a], w, v));
            fmpq_clear(v);
            fmpq_clear(w);
        }
        fam_die(hf_target_add_head(t, &h));
        hf_head_clear(&h);
    }
}

/* The families at small d and 40 random targets, each at the span where its cone has a
 * few dozen unknowns: the dealt double description (every step dealt, HF_KNOB_CONE_SPLIT_PAIRS_MIN
 * 0) gives one process's rays on every rank (and on a target whose rays' integers exceed
 * a word), with the default cells and (every third target) with cells of two negative
 * rays; with one cell's records dropped in every dealt step (a planted bug) it does not,
 * on some target, with both. */
static void test_cone_split_rays(void)
{
    hf_sched_split_t split;
    hf_sched_split_init(&split, MPI_COMM_WORLD);
    hf_knob_set(HF_KNOB_CONE_SPLIT_PAIRS_MIN, 0);
    fam_rng_state = 20261202;
    long compared = 0, caught = 0, caught_blocks = 0, blocks = 0;
    for (int trial = 0; trial < 55; trial++) {
        hf_target_t t;
        int span = 3;
        if (trial == 54) {
            big_weights_target(&t);
            span = 4;
        } else if (trial < 14) {
            static const struct {
                int kind, d, k, span;
            } fam[] = {{0, 1, 0, 3}, {0, 2, 0, 3}, {0, 3, 0, 2}, {1, 2, 0, 4}, {1, 3, 0, 3},
                       {1, 3, 0, 4}, {1, 4, 0, 3}, {2, 2, 0, 3}, {2, 3, 0, 2}, {3, 2, 3, 3},
                       {3, 3, 3, 3}, {3, 2, 2, 2}, {1, 5, 0, 3}, {0, 4, 0, 2}};
            hf_target_init_empty(&t);
            switch (fam[trial].kind) {
            case 0:
                fam_wd(&t, fam[trial].d);
                break;
            case 1:
                fam_chain(&t, fam[trial].d);
                break;
            case 2:
                fam_wdw(&t, fam[trial].d);
                break;
            default:
                fam_multi(&t, fam[trial].d, fam[trial].k);
                break;
            }
            span = fam[trial].span;
        } else {
            random_target(&t, trial);
        }
        hf_search_t *alone = cone_rays_of(&t, span, NULL);
        hf_search_t *dealt = cone_rays_of(&t, span, &split);
        CU_ASSERT(all(same_rays(alone, dealt)));
        hf_search_destroy(&dealt);
        hf_knob_set(HF_KNOB_CONE_DROP_CELL, 0);
        dealt = cone_rays_of(&t, span, &split);
        hf_knob_unset(HF_KNOB_CONE_DROP_CELL);
        caught += !all(same_rays(alone, dealt));
        hf_search_destroy(&dealt);
        compared++;
        if (trial % 3 != 0) { /* a third of the targets (the sanitizer run's time) */
            hf_search_destroy(&alone);
            hf_target_clear(&t);
            continue;
        }
        /* cells of two negative rays each: one positive ray's pairs lie in several cells,
         * which other ranks may run */
        hf_knob_set(HF_KNOB_CONE_CELL_NEGATIVES, 2);
        dealt = cone_rays_of(&t, span, &split);
        CU_ASSERT(all(same_rays(alone, dealt)));
        hf_search_destroy(&dealt);
        hf_knob_set(HF_KNOB_CONE_DROP_CELL, 1); /* the first positive ray's second block */
        dealt = cone_rays_of(&t, span, &split);
        hf_knob_unset(HF_KNOB_CONE_DROP_CELL);
        caught_blocks += !all(same_rays(alone, dealt));
        hf_knob_unset(HF_KNOB_CONE_CELL_NEGATIVES);
        blocks++;
        hf_search_destroy(&dealt);
        hf_search_destroy(&alone);
        hf_target_clear(&t);
    }
    hf_knob_unset(HF_KNOB_CONE_SPLIT_PAIRS_MIN);
    CU_ASSERT_EQUAL(compared, 55);
    CU_ASSERT_EQUAL(blocks, 19);
    CU_ASSERT(caught > 0);
    CU_ASSERT(caught_blocks > 0);
    if (rank == 0)
        fprintf(stderr,
                "\n  cone split: %ld targets, planted bug caught on %ld (cells of 2 negative "
                "rays: %ld targets, caught on %ld)\n",
                compared, caught, blocks, caught_blocks);
}

/* hf_sched_allgatherv (Bruck's rounds) against MPI_Allgatherv, byte for byte: counts with
 * zeros, one rank holding almost all, every rank the same, from a separate buffer and in
 * place. With 4 ranks or more a round's blocks wrap past the last rank (two segments):
 * CTest also runs this test alone on 5 and 8 ranks. */
static void test_allgatherv_bruck(void)
{
    int *counts = malloc((size_t)nranks * sizeof *counts),
        *displs = malloc((size_t)nranks * sizeof *displs);
    for (int pattern = 0; pattern < 4; pattern++) {
        int total = 0;
        for (int r = 0; r < nranks; r++) {
            static const int mix[] = {3, 0, 17, 1, 0, 250, 8};
            counts[r] = pattern == 0   ? 0
                        : pattern == 1 ? mix[r % 7]
                        : pattern == 2 ? (r == nranks / 2 ? 5000 : r % 2)
                                       : 64;
            displs[r] = total;
            total += counts[r];
        }
        int len = counts[rank];
        unsigned char *mine = malloc((size_t)len + 1), *want = malloc((size_t)total + 1),
                      *got = malloc((size_t)total + 1), *inplace = malloc((size_t)total + 1);
        for (int i = 0; i < len; i++)
            mine[i] = (unsigned char)(rank * 31 + i * 7 + pattern);
        MPI_Allgatherv(mine, len, MPI_BYTE, want, counts, displs, MPI_BYTE, MPI_COMM_WORLD);
        memset(got, 0xAA, (size_t)total + 1);
        hf_sched_allgatherv(mine, len, got, counts, displs, MPI_COMM_WORLD);
        memset(inplace, 0x55, (size_t)total + 1);
        memcpy(inplace + displs[rank], mine, (size_t)len);
        hf_sched_allgatherv(inplace + displs[rank], len, inplace, counts, displs, MPI_COMM_WORLD);
        CU_ASSERT_EQUAL(memcmp(got, want, (size_t)total), 0);
        CU_ASSERT_EQUAL(memcmp(inplace, want, (size_t)total), 0);
        CU_ASSERT_EQUAL(got[total], 0xAA); /* nothing written past the blocks */
        free(mine);
        free(want);
        free(got);
        free(inplace);
    }
    free(counts);
    free(displs);
}

static int ranks_cleanup(void)
{
    return MPI_Finalize() == MPI_SUCCESS ? 0 : -1;
}

int hf_register_tests(void)
{
    static const hf_unit_case_t cases[] = {
        {"deal: every cell once, long ranges stolen", test_deal_every_cell_once},
        {"deal: a failure on one rank ends the round on all", test_deal_failure_on_one_rank},
        {"deal: rounds smaller than the ranks", test_deal_small_rounds},
        {"deal: the idle task runs once, on rank 0 or the last", test_deal_idle_task},
        {"deal: the idle task's error on any rank that ran it fails every rank", test_idle_agree},
        {"split preparation: the scheduler's result equals one process's",
         test_sched_split_same_result},
        {"split preparation: a stop on one rank stops all, prepared again",
         test_split_stop_on_one_rank},
        {"split preparation: an allocation failure on one rank fails all",
         test_split_nomem_on_one_rank},
        {"cone: the dealt double description gives one process's rays", test_cone_split_rays},
        {"allgatherv: Bruck's rounds give MPI_Allgatherv's bytes", test_allgatherv_bruck},
        {NULL, NULL},
    };
    if (MPI_Init(NULL, NULL) != MPI_SUCCESS)
        return -1;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nranks);
    return hf_unit_suite_with("sched_ranks", ranks_cleanup, cases);
}
