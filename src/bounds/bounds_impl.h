/* Declarations shared inside the bounds module: target checks, a hash set of integer
 * key vectors and a sort with a context. */
#ifndef HF_BOUNDS_IMPL_H
#define HF_BOUNDS_IMPL_H

#include <stdint.h>

#include "headfuse/target.h"

/* Distinct integer vectors of length b, numbered 0, 1, ... in insertion order. */
typedef struct {
    int b;
    long n;        /* vectors stored */
    long cap;      /* room in keys (vectors) */
    int64_t *keys; /* n*b, row-major */
    long *slots;   /* open-addressing table of indices into keys, -1 when empty */
    uint64_t mask; /* table size - 1 (a power of two) */
} hf_bounds_keyset_t;

/* Empty set of vectors of length b (b >= 1). */
hf_err_t hf_bounds_keyset_init(hf_bounds_keyset_t *s, int b);
void hf_bounds_keyset_clear(hf_bounds_keyset_t *s);

/* Index of key[b] in the set, inserting it if new (*added = 1 then). -1 on NOMEM. */
long hf_bounds_keyset_insert(hf_bounds_keyset_t *s, const int64_t *key, int *added);

/* Stable merge sort of idx[0..n) by cmp(ctx, a, b) (<0, 0, >0). 0 on NOMEM. */
int hf_bounds_sort(long *idx, long n, int (*cmp)(const void *ctx, long a, long b), const void *ctx);

/* Check a target passed to a bounds function: dimensions and every head valid. */
hf_err_t hf_bounds_check_target(const hf_target_t *t, const char *who);

/* 1 if the head is a constant function: all keys equal or all value vectors equal. */
int hf_bounds_head_is_constant(const hf_head_t *h);

#endif
