/* Warm starts from exact heads (the product construction, a given minimal witness):
 * converted to floating point once per run, with a greedy deletion order computed on
 * the training sample, so that the start for any budget m is the head truncated along
 * that order (m below its size) or split into equal halves (m above it). */
#include <stdlib.h>
#include <string.h>

#include "approx/approx_impl.h"

hf_err_t hf_approx_warm_make(hf_approx_warm_t *w, const hf_head_t *exact, int min_m,
                             const hf_approx_data_t *train)
{
    hf_err_t err;
    hf_approx_head_t cur;
    int *alive = NULL;
    memset(w, 0, sizeof *w);
    hf_approx_head_init_empty(&cur);
    HF_CHECK(err, hf_approx_head_from_exact(&w->head, exact), fail);
    int n = w->head.m;
    w->order = hf_malloc((size_t)n * sizeof *w->order);
    alive = hf_malloc((size_t)n * sizeof *alive);
    if (!w->order || !alive) {
        err = HF_ERR_NOMEM;
        goto fail;
    }
    /* alive[j]: index in the full head of the j-th atom still present */
    for (int i = 0; i < n; i++)
        alive[i] = i;
    HF_CHECK(err, hf_approx_head_copy(&cur, &w->head), fail);
    /* deletions below min_m atoms are never asked for: the greedy costs n^2 solves' worth
     * of evaluations, so stop early */
    int ndel = min_m < 1 ? n - 1 : n - min_m;
    for (int k = 0; k < ndel; k++) {
        int atom;
        double mse;
        HF_CHECK(err, hf_approx_least_useful(&cur, train, &atom, &mse), fail);
        w->order[k] = alive[atom];
        memmove(alive + atom, alive + atom + 1, (size_t)(cur.m - 1 - atom) * sizeof *alive);
        hf_approx_head_delete(&cur, atom);
    }
    for (int k = ndel; k < n; k++)
        w->order[k] = alive[k - ndel];
    w->have = 1;
    err = HF_OK;
    goto done;
fail:
    hf_approx_warm_clear(w);
done:
    hf_approx_head_clear(&cur);
    free(alive);
    return err;
}

void hf_approx_warm_clear(hf_approx_warm_t *w)
{
    if (!w)
        return;
    hf_approx_head_clear(&w->head);
    free(w->order);
    memset(w, 0, sizeof *w);
}

hf_err_t hf_approx_warm_at(const hf_approx_warm_t *w, int m, hf_approx_head_t *out)
{
    int n = w->head.m;
    if (m >= n) {
        HF_TRY(hf_approx_head_copy(out, &w->head));
        return hf_approx_head_split_to(out, m);
    }
    /* keep the atoms not among the first n - m deleted, in their original order */
    char *drop = hf_calloc((size_t)n, 1);
    if (!drop)
        return HF_ERR_NOMEM;
    for (int k = 0; k < n - m; k++)
        drop[w->order[k]] = 1;
    hf_approx_head_clear(out); /* initialised: its old value goes */
    hf_err_t err = hf_approx_head_init(out, m, w->head.d, w->head.dv);
    if (err == HF_OK) {
        int d = w->head.d, dv = w->head.dv, j = 0;
        for (int i = 0; i < n; i++) {
            if (drop[i])
                continue;
            memcpy(out->keys + (size_t)j * d, w->head.keys + (size_t)i * d,
                   (size_t)d * sizeof *out->keys);
            out->biases[j] = w->head.biases[i];
            memcpy(out->values + (size_t)j * dv, w->head.values + (size_t)i * dv,
                   (size_t)dv * sizeof *out->values);
            j++;
        }
    }
    free(drop);
    return err;
}
