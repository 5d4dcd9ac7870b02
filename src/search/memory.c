/* The estimate of a search's peak memory per rank (hf_search_memory, search.h), from its
 * parts: the process, P/Q (hf_fraction_estimate, calibrated in docs/performance.md §13),
 * the box's digit tables, and per key costs of the search and of a found support's
 * witness. docs/targets.md, "Limits" has the formula; docs/performance.md §15 the
 * measurements behind the constants below.
 *
 * THE CONSTANTS (one place: update them here when the costs change, with the table of
 * docs/performance.md §15). Peak RSS (/usr/bin/time -f %M) of `headfuse search --family
 * chain:d=D --span 3` (cone engine; keys = UB = |supp Q| = m*), commit ed80686 (main's
 * bdf7f10: witnesses written without a jansson tree), MiB:
 *
 *   d   keys        1 rank    2 ranks: rank 0 / rank 1   estimate   1 rank / estimate
 *   10    129,904     190.7      189.3 /  176.0             211       0.90
 *   11    443,520     391.9      390.8 /  217.0             542       0.72
 *   12  1,514,272   1,379.6    1,378.4 /  630.9           1,736       0.79
 *
 * Above the process, P/Q and the box tables, one rank takes 670 to 860 bytes a key; a
 * rank without the found support's witness 255 (d = 11, 12) to 745 (d = 10, where the
 * symmetry group is computed: nauty takes P and Q up to 2^18 terms), the witness 110 to
 * 520 more. Before bdf7f10 (c99fb26, jansson trees) the same rows peaked at 236.6, 662.8
 * and 2,266.8 MiB (1,240 to 1,390 bytes a key): the witness was a JSON tree of 330 MB at
 * chain:d=11 (massif), the exact tester's two tables on supp Q 156 MB. The split below
 * is rough; the sum is what the measurements check. */
#include <math.h>
#include <string.h>

#include <flint/fmpz.h>

#include "headfuse/bounds.h"
#include "search/search_impl.h"

/* The process before any search: libraries, MPI, HDF5 and the target (a 1-rank search
 * of chain:d=2 peaks at 46 MiB). */
#define HF_MEMORY_BASE_BYTES (48.0 * 1048576)
/* Per key of the search: the exact tester's tables on supp Q, the engine's rows, its
 * candidates' points and the symmetry group's graph (a rank without a witness: 255 to 745
 * B a key). */
#define HF_MEMORY_SEARCH_BYTES_PER_KEY 512.0
/* Per key of a found support: its witness head, its shard record and the merge's decoded
 * copy (rank 0 minus rank 1: 110 to 520 B a key). */
#define HF_MEMORY_WITNESS_BYTES_PER_KEY 512.0

/* A large row's buffers besides P/Q (large.c, campaign/large.c): one round of the witness,
 * 2^17 atoms of keys (8 d bytes), weight and weighted values (16 bytes each, fmpz and the
 * packed copy), and the class tables, rays and HDF5's chunks (8 MiB). Calibrated against
 * the measured peaks of chain:d=12..14 at span 3 on 1, 2 and 4 ranks (docs/cluster.md,
 * "Memory per rank"; tests/test_search.c keeps the estimate within 25 % of them):
 *
 *   d   ranks  measured  estimate        d   ranks  measured  estimate
 *   12  1      147       156             13  4      137       144
 *   12  2       92       114             14  1      1034      1049
 *   12  4       80        93             14  2      522       562
 *   13  1      351       359             14  4      322       318
 *   13  2      192       216                  (MiB per rank, the largest rank)
 *
 * Building a slice is not added: the slices are built one at a time, exact-size, and the
 * measured peak stays within the held share and these buffers. */
#define HF_MEMORY_LARGE_ROUND_ATOMS 131072.0
#define HF_MEMORY_LARGE_TABLES (8.0 * 1048576)

/* A large row's estimate (docs/cluster.md, "Memory per rank"): its share of the slices of
 * P/Q held (the whole's polynomials, (dv + 1) of the (dv + 4) hf_fraction_estimate counts),
 * the buffers. */
static hf_err_t large_memory(const hf_target_t *t, const hf_search_opts_t *opts, int ranks,
                             hf_search_memory_t *m)
{
    hf_slice_plan_t plan;
    double whole = 0;
    HF_TRY(hf_search_large_share(t, opts->span, ranks, &plan, &m->share));
    HF_TRY(hf_fraction_estimate(t, &whole));
    m->large = 1;
    m->slices = plan.nslices;
    m->held = whole * (t->dv + 1.0) / (t->dv + 4.0) * m->share;
    m->buffers =
        HF_MEMORY_LARGE_ROUND_ATOMS * (8.0 * t->d + 16.0 * (t->dv + 1.0)) + HF_MEMORY_LARGE_TABLES;
    m->fraction = m->held;
    m->total = m->base + m->fraction + m->buffers;
    return HF_OK;
}

hf_err_t hf_search_memory(const hf_target_t *t, const hf_search_opts_t *opts,
                          const hf_bounds_t *bounds, int ranks, hf_search_memory_t *m)
{
    hf_err_t err = HF_OK;
    memset(m, 0, sizeof *m);
    m->ranks = ranks < 1 ? 1 : ranks;
    m->base = HF_MEMORY_BASE_BYTES;
    int large = 0;
    HF_TRY(hf_search_large_estimated(t, opts->span, opts->engine, &large));
    if (large)
        return large_memory(t, opts, m->ranks, m);
    m->search_per_key = HF_MEMORY_SEARCH_BYTES_PER_KEY;
    m->witness_per_key = HF_MEMORY_WITNESS_BYTES_PER_KEY;
    HF_TRY(hf_fraction_estimate(t, &m->fraction));

    /* the box {0..S}^d and its digit tables (search.c, search_box) */
    double npts = pow(opts->span + 1.0, t->d);
    if (npts * t->d <= (double)HF_SEARCH_TABLE_MAX)
        m->box = npts * (t->d + 8.0);

    /* K: UB bounds |supp Q| and, when the product head fits the span, every size */
    fmpz_t ub;
    fmpz_init(ub);
    int exact = 0;
    if (bounds)
        fmpz_set(ub, bounds->ub);
    else
        err = hf_bounds_upper(t, ub, &exact);
    double keys = fmpz_get_d(ub), last = npts;
    fmpz_clear(ub);
    if (err != HF_OK)
        return err;
    if (hf_search_product_fits(t, opts->span) && keys < last)
        last = keys;
    if (opts->max_atoms > 0 && (double)opts->max_atoms < last)
        last = (double)opts->max_atoms;
    m->keys = keys > last ? keys : last;
    m->total = m->base + m->fraction + m->box + m->keys * (m->search_per_key + m->witness_per_key);
    return HF_OK;
}
