/* The candidate sink (search_impl.h): every engine hands each candidate here, so every
 * engine decides supports the same way: the count and the poll, the canonical-position
 * check, the engine's own filter, the exact test and the report of a feasible support
 * with its witness. */
#include <assert.h>
#include <stdlib.h>

#include <flint/fmpz_vec.h>

#include "search/search_impl.h"

hf_err_t hf_search_scratch(hf_search_t *s, long m)
{
    void **const arrays[] = {(void **)&s->cand, (void **)&s->keys, (void **)&s->combo};
    const size_t elem[] = {sizeof *s->cand, (size_t)s->d * sizeof *s->keys, 2 * sizeof *s->combo};
    return hf_grow_arrays(&s->scratch_cap, m, 3, arrays, elem);
}

/* The keys of the candidate into s->keys: 1 when it is in canonical position (every
 * coordinate has a key with 0). */
static int sink_canonical(hf_search_t *s, long m, const uint32_t *idx)
{
    int d = s->d;
    uint64_t zero = 0, full = d == 64 ? ~(uint64_t)0 : (((uint64_t)1 << d) - 1);
    if (s->zmask) {
        /* tables: most candidates are decided on the masks alone */
        for (long i = 0; i < m; i++)
            zero |= s->zmask[idx[i]];
        if (zero != full)
            return 0;
        for (long i = 0; i < m; i++) {
            const uint8_t *dg = s->digits + (size_t)idx[i] * d;
            for (int j = 0; j < d; j++)
                s->keys[i * d + j] = dg[j];
        }
        return 1;
    }
    for (long i = 0; i < m; i++) {
        long v = idx[i];
        for (int j = d - 1; j >= 0; j--) {
            int64_t x = v % s->base;
            v /= s->base;
            s->keys[i * d + j] = x;
            if (x == 0)
                zero |= (uint64_t)1 << j;
        }
    }
    return zero == full;
}

/* Count the candidate and poll. */
static hf_err_t sink_count(long m, hf_run_t *run)
{
    run->nodes++;
    if (run->nodes % HF_SEARCH_POLL_EVERY == 0 &&
        hf_search_stop_asked(run->poll, run->poll_ctx, NULL))
        return hf_error(HF_ERR_INTERRUPTED, "search: size %ld: unit abandoned on request", m);
    return HF_OK;
}

hf_err_t hf_search_candidate_begin(hf_search_t *s, long m, hf_run_t *run, uint64_t zero, int *go)
{
    uint64_t full = s->d == 64 ? ~(uint64_t)0 : (((uint64_t)1 << s->d) - 1);
    *go = 0;
    HF_TRY(sink_count(m, run));
    if (zero != full) {
        s->stats.canonical_rejections++;
        return HF_OK;
    }
    *go = 1;
    return HF_OK;
}

hf_err_t hf_search_candidate_rows(hf_search_t *s, long m, hf_run_t *run, const hf_rowspan_t *eq,
                                  const fmpz *pos, long npos)
{
    int feasible = 0;
    hf_reason_t reason;
    long n = eq->n;
    fmpz *R = _fmpz_vec_init(n);
    s->stats.exact_tests++;
    hf_err_t err = hf_exact_span_decide(eq, pos, npos, &feasible, &reason, R);
    if (err == HF_OK && feasible && run->found) {
        hf_found_t f = {.m = m, .nr = n, .r = R};
        err = run->found(run->found_ctx, &f);
    }
    _fmpz_vec_clear(R, n);
    return err;
}

hf_err_t hf_search_candidate(hf_search_t *s, long m, const uint32_t *idx, hf_run_t *run)
{
    HF_TRY(sink_count(m, run));
#ifndef NDEBUG
    /* every engine hands over m distinct box points in increasing order */
    for (long i = 0; i < m; i++)
        assert((long)idx[i] < s->npts && (i == 0 || idx[i - 1] < idx[i]));
#endif
    if (!sink_canonical(s, m, idx)) {
        s->stats.canonical_rejections++;
        return HF_OK;
    }
    if (s->ops->filter) {
        int ok = 1;
        HF_TRY(s->ops->filter(s, m, idx, &ok));
        if (!ok) {
            s->stats.face_rejections++;
            return HF_OK;
        }
    }
    int feasible = 0;
    hf_reason_t reason;
    s->stats.exact_tests++;
    HF_TRY(hf_exact_check(s->exact, m, s->keys, &feasible, &reason, run->witness));
    if (feasible && run->found) {
        hf_found_t f = {.m = m, .keys = s->keys, .witness = run->witness};
        HF_TRY(run->found(run->found_ctx, &f));
    }
    return HF_OK;
}
