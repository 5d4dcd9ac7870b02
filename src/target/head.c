/* Heads: storage, copying, validation and double-precision evaluation. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <flint/fmpq_vec.h>

#include "headfuse/target.h"

void hf_head_init(hf_head_t *h, int d, int dv)
{
    memset(h, 0, sizeof *h);
    h->d = d;
    h->dv = dv;
}

void hf_head_clear(hf_head_t *h)
{
    if (!h)
        return;
    free(h->keys);
    /* storage always holds at least one atom (see hf_head_resize) */
    long n = h->natoms ? h->natoms : 1;
    if (h->weights)
        _fmpq_vec_clear(h->weights, n);
    if (h->values)
        _fmpq_vec_clear(h->values, n * h->dv);
    hf_head_init(h, h->d, h->dv);
}

hf_err_t hf_head_resize(hf_head_t *h, long natoms)
{
    long old = h->natoms;
    if (natoms == old)
        return HF_OK;
    int64_t *keys = hf_realloc(h->keys, (size_t)(natoms ? natoms : 1) * h->d * sizeof *keys);
    if (!keys)
        return HF_ERR_NOMEM;
    h->keys = keys;
    /* fmpq vectors cannot be realloc'd safely: build new ones and swap entries in. */
    fmpq *w = _fmpq_vec_init(natoms ? natoms : 1);
    fmpq *v = _fmpq_vec_init((natoms ? natoms : 1) * h->dv);
    long keep = natoms < old ? natoms : old;
    for (long i = 0; i < keep; i++) {
        fmpq_swap(w + i, h->weights + i);
        for (int j = 0; j < h->dv; j++)
            fmpq_swap(v + i * h->dv + j, h->values + i * h->dv + j);
    }
    for (long i = keep; i < natoms; i++) {
        memset(keys + i * h->d, 0, h->d * sizeof *keys);
        fmpq_one(w + i);
    }
    if (h->weights)
        _fmpq_vec_clear(h->weights, old ? old : 1);
    if (h->values)
        _fmpq_vec_clear(h->values, (old ? old : 1) * h->dv);
    h->weights = w;
    h->values = v;
    h->natoms = natoms;
    return HF_OK;
}

hf_err_t hf_head_copy(hf_head_t *dst, const hf_head_t *src)
{
    hf_head_clear(dst);
    hf_head_init(dst, src->d, src->dv);
    HF_TRY(hf_head_resize(dst, src->natoms));
    memcpy(dst->keys, src->keys, (size_t)src->natoms * src->d * sizeof *src->keys);
    for (long i = 0; i < src->natoms; i++)
        fmpq_set(dst->weights + i, src->weights + i);
    for (long i = 0; i < src->natoms * src->dv; i++)
        fmpq_set(dst->values + i, src->values + i);
    return HF_OK;
}

hf_err_t hf_head_push(hf_head_t *h, const int64_t *key, const fmpq_t weight, const fmpq *value)
{
    long i = h->natoms;
    HF_TRY(hf_head_resize(h, i + 1));
    memcpy(h->keys + i * h->d, key, h->d * sizeof *key);
    fmpq_set(h->weights + i, weight);
    for (int j = 0; j < h->dv; j++)
        fmpq_set(h->values + i * h->dv + j, value + j);
    return HF_OK;
}

hf_err_t hf_head_validate(const hf_head_t *h, const char *where)
{
    if (h->natoms < 1)
        return hf_error(HF_ERR_INPUT, "%s: atoms: a head needs at least one atom", where);
    for (long i = 0; i < h->natoms; i++) {
        if (fmpq_sgn(h->weights + i) <= 0)
            return hf_error(HF_ERR_INPUT, "%s: atoms[%ld].weight: must be positive", where, i);
        for (int j = 0; j < h->d; j++) {
            int64_t k = h->keys[i * h->d + j];
            if (k > HF_KEY_MAX || k < -HF_KEY_MAX)
                return hf_error(HF_ERR_INPUT, "%s: atoms[%ld].key[%d]: %lld is outside -%d..%d",
                                where, i, j, (long long)k, HF_KEY_MAX, HF_KEY_MAX);
        }
    }
    return HF_OK;
}

/* Logit i of h at q: log c_i + k_i.q, computed the same way each time it is asked for. */
static double head_logit(const hf_head_t *h, long i, const double *q)
{
    double s = log(fmpq_get_d(h->weights + i));
    for (int j = 0; j < h->d; j++)
        s += (double)h->keys[i * h->d + j] * q[j];
    return s;
}

void hf_head_eval(const hf_head_t *h, const double *q, double *out)
{
    /* subtract the largest logit before exponentiating; each logit is computed again for
     * its term instead of being kept, so that evaluating needs no memory and cannot fail
     * (the same operations give the same doubles) */
    double lmax = -INFINITY;
    for (long i = 0; i < h->natoms; i++) {
        double s = head_logit(h, i, q);
        if (s > lmax)
            lmax = s;
    }
    double z = 0;
    for (int j = 0; j < h->dv; j++)
        out[j] = 0;
    for (long i = 0; i < h->natoms; i++) {
        double e = exp(head_logit(h, i, q) - lmax);
        z += e;
        for (int j = 0; j < h->dv; j++)
            out[j] += e * fmpq_get_d(h->values + i * h->dv + j);
    }
    for (int j = 0; j < h->dv; j++)
        out[j] /= z;
}
