/* Small target builders for the tests (the target module's family parser is not used,
 * so these tests do not depend on it). Each aborts the test process on failure. */
#ifndef HF_TESTS_FAMILIES_H
#define HF_TESTS_FAMILIES_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <flint/fmpq_vec.h>

#include "headfuse/target.h"

static inline void fam_die(hf_err_t err)
{
    if (err != HF_OK) {
        fprintf(stderr, "test target builder: %s\n", hf_error_msg());
        exit(1);
    }
}

/* Append one atom with integer weight and (first) value; other value components 0. */
static inline void fam_atom(hf_head_t *h, const int64_t *key, long weight, long value)
{
    fmpq_t w;
    fmpq *v = _fmpq_vec_init(h->dv);
    fmpq_init(w);
    fmpq_set_si(w, weight, 1);
    fmpq_set_si(v, value, 1);
    fam_die(hf_head_push(h, key, w, v));
    fmpq_clear(w);
    _fmpq_vec_clear(v, h->dv);
}

/* splitmix64: seeded randomness that gives the same numbers on every machine. */
static uint64_t fam_rng_state __attribute__((unused));
static inline uint64_t fam_rng(void)
{
    uint64_t z = (fam_rng_state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

/* Uniform integer in lo..hi. */
static inline long fam_rnd(long lo, long hi)
{
    return lo + (long)(fam_rng() % (uint64_t)(hi - lo + 1));
}

/* Append an atom with weight wn/wd and values vn[j]/vd (one denominator for all). */
static inline void fam_atom_q(hf_head_t *h, const int64_t *key, long wn, long wd, const long *vn,
                              long vd)
{
    fmpq_t w;
    fmpq *v = _fmpq_vec_init(h->dv);
    fmpq_init(w);
    fmpq_set_si(w, wn, (ulong)wd);
    for (int j = 0; j < h->dv; j++)
        fmpq_set_si(v + j, vn[j], (ulong)vd);
    fam_die(hf_head_push(h, key, w, v));
    fmpq_clear(w);
    _fmpq_vec_clear(v, h->dv);
}

/* A two-atom head (0, 1, v0), (key, 1, v1). */
static inline void fam_pair(hf_target_t *t, const int64_t *key, long v0, long v1)
{
    hf_head_t h;
    int64_t zero[HF_D_MAX] = {0};
    hf_head_init(&h, t->d, t->dv);
    fam_atom(&h, zero, 1, v0);
    fam_atom(&h, key, 1, v1);
    fam_die(hf_target_add_head(t, &h));
    hf_head_clear(&h);
}

/* W_d = sum_j sigma(q_j). */
static inline void fam_wd(hf_target_t *t, int d)
{
    fam_die(hf_target_init(t, "wd", d, 1));
    for (int j = 0; j < d; j++) {
        int64_t k[HF_D_MAX] = {0};
        k[j] = 1;
        fam_pair(t, k, 0, 1);
    }
}

/* chain_d = W_d + sum_i sigma(q_i + q_{i+1}). */
static inline void fam_chain(hf_target_t *t, int d)
{
    fam_wd(t, d);
    for (int i = 0; i + 1 < d; i++) {
        int64_t k[HF_D_MAX] = {0};
        k[i] = k[i + 1] = 1;
        fam_pair(t, k, 0, 1);
    }
}

/* wdw_d = sum_j j sigma(q_j). */
static inline void fam_wdw(hf_target_t *t, int d)
{
    fam_die(hf_target_init(t, "wdw", d, 1));
    for (int j = 0; j < d; j++) {
        int64_t k[HF_D_MAX] = {0};
        k[j] = 1;
        fam_pair(t, k, 0, j + 1);
    }
}

/* multi_{d,k}: head j has keys 0, e_j, ..., (k-1) e_j, weights 1, values 0..k-1. */
static inline void fam_multi(hf_target_t *t, int d, int k)
{
    fam_die(hf_target_init(t, "multi", d, 1));
    for (int j = 0; j < d; j++) {
        hf_head_t h;
        hf_head_init(&h, d, 1);
        for (int m = 0; m < k; m++) {
            int64_t key[HF_D_MAX] = {0};
            key[j] = m;
            fam_atom(&h, key, 1, m);
        }
        fam_die(hf_target_add_head(t, &h));
        hf_head_clear(&h);
    }
}

/* A two-atom head (0, w0, 0), (u, w1, v1) in three variables, shifted to nonnegative keys. */
static inline void fam_pair3(hf_target_t *t, const int64_t *u, long w0, long w1, long v1)
{
    int64_t k0[3] = {0, 0, 0}, k1[3] = {u[0], u[1], u[2]};
    for (int j = 0; j < 3; j++)
        if (u[j] < 0) {
            k0[j] = -u[j];
            k1[j] = 0;
        }
    hf_head_t h;
    hf_head_init(&h, 3, 1);
    fam_atom(&h, k0, w0, 0);
    fam_atom(&h, k1, w1, v1);
    fam_die(hf_target_add_head(t, &h));
    hf_head_clear(&h);
}

/* A random sum of nh two-atom heads in three variables on the 13 primitive directions of
 * {-1,0,1}^3 (up to sign), weights and values in 1..3 (fam_rng). */
static inline void fam_random3(hf_target_t *t, int nh)
{
    static const int64_t dirs[][3] = {{1, 0, 0},  {0, 1, 0},  {0, 0, 1}, {1, 1, 0},  {1, -1, 0},
                                      {0, 1, 1},  {0, 1, -1}, {1, 0, 1}, {1, 0, -1}, {1, 1, 1},
                                      {1, 1, -1}, {1, -1, 1}, {-1, 1, 1}};
    fam_die(hf_target_init(t, "random_3d", 3, 1));
    for (int k = 0; k < nh; k++)
        fam_pair3(t, dirs[fam_rnd(0, 12)], fam_rnd(1, 3), fam_rnd(1, 3), fam_rnd(1, 3));
}

#endif
