/* The split of a size's preparation across ranks (hf_sched_split_t, hf_search_split_t),
 * under mpirun with 1, 2 and 3 ranks: the layered engine's face tables and units are
 * those of a search prepared alone on one process, whatever the rank count; a stop or
 * an allocation failure on one rank during the split preparation stops or fails every
 * rank at the same exchange, none is left waiting, and the size can be prepared again.
 * Collective: every rank runs every test, so assertions are never fatal. */
#include <CUnit/CUnit.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "headfuse/sched.h"
#include "search/search_impl.h"
#include "unit.h"

static int rank, nranks;

/* chain:d=3 at span 3 (layered): sizes 18..24, face tables of two and one dimensions. */
static const char *const SPEC = "chain:d=3";
enum { SPAN = 3, SIZES = 3 };

static hf_search_t *make(hf_target_t *t)
{
    hf_search_opts_t so = {.span = SPAN, .prune = 1, .max_atoms = 0, .engine = HF_ENGINE_LAYERED};
    hf_search_t *s = NULL;
    CU_ASSERT_EQUAL(hf_search_create(t, &so, &s), HF_OK);
    return s;
}

/* 1 when every face table of a and b lists the same entries in the same order, by size. */
static int same_tables(const hf_search_t *a, const hf_search_t *b)
{
    if (a->reg->n != b->reg->n)
        return 0;
    for (long i = 0; i < a->reg->n; i++) {
        const hf_fs_t *x = a->reg->fs[i], *y = b->reg->fs[i];
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

static hf_err_t count_found(void *ctx, long m, long unit, const int64_t *keys, const hf_head_t *w)
{
    (void)m;
    (void)unit;
    (void)keys;
    (void)w;
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
    CU_ASSERT_EQUAL(out.nodes, 355408);
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
    CU_ASSERT(nranks == 1 ? pc.calls == alone.calls : pc.calls < alone.calls);
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
            CU_ASSERT(lo == hi && at <= m1);
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

static int ranks_cleanup(void)
{
    return MPI_Finalize() == MPI_SUCCESS ? 0 : -1;
}

int hf_register_tests(void)
{
    static const hf_unit_case_t cases[] = {
        {"split preparation: the scheduler's result equals one process's",
         test_sched_split_same_result},
        {"split preparation: a stop on one rank stops all, prepared again",
         test_split_stop_on_one_rank},
        {"split preparation: an allocation failure on one rank fails all",
         test_split_nomem_on_one_rank},
        {NULL, NULL},
    };
    if (MPI_Init(NULL, NULL) != MPI_SUCCESS)
        return -1;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nranks);
    return hf_unit_suite_with("sched_ranks", ranks_cleanup, cases);
}
