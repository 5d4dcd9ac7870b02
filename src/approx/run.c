/* The table of best heads against atoms: budgets from m_hi down to m_lo, each a set of
 * restarts spread over the ranks (restart r on rank r % size), the best kept per
 * budget, then a pass upwards that makes the error non-increasing in m.
 *
 * Restart numbering of a budget m with R random restarts: 0..R-1 random (seed mixed
 * from the base seed, m and r), then the warm starts that apply, in this order:
 * "product" (the product-construction head truncated or split to m atoms), "exact" (the
 * given exact head, the same way), "delete" (the best (m+1)-head minus its least useful
 * atom), and finally, from the upward pass, "split" (the best (m-1)-head with its
 * heaviest atom split in two). Every start depends on (seed, m, r) and on results that
 * are themselves rank-independent, so the table is the same bit for bit on any number
 * of ranks; only the `rank` and `seconds` fields of the log differ. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "approx/approx_impl.h"
#include "headfuse/agree.h"
#include "headfuse/bounds.h"

typedef enum { START_RANDOM, START_PRODUCT, START_EXACT, START_DELETE, START_SPLIT } start_t;
static const char *const start_names[] = {"random", "product", "exact", "delete", "split"};

/* Stream tags for hf_rng_mix: the training sample, the test sample, the restarts. */
enum { STREAM_TRAIN = 1, STREAM_TEST = 2, STREAM_RESTART = 3 };

typedef struct {
    MPI_Comm comm;
    int rank, size;
    const hf_approx_opts_t *o;
    hf_approx_data_t train, test;
    hf_approx_warm_t product, exact;
    hf_approx_result_t *res;
} run_t;

void hf_approx_opts_default(hf_approx_opts_t *o)
{
    memset(o, 0, sizeof *o);
    o->m_lo = 1;
    o->m_hi = 1;
    o->samples = 1000;
    o->test_samples = 1000;
    o->restarts = 8;
    o->sigma = 1.0;
    o->seed = 1;
    o->product_max = 128;
}

void hf_approx_result_init(hf_approx_result_t *r)
{
    memset(r, 0, sizeof *r);
    r->exact_atoms = -1;
}

void hf_approx_result_clear(hf_approx_result_t *r)
{
    if (!r)
        return;
    for (int i = 0; i < r->nrows; i++)
        hf_approx_head_clear(&r->rows[i].head);
    free(r->rows);
    free(r->log);
    free(r->name);
    hf_approx_result_init(r);
}

/* Every rank returns the same error with the winner's message (headfuse/agree.h). */
static hf_err_t run_agree(const run_t *R, hf_err_t err)
{
    return hf_agree_all_message(R->comm, err);
}

/* A random start: keys and biases standard normal, values the target's values at
 * random training queries (so they start inside the target's range). */
static void random_start(hf_approx_head_t *h, const hf_approx_data_t *train, uint64_t seed)
{
    hf_rng_t rng;
    hf_rng_seed(&rng, seed);
    for (int i = 0; i < h->m; i++) {
        for (int a = 0; a < h->d; a++)
            h->keys[(size_t)i * h->d + a] = hf_rng_normal(&rng);
        h->biases[i] = hf_rng_normal(&rng);
        long n = (long)(hf_rng_next(&rng) % (uint64_t)train->n);
        memcpy(h->values + (size_t)i * h->dv, train->t + n * h->dv, (size_t)h->dv * sizeof(double));
    }
}

/* Build the start of one restart into the empty head h. src: the neighbouring budget's
 * best head (delete, split). */
static hf_err_t make_start(const run_t *R, int m, long index, start_t kind,
                           const hf_approx_head_t *src, hf_approx_head_t *h)
{
    hf_err_t err = HF_OK;
    PetscLogEventBegin(hf_approx_ev_warm, 0, 0, 0, 0);
    switch (kind) {
    case START_RANDOM:
        err = hf_approx_head_init(h, m, R->train.d, R->train.dv);
        if (err == HF_OK)
            random_start(h, &R->train,
                         hf_rng_mix(R->o->seed, STREAM_RESTART, (uint64_t)m, (uint64_t)index));
        break;
    case START_PRODUCT:
        err = hf_approx_warm_at(&R->product, m, h);
        break;
    case START_EXACT:
        err = hf_approx_warm_at(&R->exact, m, h);
        break;
    case START_DELETE: {
        int atom;
        double mse;
        err = hf_approx_head_copy(h, src);
        if (err == HF_OK)
            err = hf_approx_least_useful(h, &R->train, &atom, &mse);
        if (err == HF_OK)
            hf_approx_head_delete(h, atom);
        break;
    }
    case START_SPLIT:
        err = hf_approx_head_copy(h, src);
        if (err == HF_OK)
            err = hf_approx_head_split_to(h, m);
        break;
    }
    PetscLogEventEnd(hf_approx_ev_warm, 0, 0, 0, 0);
    return err;
}

/* Outcome of a batch of restarts: the best one (same on every rank). */
typedef struct {
    long index; /* -1 if none */
    start_t kind;
    double train_mse, test_mse;
    long iterations;
    char reason[HF_APPROX_REASON_LEN];
    hf_approx_head_t head;
} best_t;

/* Append the log entries of a batch (the same on every rank except rank/seconds). */
static hf_err_t log_append(hf_approx_result_t *res, int m, long index0, long nk,
                           const start_t *kinds, const double *tr, const double *te,
                           const double *secs, const long *its, const int *reasons, int size)
{
    hf_approx_restart_t *log = hf_realloc(res->log, (size_t)(res->nlog + nk) * sizeof *res->log);
    if (!log)
        return HF_ERR_NOMEM;
    res->log = log;
    for (long k = 0; k < nk; k++) {
        hf_approx_restart_t *e = log + res->nlog + k;
        memset(e, 0, sizeof *e);
        e->m = m;
        e->restart = index0 + k;
        e->rank = (int32_t)((index0 + k) % size);
        snprintf(e->start, sizeof e->start, "%s", start_names[kinds[k]]);
        e->train_mse = tr[k];
        e->test_mse = te[k];
        e->iterations = its[k];
        snprintf(e->converged_reason, sizeof e->converged_reason, "%s",
                 hf_approx_reason_name(reasons[k]));
        e->seconds = secs[k];
    }
    res->nlog += nk;
    return HF_OK;
}

/* Run restarts index0..index0+nk-1 of budget m (kinds[k] for index0+k) over the ranks
 * and find the best. Collective; errors agreed. best->head is initialised here. */
static hf_err_t run_batch(run_t *R, int m, long index0, long nk, const start_t *kinds,
                          const hf_approx_head_t *src, best_t *best)
{
    hf_err_t err = HF_OK;
    int d = R->train.d, dv = R->train.dv;
    long np = hf_approx_nparams(m, d, dv);
    double *tr = hf_calloc((size_t)nk * 3 + (size_t)np, sizeof(double));
    long *its = hf_calloc((size_t)nk, sizeof *its);
    int *reasons = hf_calloc((size_t)nk, sizeof *reasons);
    double *te = tr ? tr + nk : NULL, *secs = tr ? tr + 2 * nk : NULL;
    double *x = tr ? tr + 3 * nk : NULL;
    hf_approx_head_t mine; /* this rank's best head of the batch */
    long mine_index = -1;
    double mine_mse = INFINITY;
    hf_approx_head_init_empty(&mine);
    memset(best, 0, sizeof *best);
    best->index = -1;
    if (!tr || !its || !reasons)
        err = HF_ERR_NOMEM;

    for (long k = 0; k < nk && err == HF_OK; k++) {
        long index = index0 + k;
        if (index % R->size != R->rank)
            continue;
        hf_approx_head_t h;
        hf_approx_head_init_empty(&h);
        hf_approx_solve_info_t info;
        err = make_start(R, m, index, kinds[k], src, &h);
        if (err == HF_OK)
            err = hf_approx_solve(&R->train, &h, &info);
        if (err == HF_OK)
            err = hf_approx_mse(&h, &R->test, &te[k]);
        if (err == HF_OK) {
            tr[k] = info.train_mse;
            if (isnan(te[k]))
                te[k] = INFINITY;
            secs[k] = info.seconds;
            its[k] = info.iterations;
            reasons[k] = info.reason;
            /* the same order as the global choice below: smaller mse, then smaller index */
            if (mine_index < 0 || tr[k] < mine_mse) {
                hf_approx_head_clear(&mine);
                mine = h;
                mine_index = index;
                mine_mse = tr[k];
                hf_approx_head_init_empty(&h); /* moved into mine */
            }
        }
        hf_approx_head_clear(&h);
    }
    HF_CHECK(err, run_agree(R, err), done);

    PetscLogEventBegin(hf_approx_ev_reduce, 0, 0, 0, 0);
    /* each entry was filled by exactly one rank and is zero elsewhere: the sum is exact */
    MPI_Allreduce(MPI_IN_PLACE, tr, (int)(3 * nk), MPI_DOUBLE, MPI_SUM, R->comm);
    MPI_Allreduce(MPI_IN_PLACE, its, (int)nk, MPI_LONG, MPI_SUM, R->comm);
    MPI_Allreduce(MPI_IN_PLACE, reasons, (int)nk, MPI_INT, MPI_SUM, R->comm);
    long b = 0;
    for (long k = 1; k < nk; k++)
        if (tr[k] < tr[b])
            b = k;
    int owner = (int)((index0 + b) % R->size);
    if (R->rank == owner)
        hf_approx_head_pack(&mine, x);
    MPI_Bcast(x, (int)np, MPI_DOUBLE, owner, R->comm);
    PetscLogEventEnd(hf_approx_ev_reduce, 0, 0, 0, 0);

    err = hf_approx_head_init(&best->head, m, d, dv);
    if (err == HF_OK) {
        hf_approx_head_unpack(&best->head, x);
        best->index = index0 + b;
        best->kind = kinds[b];
        best->train_mse = tr[b];
        best->test_mse = te[b];
        best->iterations = its[b];
        snprintf(best->reason, sizeof best->reason, "%s", hf_approx_reason_name(reasons[b]));
        err = log_append(R->res, m, index0, nk, kinds, tr, te, secs, its, reasons, R->size);
    }
    err = run_agree(R, err);
done:
    hf_approx_head_clear(&mine);
    free(reasons);
    free(its);
    free(tr);
    return err;
}

/* Replace row's best by b (takes b's head). */
static void row_take(hf_approx_row_t *row, best_t *b)
{
    hf_approx_head_clear(&row->head);
    row->head = b->head;
    memset(&b->head, 0, sizeof b->head);
    row->train_mse = b->train_mse;
    row->test_mse = b->test_mse;
    row->best_restart = b->index;
    row->iterations = b->iterations;
    snprintf(row->converged_reason, sizeof row->converged_reason, "%s", b->reason);
    snprintf(row->start, sizeof row->start, "%s", start_names[b->kind]);
}

/* Largest wall time over the ranks. */
static double run_max_time(const run_t *R, double t)
{
    MPI_Allreduce(MPI_IN_PLACE, &t, 1, MPI_DOUBLE, MPI_MAX, R->comm);
    return t;
}

static hf_err_t run_setup(run_t *R, const hf_target_t *t)
{
    const hf_approx_opts_t *o = R->o;
    hf_approx_result_t *res = R->res;
    hf_err_t err = HF_OK;
    hf_head_t prod;
    hf_head_init(&prod, t->d, t->dv);

    if (o->m_lo < 1 || o->m_hi < o->m_lo || o->m_hi > HF_APPROX_ATOMS_MAX)
        return hf_error(HF_ERR_INPUT,
                        "atoms: empty or invalid range %d..%d (need 1 <= A <= B <= %d)", o->m_lo,
                        o->m_hi, HF_APPROX_ATOMS_MAX);
    if (o->restarts < 1 || o->restarts > HF_APPROX_RESTARTS_MAX)
        return hf_error(HF_ERR_INPUT, "restarts: must be 1..%ld", HF_APPROX_RESTARTS_MAX);
    if (o->test_samples < 1 || o->test_samples > HF_APPROX_SAMPLES_MAX)
        return hf_error(HF_ERR_INPUT, "test samples: must be 1..%ld", HF_APPROX_SAMPLES_MAX);
    HF_TRY(hf_approx_log_register());

    res->name = hf_strdup(t->name);
    if (!res->name)
        return HF_ERR_NOMEM;
    res->d = t->d;
    res->dv = t->dv;
    res->samples = o->samples;
    res->test_samples = o->test_samples;
    res->restarts = o->restarts;
    res->sigma = o->sigma;
    res->seed = o->seed;
    res->exact_atoms = -1;
    HF_TRY(hf_approx_tao_type(res->tao_type, sizeof res->tao_type));

    PetscLogEventBegin(hf_approx_ev_sample, 0, 0, 0, 0);
    err = hf_approx_data_make(&R->train, t, o->samples, o->sigma,
                              hf_rng_mix(o->seed, STREAM_TRAIN, 0, 0));
    if (err == HF_OK)
        err = hf_approx_data_make(&R->test, t, o->test_samples, o->sigma,
                                  hf_rng_mix(o->seed, STREAM_TEST, 0, 0));
    PetscLogEventEnd(hf_approx_ev_sample, 0, 0, 0, 0);
    HF_TRY(err);
    res->target_rms = R->test.target_rms;

    /* the product construction is an exact head: a warm start and an upper bound */
    if (o->product_max > 0) {
        err = hf_bounds_product_head(t, o->product_max, &prod);
        if (err == HF_ERR_LIMIT) {
            err = HF_OK; /* too large to be a useful start */
        } else if (err == HF_OK) {
            err = hf_approx_warm_make(&R->product, &prod, o->m_lo, &R->train);
            if (err == HF_OK) {
                res->exact_atoms = prod.natoms;
                snprintf(res->exact_source, sizeof res->exact_source, "product");
            }
        }
    }
    hf_head_clear(&prod);
    HF_TRY(err);
    if (o->exact_head) {
        HF_TRY(hf_approx_warm_make(&R->exact, o->exact_head, o->m_lo, &R->train));
        if (res->exact_atoms < 0 || o->exact_head->natoms < res->exact_atoms) {
            res->exact_atoms = o->exact_head->natoms;
            snprintf(res->exact_source, sizeof res->exact_source, "given");
        }
    }
    return HF_OK;
}

hf_err_t hf_approx_run(MPI_Comm comm, const hf_target_t *t, const hf_approx_opts_t *o,
                       hf_approx_result_t *res)
{
    run_t R;
    hf_err_t err;
    start_t *kinds = NULL;
    best_t b;
    memset(&R, 0, sizeof R);
    memset(&b, 0, sizeof b);
    hf_approx_data_init(&R.train);
    hf_approx_data_init(&R.test);
    R.comm = comm;
    R.o = o;
    R.res = res;
    MPI_Comm_rank(comm, &R.rank);
    MPI_Comm_size(comm, &R.size);

    /* every rank sets up the same way; a failure (memory) is agreed on */
    err = run_setup(&R, t);
    HF_CHECK(err, run_agree(&R, err), done);

    int nrows = o->m_hi - o->m_lo + 1;
    res->rows = hf_calloc((size_t)nrows, sizeof *res->rows);
    kinds = hf_malloc((size_t)(o->restarts + 3) * sizeof *kinds);
    err = (!res->rows || !kinds) ? HF_ERR_NOMEM : HF_OK;
    HF_CHECK(err, run_agree(&R, err), done);
    res->nrows = nrows;

    /* downwards: random and warm starts; "delete" needs the budget above */
    for (int m = o->m_hi; m >= o->m_lo; m--) {
        hf_approx_row_t *row = res->rows + (m - o->m_lo);
        double t0 = MPI_Wtime();
        long nk = 0;
        for (long r = 0; r < o->restarts; r++)
            kinds[nk++] = START_RANDOM;
        if (R.product.have)
            kinds[nk++] = START_PRODUCT;
        if (R.exact.have)
            kinds[nk++] = START_EXACT;
        if (m < o->m_hi && m >= 1)
            kinds[nk++] = START_DELETE;
        const hf_approx_head_t *above = m < o->m_hi ? &res->rows[m + 1 - o->m_lo].head : NULL;
        HF_CHECK(err, run_batch(&R, m, 0, nk, kinds, above, &b), done);
        row->m = m;
        row->restarts = nk;
        row_take(row, &b);
        row->seconds = run_max_time(&R, MPI_Wtime() - t0);
        if (o->verbose && R.rank == 0) {
            fprintf(stderr,
                    "approx %s: m=%d  train RMS %.3e  test RMS %.3e  (%s start, %ld restarts)\n",
                    t->name, m, sqrt(row->train_mse), sqrt(row->test_mse), row->start, nk);
            fflush(stderr);
        }
    }

    /* upwards: one more atom can never hurt, so re-solve from the split smaller head
     * wherever a budget came out worse than the one below it */
    for (int m = o->m_lo + 1; m <= o->m_hi; m++) {
        hf_approx_row_t *row = res->rows + (m - o->m_lo), *below = row - 1;
        if (!(row->train_mse > below->train_mse))
            continue;
        /* two exact fits differ by rounding noise only: nothing to repair */
        if (hf_approx_is_rounding(row->train_mse, R.train.target_rms) &&
            hf_approx_is_rounding(below->train_mse, R.train.target_rms))
            continue;
        double t0 = MPI_Wtime();
        start_t split = START_SPLIT;
        HF_CHECK(err, run_batch(&R, m, row->restarts, 1, &split, &below->head, &b), done);
        row->restarts++;
        if (b.train_mse < row->train_mse)
            row_take(row, &b);
        hf_approx_head_clear(&b.head);
        row->seconds += run_max_time(&R, MPI_Wtime() - t0);
    }

    for (int i = 0; i < res->nrows; i++) {
        hf_approx_row_t *row = res->rows + i;
        const char *status = "approx";
        if (hf_approx_is_rounding(row->test_mse, res->target_rms))
            status = "rounding";
        else if (res->exact_atoms > 0 && row->m >= res->exact_atoms)
            status = "missed";
        snprintf(row->status, sizeof row->status, "%s", status);
    }
    err = HF_OK;
done:
    hf_approx_head_clear(&b.head);
    free(kinds);
    hf_approx_warm_clear(&R.exact);
    hf_approx_warm_clear(&R.product);
    hf_approx_data_clear(&R.test);
    hf_approx_data_clear(&R.train);
    return err;
}
