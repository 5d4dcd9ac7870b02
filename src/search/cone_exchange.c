/* The double description across ranks (docs/search.md, "The double description across
 * ranks"): which steps are dealt, a dealt step's cells run as a round of the deal and
 * their new rays exchanged as records and merged in the serial loop's order, every ray's
 * sign gathered from its owner, and the agreements that keep every rank on one path. */
#include <stdlib.h>
#include <string.h>

#include "search/cone_dd_impl.h"

double hf_cone_split_threshold(int nranks)
{
    (void)nranks;
    return (double)hf_knob(HF_KNOB_CONE_SPLIT_PAIRS_MIN, HF_CONE_SPLIT_PAIRS_MIN);
}

int hf_cone_split_signs(long rays, int nranks)
{
    return nranks > 1 && (double)rays * (double)rays >= 4.0 * hf_cone_split_threshold(nranks);
}

/* A step dealt across the processes: its cells (dd_step_t) are the cells of one unit. */
typedef struct {
    dd_job_t job;
    dd_sink_t sink;
    hf_search_poll_fn deal_poll; /* the deal's own poll (answers the other processes) */
    void *deal_poll_ctx;
} dd_round_t;

/* The deal's poll, then the run's own (a stop request; progress). */
static int dd_round_poll(void *vctx)
{
    dd_round_t *rd = vctx;
    return hf_search_stop_asked(rd->deal_poll, rd->deal_poll_ctx, NULL) ||
           hf_search_stop_asked(rd->job.ctl->poll, rd->job.ctl->poll_ctx, NULL);
}

static hf_err_t dd_round_run(void *vctx, long unit, int64_t lo, hf_search_range_t *range,
                             hf_search_poll_fn poll, void *poll_ctx)
{
    dd_round_t *rd = vctx;
    (void)unit;
    rd->deal_poll = poll;
    rd->deal_poll_ctx = poll_ctx;
    return hf_dd_pairs(&rd->job, (long)lo, range, dd_round_poll, rd, &rd->sink);
}

/* Every process's new rays of a dealt step into next, in the serial loop's order: each
 * cell was run by one process, whose records of it are in order, and cells in increasing
 * order are the serial loop's pairs in order, so a stable sort by cell restores the order
 * of the whole step. The vectors stay encoded in the records, which become a chunk of the
 * pool (merge takes `all`): a process decodes only those it needs (hf_dd_rayset_vector). */
static hf_err_t dd_merge(dd_ctl_t *ctl, long p, unsigned char *all, size_t len, rayset_t *next)
{
    long words = next->words, nrec = 0, cap = 0, kcap = 0;
    size_t zbytes = (size_t)words * sizeof(uint64_t);
    hf_err_t err = HF_OK;
    const unsigned char **at = NULL;
    int64_t *key = NULL;
    long *perm = NULL;
    hf_bytes_reader_t r = {all, all + len};
    while (r.at < r.end) { /* index the records by their heads */
        int64_t head[DD_HEAD];
        HF_CHECK(err, HF_GROW(&at, &cap, nrec + 1), done);
        HF_CHECK(err, HF_GROW(&key, &kcap, nrec + 1), done);
        at[nrec] = r.at;
        if (!hf_bytes_get(&r, head, sizeof head) || head[2] < 0 ||
            (size_t)(r.end - r.at) < zbytes + (size_t)head[2])
            break;
        r.at += zbytes + (size_t)head[2];
        key[nrec++] = head[0];
    }
    if (r.at != r.end) {
        err = hf_error(HF_ERR_INTERNAL, "cone engine: a dealt step's records are truncated");
        goto done;
    }
    vpool_t *P = next->pool;
    if (P->nchunk >= LOC_CHUNKS_MAX || (int64_t)len >= LOC_OFF_MAX) {
        err = hf_error(HF_ERR_LIMIT,
                       "cone engine: a dealt step's records (%zu bytes, chunk %ld) exceed what a "
                       "ray's location can address",
                       len, P->nchunk);
        goto done;
    }
    perm = hf_malloc((size_t)(nrec ? nrec : 1) * sizeof *perm);
    if (!perm || HF_GROW(&P->chunk, &P->capchunk, P->nchunk + 1) != HF_OK) {
        err = HF_ERR_NOMEM;
        goto done;
    }
    long chk = P->nchunk;
    if (nrec > 0) { /* the chunk holds the records from here on */
        P->chunk[P->nchunk++] = (vchunk_t){all, nrec, words};
        all = NULL;
    }
    /* a radix sort: its cost does not depend on how the ranks' records interleave, so one
     * process's recording measures what a rank of many pays (a comparison sort of the
     * records was two fifths of the merge, docs/performance.md §16) */
    err = hf_sort_keys(key, nrec, perm);
    if (err == HF_OK)
        err = hf_dd_rayset_reserve(next, next->count + nrec);
    if (err != HF_OK) { /* no record became a ray: the chunk goes */
        if (nrec > 0) {
            P->chunk[chk].live = 1;
            hf_dd_vpool_chunk_unref(P, chk);
        }
        goto done;
    }
    for (long k = 0; k < nrec; k++) { /* each ray's fields straight from its record */
        const unsigned char *rec = at[perm[k]];
        int64_t head[DD_HEAD];
        memcpy(head, rec, sizeof head);
        long d = next->count++;
        uint64_t *z = next->zero + d * words;
        memcpy(z, rec + sizeof head, zbytes);
        next->ends[d] = hf_dd_ray_ends_of(z, words, p);
        next->size[d] = head[1];
        next->loc[d] = loc_encoded(chk, (size_t)(rec - P->chunk[chk].buf));
        next->owner[d] = dd_owner(ctl);
    }
done:
    free(all);
    free(perm);
    free(key);
    free(at);
    return err;
}

hf_err_t hf_dd_step_pairs(const dd_plan_t *pl, const long *wpos, long bound, rayset_t *cur,
                          const dd_step_t *st, dd_ctl_t *ctl, hf_err_t err, rayset_t *next,
                          int *agreed)
{
    const hf_search_split_t *sp = ctl->split;
    const dd_job_t job = {pl, wpos, bound, cur, st, ctl};
    *agreed = 1;
    if (!sp || err != HF_OK) {
        /* with a split, this process's failure goes to the next step's agreement: its
         * rays may differ from the others', so it cannot tell whether they deal this one */
        *agreed = !sp;
        if (err != HF_OK)
            return err;
        dd_sink_t sink = {.next = next};
        hf_search_range_t range = {0, st->ncells};
        return hf_dd_pairs(&job, 0, &range, ctl->poll, ctl->poll_ctx, &sink);
    }
    /* every process that has not failed holds the same rays, so all take the same path
     * (the step's size decides, and it is the same everywhere); a small step runs here
     * alone, with no collective call (hf_dd_steps) */
    if ((double)st->npos * st->nneg < hf_cone_split_threshold(sp->nranks)) {
        dd_sink_t sink = {.next = next};
        hf_search_range_t range = {0, st->ncells};
        /* a failure here is this process's own: it reaches the others at the next
         * agreement (the caller carries it there) */
        *agreed = 0;
        return hf_dd_pairs(&job, 0, &range, NULL, NULL, &sink);
    }
    /* a dealt step: they agree on going on first */
    HF_TRY(sp->allgather(sp->ctx, err, NULL, 0, NULL, NULL));
    ctl->since_steps = ctl->since_pairs = 0;
    dd_round_t rd = {job, {0}, NULL, NULL};
    int64_t cells = st->ncells;
    err = sp->deal(sp->ctx, HF_OK, 1, &cells, dd_round_run, &rd);
    void *all = NULL;
    size_t alllen = 0;
    err = sp->allgather(sp->ctx, err, rd.sink.b.buf, (size_t)rd.sink.b.len, &all, &alllen);
    free(rd.sink.b.buf);
    double t0 = dd_cpu();
    if (err == HF_OK)
        err = dd_merge(ctl, st->p, all, alllen, next);
    else
        free(all);
    if (ctl->info)
        ctl->info->cpu_merge += dd_cpu() - t0;
    return err;
}

hf_err_t hf_dd_gather_signs(const hf_search_split_t *sp, const rayset_t *cur, dd_step_t *st,
                            hf_err_t err)
{
    long R = cur->count, nmine = 0;
    int N = sp->nranks;
    signed char *mine = NULL;
    long *at = NULL;
    void *all = NULL;
    size_t alllen = 0;
    if (err == HF_OK) {
        mine = hf_malloc((size_t)(R ? R : 1));
        at = hf_calloc((size_t)N + 1, sizeof *at);
        if (!mine || !at)
            err = HF_ERR_NOMEM;
    }
    for (long i = 0; err == HF_OK && i < R; i++) {
        at[cur->owner[i] + 1]++;
        if (cur->owner[i] == sp->rank)
            mine[nmine++] = st->sg[i];
    }
    int ok = err == HF_OK;
    err = sp->allgather(sp->ctx, err, ok ? mine : NULL, ok ? (size_t)nmine : 0, &all, &alllen);
    if (err == HF_OK && alllen != (size_t)R)
        err = hf_error(HF_ERR_INTERNAL, "cone engine: %zu signs gathered for %ld rays", alllen, R);
    if (err == HF_OK) {
        const signed char *g = all;
        for (int r = 0; r < N; r++)
            at[r + 1] += at[r];
        for (long i = 0; i < R; i++)
            st->sg[i] = g[at[cur->owner[i]]++];
    }
    free(all);
    free(at);
    free(mine);
    return err;
}

hf_err_t hf_dd_carry(const dd_ctl_t *ctl, hf_err_t err)
{
    if (ctl->split)
        err = ctl->split->allgather(ctl->split->ctx, err, NULL, 0, NULL, NULL);
    return err;
}
