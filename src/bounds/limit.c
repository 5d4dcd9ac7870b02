/* Limit targets along a direction (docs/math.md §4.1), and checks and blocks of heads
 * shared by the bounds. */
#include <stdio.h>
#include <string.h>

#include "bounds/bounds_impl.h"
#include "headfuse/bounds.h"

hf_err_t hf_bounds_check_target(const hf_target_t *t, const char *who)
{
    if (t->d < 1 || t->d > HF_D_MAX || t->dv < 1 || t->dv > HF_DV_MAX)
        return hf_error(HF_ERR_INPUT, "%s: target dimensions d=%d, dv=%d out of range", who, t->d,
                        t->dv);
    for (int i = 0; i < t->nheads; i++) {
        char where[96];
        if (t->heads[i].d != t->d || t->heads[i].dv != t->dv)
            return hf_error(HF_ERR_INPUT, "%s: heads[%d]: dimensions do not match the target", who,
                            i);
        snprintf(where, sizeof where, "%s: heads[%d]", who, i);
        HF_TRY(hf_head_validate(t->heads + i, where));
    }
    return HF_OK;
}

int hf_bounds_head_is_constant(const hf_head_t *h)
{
    int d = h->d, dv = h->dv;
    int keys_equal = 1, values_equal = 1;
    for (long i = 1; i < h->natoms && keys_equal; i++)
        keys_equal = memcmp(h->keys, h->keys + i * d, (size_t)d * sizeof *h->keys) == 0;
    for (long i = 1; i < h->natoms && values_equal; i++)
        for (int j = 0; j < dv && values_equal; j++)
            values_equal = fmpq_equal(h->values + j, h->values + i * dv + j);
    return keys_equal || values_equal;
}

static int blocks_find(int *parent, int i)
{
    while (parent[i] != i) {
        parent[i] = parent[parent[i]];
        i = parent[i];
    }
    return i;
}

/* Union-find over coordinates (at most 64): a head joins the coordinates it uses. */
void hf_bounds_blocks(const hf_target_t *t, uint64_t *used, int *block, int *nblocks)
{
    int d = t->d, parent[HF_D_MAX], number[HF_D_MAX];
    for (int j = 0; j < d; j++) {
        parent[j] = j;
        number[j] = -1;
    }
    for (int i = 0; i < t->nheads; i++) {
        const hf_head_t *h = t->heads + i;
        used[i] = 0;
        if (hf_bounds_head_is_constant(h))
            continue;
        for (int j = 0; j < d; j++)
            for (long a = 1; a < h->natoms; a++)
                if (h->keys[a * d + j] != h->keys[j]) {
                    used[i] |= UINT64_C(1) << j;
                    break;
                }
        int first = __builtin_ctzll(used[i]);
        for (int j = first + 1; j < d; j++)
            if (used[i] >> j & 1) {
                int a = blocks_find(parent, first), b = blocks_find(parent, j);
                if (a != b)
                    parent[b] = a;
            }
    }
    *nblocks = 0;
    for (int i = 0; i < t->nheads; i++) {
        block[i] = -1;
        if (!used[i])
            continue;
        int root = blocks_find(parent, __builtin_ctzll(used[i]));
        if (number[root] < 0)
            number[root] = (*nblocks)++;
        block[i] = number[root];
    }
}

/* k.w with overflow detection (keys are bounded, directions come from callers). */
static int limit_dot(const int64_t *k, const int64_t *w, int d, int64_t *out)
{
    int64_t s = 0, p;
    for (int j = 0; j < d; j++) {
        if (__builtin_mul_overflow(k[j], w[j], &p) || __builtin_add_overflow(s, p, &s))
            return 0;
    }
    *out = s;
    return 1;
}

hf_err_t hf_bounds_limit_target(const hf_target_t *t, const int64_t *w, hf_target_t *out)
{
    hf_err_t err;
    hf_head_t face;
    hf_target_t lim; /* built aside: out keeps its value on failure */
    hf_head_init(&face, t->d, t->dv);
    HF_CHECK(err, hf_target_init(&lim, t->name, t->d, t->dv), fail);
    HF_CHECK(err, hf_bounds_check_target(t, "limit target"), fail);
    for (int hi = 0; hi < t->nheads; hi++) {
        const hf_head_t *h = t->heads + hi;
        int64_t best = 0, s = 0;
        long count = 0;
        for (long i = 0; i < h->natoms; i++) {
            if (!limit_dot(h->keys + i * t->d, w, t->d, &s)) {
                err = hf_error(HF_ERR_LIMIT, "limit target: heads[%d]: k.w overflows", hi);
                goto fail;
            }
            if (i == 0 || s > best) {
                best = s;
                count = 0;
            }
            if (s == best)
                count++;
        }
        HF_CHECK(err, hf_head_resize(&face, count), fail);
        long m = 0;
        for (long i = 0; i < h->natoms; i++) {
            limit_dot(h->keys + i * t->d, w, t->d, &s);
            if (s != best)
                continue;
            memcpy(face.keys + m * t->d, h->keys + i * t->d, (size_t)t->d * sizeof *face.keys);
            fmpq_set(face.weights + m, h->weights + i);
            for (int j = 0; j < t->dv; j++)
                fmpq_set(face.values + m * t->dv + j, h->values + i * t->dv + j);
            m++;
        }
        HF_CHECK(err, hf_target_add_head(&lim, &face), fail);
    }
    hf_target_swap(out, &lim);
fail:
    hf_head_clear(&face);
    hf_target_clear(&lim);
    return err;
}
