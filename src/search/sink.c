/* The candidate sink (search_impl.h): every engine hands each candidate here, so every
 * engine decides supports the same way: the count and the poll, the canonical-position
 * check, the engine's own filter, the exact test and the report of a feasible support
 * with its witness. */
#include <assert.h>
#include <stdlib.h>

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

hf_err_t hf_search_candidate(hf_search_t *s, long m, const uint32_t *idx, hf_run_t *run)
{
    run->nodes++;
    if (run->poll && run->nodes % HF_SEARCH_POLL_EVERY == 0 && run->poll(run->poll_ctx))
        return hf_error(HF_ERR_INTERRUPTED, "search: size %ld: unit abandoned on request", m);
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
    if (feasible && run->found)
        HF_TRY(run->found(run->found_ctx, m, s->keys, run->witness));
    return HF_OK;
}
