/* Upper bound: the product construction (docs/math.md §6.1, §6.2).
 *
 * Heads A and B fuse into one head with keys a + b, weights c_a c_b and values
 * v_a + v_b: (sum c_a v_a x^a)/(sum c_a x^a) + (sum c_b v_b x^b)/(sum c_b x^b) has
 * numerator sum c_a c_b (v_a + v_b) x^(a+b) over denominator sum c_a c_b x^(a+b).
 * Coincident keys merge (weights add, values average by weight), so the fused head has
 * |A_1 + ... + A_H| atoms, the Minkowski sum of the key sets. Constant heads (all keys
 * equal, or all values equal) are left out and their constant added to every value:
 * that is still an exact representation and never larger.
 *
 * The size is counted per block of heads on disjoint coordinates (sizes multiply): by
 * the transfer DP of upper_dp.c when the block's heads are banded, else by enumerating
 * the sum with a hash set, else (over both caps) the product of head sizes, inexact. */
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include <flint/fmpq_vec.h>

#include "bounds/bounds_impl.h"
#include "headfuse/bounds.h"

/* Enumerating one block's Minkowski sum stops beyond this many keys (or this many
 * stored coordinates), and the product of the block's head sizes is used instead. */
#define UPPER_BLOCK_KEYS_MAX (4L << 20)
#define UPPER_BLOCK_COORDS_MAX (1L << 25)

/* Per-coordinate minimum of a head's keys (shifting a head's keys is harmless). */
static void upper_head_min(const hf_head_t *h, int64_t *lo)
{
    for (int j = 0; j < h->d; j++) {
        lo[j] = h->keys[j];
        for (long i = 1; i < h->natoms; i++)
            if (h->keys[i * h->d + j] < lo[j])
                lo[j] = h->keys[i * h->d + j];
    }
}

/* Size of the Minkowski sum of the given heads restricted to coordinates coords[nc]
 * (all other coordinates are constant within these heads), by enumeration. *ok = 0
 * when over the cap. */
hf_err_t hf_bounds_upper_enum(const hf_target_t *t, const int *heads, int nh, const int *coords,
                              int nc, fmpz_t n, int *ok)
{
    hf_err_t err = HF_OK;
    int d = t->d, added;
    long cap = UPPER_BLOCK_COORDS_MAX / nc;
    if (cap > UPPER_BLOCK_KEYS_MAX)
        cap = UPPER_BLOCK_KEYS_MAX;
    hf_ivset_t cur, next;
    int64_t lo[HF_D_MAX], key[HF_D_MAX];
    memset(&cur, 0, sizeof cur);
    memset(&next, 0, sizeof next);
    *ok = 1;
    HF_CHECK(err, hf_ivset_init(&cur, nc), cleanup);
    memset(key, 0, sizeof key);
    if (hf_ivset_insert(&cur, key, &added) < 0) {
        err = HF_ERR_NOMEM;
        goto cleanup;
    }
    for (int bi = 0; bi < nh; bi++) {
        const hf_head_t *h = t->heads + heads[bi];
        upper_head_min(h, lo);
        HF_CHECK(err, hf_ivset_init(&next, nc), cleanup);
        for (long s = 0; s < cur.n; s++) {
            for (long a = 0; a < h->natoms; a++) {
                for (int c = 0; c < nc; c++)
                    key[c] = cur.keys[s * nc + c] + h->keys[a * d + coords[c]] - lo[coords[c]];
                if (hf_ivset_insert(&next, key, &added) < 0) {
                    err = HF_ERR_NOMEM;
                    goto cleanup;
                }
                if (next.n > cap) {
                    *ok = 0;
                    goto cleanup;
                }
            }
        }
        hf_ivset_clear(&cur);
        cur = next;
        memset(&next, 0, sizeof next);
    }
    fmpz_set_si(n, cur.n);
cleanup:
    hf_ivset_clear(&next);
    hf_ivset_clear(&cur);
    return err;
}

/* Number of distinct keys of a head (for the fallback product of sizes). */
static hf_err_t upper_distinct_keys(const hf_head_t *h, long *n)
{
    hf_ivset_t s;
    int added;
    HF_TRY(hf_ivset_init(&s, h->d));
    for (long i = 0; i < h->natoms; i++)
        if (hf_ivset_insert(&s, h->keys + i * h->d, &added) < 0) {
            hf_ivset_clear(&s);
            return HF_ERR_NOMEM;
        }
    *n = s.n;
    hf_ivset_clear(&s);
    return HF_OK;
}

hf_err_t hf_bounds_upper(const hf_target_t *t, fmpz_t ub, int *exact)
{
    hf_err_t err = HF_OK;
    int d = t->d, H = t->nheads, nb = 0;
    int *block = NULL, *members = NULL;
    uint64_t *used = NULL;
    fmpz_t n;
    fmpz_init(n);
    fmpz_one(ub);
    *exact = 1;
    HF_CHECK(err, hf_bounds_check_target(t, "upper bound"), cleanup);
    block = hf_malloc((size_t)(H ? H : 1) * sizeof *block);
    members = hf_malloc((size_t)(H ? H : 1) * sizeof *members);
    used = hf_malloc((size_t)(H ? H : 1) * sizeof *used);
    if (!block || !members || !used) {
        err = HF_ERR_NOMEM;
        goto cleanup;
    }
    /* Constant heads take no part; blocks on disjoint coordinates: the Minkowski sum
     * is their Cartesian product. */
    hf_bounds_blocks(t, used, block, &nb);
    for (int b = 0; b < nb; b++) {
        int nh = 0, nc = 0, coords[HF_D_MAX], ok;
        uint64_t mask = 0;
        for (int i = 0; i < H; i++)
            if (block[i] == b) {
                members[nh++] = i;
                mask |= used[i];
            }
        for (int j = 0; j < d; j++)
            if (mask >> j & 1)
                coords[nc++] = j;
        HF_CHECK(err, hf_bounds_upper_dp(t, members, nh, coords, nc, n, &ok), cleanup);
        if (!ok)
            HF_CHECK(err, hf_bounds_upper_enum(t, members, nh, coords, nc, n, &ok), cleanup);
        if (ok) {
            fmpz_mul(ub, ub, n);
            continue;
        }
        *exact = 0;
        for (int i = 0; i < nh; i++) {
            long k;
            HF_CHECK(err, upper_distinct_keys(t->heads + members[i], &k), cleanup);
            fmpz_mul_ui(ub, ub, (ulong)k);
        }
    }
cleanup:
    free(used);
    free(members);
    free(block);
    fmpz_clear(n);
    return err;
}

/* The constant value of a constant head: its common value, or sum c v / sum c when all
 * keys are equal. Added into acc[dv]. */
static void upper_add_constant(const hf_head_t *h, fmpq *acc)
{
    fmpq_t num, den, tmp;
    fmpq_init(num);
    fmpq_init(den);
    fmpq_init(tmp);
    for (int j = 0; j < h->dv; j++) {
        fmpq_zero(num);
        fmpq_zero(den);
        for (long i = 0; i < h->natoms; i++) {
            fmpq_mul(tmp, h->weights + i, h->values + i * h->dv + j);
            fmpq_add(num, num, tmp);
            fmpq_add(den, den, h->weights + i);
        }
        fmpq_div(tmp, num, den);
        fmpq_add(acc + j, acc + j, tmp);
    }
    fmpq_clear(tmp);
    fmpq_clear(den);
    fmpq_clear(num);
}

hf_err_t hf_bounds_product_head(const hf_target_t *t, long max_atoms, hf_head_t *out)
{
    hf_err_t err = HF_OK;
    int d = t->d, dv = t->dv, added, exact;
    hf_ivset_t cur, next;
    fmpq *cw = NULL, *cv = NULL, *nw = NULL, *nv = NULL;
    long ccap = 0, ncap = 0, *order = NULL;
    int64_t lo[HF_D_MAX], key[HF_D_MAX];
    fmpq_t c, tmp;
    fmpz_t ub;
    memset(&cur, 0, sizeof cur);
    memset(&next, 0, sizeof next);
    fmpq_init(c);
    fmpq_init(tmp);
    fmpz_init(ub);

    if (out->d != d || out->dv != dv) {
        err = hf_error(HF_ERR_INPUT, "product head: output head has dimensions %d,%d, not %d,%d",
                       out->d, out->dv, d, dv);
        goto cleanup;
    }
    if (max_atoms < 1) {
        err = hf_error(HF_ERR_INPUT, "product head: max_atoms: %ld must be at least 1", max_atoms);
        goto cleanup;
    }
    HF_CHECK(err, hf_bounds_upper(t, ub, &exact), cleanup);
    if (fmpz_cmp_si(ub, max_atoms) > 0 && exact) {
        char *s = fmpz_get_str(NULL, 10, ub);
        err =
            hf_error(HF_ERR_LIMIT, "product head: %s atoms, more than the limit %ld", s, max_atoms);
        flint_free(s);
        goto cleanup;
    }

    /* Start from one atom at key 0 carrying the constant heads' total value. */
    HF_CHECK(err, hf_ivset_init(&cur, d), cleanup);
    memset(key, 0, sizeof key);
    if (hf_ivset_insert(&cur, key, &added) < 0) {
        err = HF_ERR_NOMEM;
        goto cleanup;
    }
    ccap = 1;
    cw = _fmpq_vec_init(1);
    cv = _fmpq_vec_init(dv);
    fmpq_one(cw);
    for (int hi = 0; hi < t->nheads; hi++)
        if (hf_bounds_head_is_constant(t->heads + hi))
            upper_add_constant(t->heads + hi, cv);

    for (int hi = 0; hi < t->nheads; hi++) {
        const hf_head_t *h = t->heads + hi;
        if (hf_bounds_head_is_constant(h))
            continue;
        upper_head_min(h, lo);
        long want;
        if (__builtin_mul_overflow(cur.n, h->natoms, &want) || want > max_atoms)
            want = max_atoms < LONG_MAX ? max_atoms + 1 : max_atoms;
        HF_CHECK(err, hf_ivset_init(&next, d), cleanup);
        ncap = want;
        nw = _fmpq_vec_init(ncap);
        nv = _fmpq_vec_init(ncap * dv); /* holds sum c v until the final division */
        for (long s = 0; s < cur.n; s++) {
            for (long a = 0; a < h->natoms; a++) {
                for (int j = 0; j < d; j++)
                    key[j] = cur.keys[s * d + j] + h->keys[a * d + j] - lo[j];
                long idx = hf_ivset_insert(&next, key, &added);
                if (idx < 0) {
                    err = HF_ERR_NOMEM;
                    goto cleanup;
                }
                if (next.n > max_atoms) {
                    err = hf_error(HF_ERR_LIMIT, "product head: more than the limit of %ld atoms",
                                   max_atoms);
                    goto cleanup;
                }
                fmpq_mul(c, cw + s, h->weights + a);
                fmpq_add(nw + idx, nw + idx, c);
                for (int j = 0; j < dv; j++) {
                    fmpq_add(tmp, cv + s * dv + j, h->values + a * dv + j);
                    fmpq_addmul(nv + idx * dv + j, c, tmp);
                }
            }
        }
        for (long i = 0; i < next.n; i++)
            for (int j = 0; j < dv; j++)
                fmpq_div(nv + i * dv + j, nv + i * dv + j, nw + i);
        _fmpq_vec_clear(cv, ccap * dv);
        _fmpq_vec_clear(cw, ccap);
        hf_ivset_clear(&cur);
        cur = next;
        cw = nw;
        cv = nv;
        ccap = ncap;
        memset(&next, 0, sizeof next);
        nw = nv = NULL;
    }

    order = hf_malloc((size_t)cur.n * sizeof *order);
    if (!order) {
        err = HF_ERR_NOMEM;
        goto cleanup;
    }
    for (long i = 0; i < cur.n; i++)
        order[i] = i;
    hf_rows_t o = {cur.keys, d};
    if (hf_sort(order, cur.n, hf_cmp_rows, &o) != HF_OK) {
        err = HF_ERR_NOMEM;
        goto cleanup;
    }
    HF_CHECK(err, hf_head_resize(out, cur.n), cleanup);
    for (long i = 0; i < cur.n; i++) {
        long s = order[i];
        memcpy(out->keys + i * d, cur.keys + s * d, (size_t)d * sizeof *key);
        fmpq_set(out->weights + i, cw + s);
        for (int j = 0; j < dv; j++)
            fmpq_set(out->values + i * dv + j, cv + s * dv + j);
    }

cleanup:
    free(order);
    if (nw) {
        _fmpq_vec_clear(nv, ncap * dv);
        _fmpq_vec_clear(nw, ncap);
    }
    if (cw) {
        _fmpq_vec_clear(cv, ccap * dv);
        _fmpq_vec_clear(cw, ccap);
    }
    hf_ivset_clear(&next);
    hf_ivset_clear(&cur);
    fmpz_clear(ub);
    fmpq_clear(tmp);
    fmpq_clear(c);
    return err;
}
