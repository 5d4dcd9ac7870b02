/* Declarations shared by the files of the cone engine's double description (hf_cone_rays:
 * the extreme rays of {R : A R >= 0} whose support has at most a bound of box points;
 * docs/search.md, "Engine cone", claim 3): cone_dd.c (the plan, a run from start to end,
 * the rays stored, the tests' knobs), cone_pool.c (the ray pool and the stages' rays),
 * cone_steps.c (the steps), cone_pairs.c (a step's pair tests) and cone_exchange.c (a step
 * dealt across the ranks and the agreements between steps). */
#ifndef HF_CONE_DD_IMPL_H
#define HF_CONE_DD_IMPL_H

#include <stdint.h>
#include <string.h>
#include <time.h>

#include <flint/fmpz_vec.h>

#include "search/cone_impl.h"

/* ---- the ray pool and the stages' rays (cone_pool.c) ---- */

/* The rays' vectors, n integers each, in slots that never move: a kept ray keeps its slot
 * from one stage to the next (moving every kept vector at every step was a tenth of a
 * whole run on every rank), a dropped ray's slot is reused by a new ray, and the pool
 * grows by blocks (block k holds 64 * 2^k slots), never by moving what it holds: in this
 * process malloc takes everything from the heap and never returns it (libsuperlu_dist,
 * loaded with PETSc, turns off mmap and trimming when it loads), so a pool grown by
 * realloc could leave its old copy resident (docs/performance.md §16). A ray of a dealt
 * step made by another process may have no slot yet: its vector stays encoded in the
 * step's exchanged records (a chunk, freed when none of its rays is left encoded) until
 * this process needs it (hf_dd_rayset_vector; docs/search.md, "The double description across
 * ranks"). */
typedef struct {
    unsigned char *buf; /* a dealt step's exchanged records */
    long live;          /* rays still encoded in it */
    long words;         /* of each record's zero set (the stage's it was merged into) */
} vchunk_t;

enum { VPOOL_FIRST_LOG = 6, VPOOL_BLOCKS = 56 };

typedef struct {
    long n, cap;             /* integers per vector; slots allocated */
    fmpz *blk[VPOOL_BLOCKS]; /* block k: 64 * 2^k slots of n integers */
    int nblk;
    int big;    /* an integer may have been an mpz: clear them one by one at the end */
    long *free; /* released slots */
    long nfree, capfree;
    vchunk_t *chunk;
    long nchunk, capchunk;
} vpool_t;

/* Slot `slot`'s integers: slots 0..63 are block 0, 64..191 block 1, and so on. */
static inline fmpz *vpool_at(const vpool_t *P, long slot)
{
    uint64_t t = (uint64_t)slot + ((uint64_t)1 << VPOOL_FIRST_LOG);
    int k = 63 - __builtin_clzll(t) - VPOOL_FIRST_LOG;
    return P->blk[k] + (long)(t - ((uint64_t)1 << (k + VPOOL_FIRST_LOG))) * P->n;
}

/* Frees the pool's blocks, released slots and chunks, and leaves it empty. */
void hf_dd_vpool_clear(vpool_t *P);

/* One ray fewer encoded in chunk k: the chunk goes when none is left. */
void hf_dd_vpool_chunk_unref(vpool_t *P, long k);

/* Positions < p as a mask of word w. */
static inline uint64_t below_mask(long w, long p)
{
    long lo = w * 64;
    if (p <= lo)
        return 0;
    return p - lo >= 64 ? ~(uint64_t)0 : ((uint64_t)1 << (p - lo)) - 1;
}

/* A ray's support on the positions processed so far, as the pair loop and the index use
 * it: folded onto 64 bits (position u sets bit u mod 64), and its first and last
 * positions. Kept from step to step (a ray that stays positive gains the step's position),
 * not rescanned from the zero set at every step. */
typedef struct {
    uint64_t fold;
    int32_t first, last;
} rayends_t;

/* The ends of the support whose zero set is Z, over positions < p. */
rayends_t hf_dd_ray_ends_of(const uint64_t *Z, long words, long p);

/* The rays of one stage: where their vectors are (loc: a slot of the pool, or still
 * encoded in a chunk, loc_encoded), the process that computes their signs when the signs
 * are split (owner), zero sets over processed positions, partial support sizes. A zero
 * set has only the words that the processed positions need (stage_words): the bits above
 * are 0, so the tests read fewer words and a step moves fewer bytes (docs/performance.md
 * §16). */
typedef struct {
    vpool_t *pool;
    long *used; /* slots of the pool ever taken (shared by the stages) */
    long words; /* of a zero set at this stage */
    long wmax;  /* words allocated per zero set: those of all positions */
    long count, cap;
    int64_t *loc;
    int *owner;
    uint64_t *zero;
    long *size;
    rayends_t *ends;
} rayset_t;

/* Ray i's vector (its slot must be there: hf_dd_rayset_vector). */
#define RAY(R, i) vpool_at((R)->pool, (R)->loc[i])

/* A ray still encoded, at byte `off` of chunk `chk`, as one negative number: a ray moves 8
 * bytes of where it is instead of 20 at each step (slot, record pointer, chunk). */
enum { LOC_OFF_BITS = 40 };
#define LOC_CHUNKS_MAX (1L << (62 - LOC_OFF_BITS))
#define LOC_OFF_MAX ((int64_t)1 << LOC_OFF_BITS)

static inline int64_t loc_encoded(long chk, size_t off)
{
    return -1 - (int64_t)(((uint64_t)chk << LOC_OFF_BITS) | off);
}

static inline long loc_chunk(int64_t loc)
{
    return (long)((uint64_t)(-1 - loc) >> LOC_OFF_BITS);
}

static inline size_t loc_offset(int64_t loc)
{
    return (size_t)((uint64_t)(-1 - loc) & ((uint64_t)LOC_OFF_MAX - 1));
}

/* The words of a zero set once the positions below p are processed. */
static inline long stage_words(long p)
{
    return p > 64 ? (p + 63) / 64 : 1;
}

/* Frees the rays' fields (not their vectors: they are the pool's) and leaves no rays. */
void hf_dd_rayset_clear(rayset_t *R);
/* Room for `need` rays. */
hf_err_t hf_dd_rayset_reserve(rayset_t *R, long need);

/* A dealt step's record: its cell, the new ray's size and the byte count of its vector
 * (then its zero set and the vector's integers, dd_sink_put). */
#define DD_HEAD 3

/* Ray i's vector into a slot of the pool, decoded from its record if it is still encoded
 * (a ray of a dealt step that this process meets for the first time: its signs, or a pair
 * of its cells). Pointers into the pool stay valid: blocks never move. */
hf_err_t hf_dd_rayset_vector(rayset_t *R, long i);

/* Append a new ray (copies v into a slot of the pool) with zero set `zero` over the
 * positions below p and support size `size`. */
hf_err_t hf_dd_rayset_push(rayset_t *R, const fmpz *v, int owner, const uint64_t *zero, long size,
                           long p);

/* A ray leaves the stages: its slot is released, or its chunk has one encoded ray fewer. */
hf_err_t hf_dd_rayset_drop(const rayset_t *R, long i);

/* v divided by its content g (a primitive vector; 0 stays 0). */
static inline void vec_primitive(fmpz *v, long n, fmpz_t g)
{
    _fmpz_vec_content(g, v, n);
    if (!fmpz_is_zero(g) && !fmpz_is_one(g))
        _fmpz_vec_scalar_divexact_fmpz(v, v, n, g);
}

/* Is x small enough that the products of two such and the sums of up to 2^40 of them stay
 * inside 127 bits (|x| < 2^40, an fmpz that is not an mpz)? */
static inline int small40(fmpz x)
{
    return !COEFF_IS_MPZ(x) && (uint64_t)(x + ((fmpz)1 << 40)) < ((uint64_t)1 << 41);
}

/* s = a . x over the nonzero positions nzi[0..nz): in 128-bit integers when every factor is
 * below 2^40 and the sum fits a word (exact: no product or partial sum can overflow), else
 * with FLINT. */
static inline void dot_row(fmpz_t s, const fmpz *a, const fmpz *x, const long *nzi, long nz)
{
    __int128 acc = 0;
    long t = 0;
    for (; t < nz; t++) {
        fmpz av = a[nzi[t]], xv = x[nzi[t]];
        if (!small40(av) || !small40(xv))
            break;
        acc += (__int128)av * xv;
    }
    if (t == nz && acc >= -((__int128)1 << 61) && acc < ((__int128)1 << 61)) {
        fmpz_set_si(s, (slong)acc);
        return;
    }
    fmpz_zero(s);
    for (t = 0; t < nz; t++)
        fmpz_addmul(s, a + nzi[t], x + nzi[t]);
}

/* ---- the plan (cone_dd.c) ---- */

/* What every run over the cone shares: the order in which the hyperplanes are processed
 * and the rays of the simplicial start. */
typedef struct {
    const hf_cone_t *c;
    long n, rows, words; /* unknowns, hyperplanes, words of a bitset over positions */
    long *order;         /* position -> hyperplane */
    fmpz *start;         /* n x n: start ray j, positive on position j only, primitive */
} dd_plan_t;

/* ---- a run's control ---- */

/* How a run is watched: its poll hook, called every DD_POLL_WORK pair tests and at every
 * row (so that a stop and the other ranks' requests are answered within milliseconds even
 * in a step of minutes; 2^14 is about 40 us: a steal waits for its victim's poll, at the
 * end of a dealt step, docs/search.md), its progress and its figures. */
#define DD_POLL_WORK (1L << 14)
typedef struct {
    hf_search_poll_fn poll;
    void *poll_ctx;
    long work;            /* pair tests since the last poll */
    hf_cone_info_t *info; /* step, step_rays: progress for reports (may be NULL) */
    long rays_max, adjacencies;
    double pairs; /* (positive, negative) pairs examined: the cost, machine-independent */
    const hf_search_split_t *split; /* steps dealt across processes, or NULL */
    long serial;        /* rays made so far: the next one's owner is serial mod the processes */
    long since_steps;   /* with a split: steps since the processes last agreed, */
    double since_pairs; /* and their pair tests (hf_dd_steps) */
} dd_ctl_t;

/* With a split, the processes agree at least every DD_AGREE_STEPS steps or DD_AGREE_PAIRS
 * pair tests (about a tenth of a second), so that a stop seen by one reaches the others
 * soon; small steps otherwise need no collective call (docs/search.md, "The double
 * description across ranks"). */
#define DD_AGREE_STEPS 1024
#define DD_AGREE_PAIRS (double)(1L << 22)

/* The process that will compute a new ray's signs when they are split: the rays in the
 * order every process makes or merges them, dealt round the processes in turn. */
static inline int dd_owner(dd_ctl_t *ctl)
{
    long k = ctl->serial++;
    return ctl->split && ctl->split->nranks > 1 ? (int)(k % ctl->split->nranks) : 0;
}

/* Once DD_POLL_WORK pair tests and rays looked at have added up: the poll hook and the
 * stop flag. */
static inline int dd_pairs_poll(long *work, hf_search_poll_fn poll, void *poll_ctx)
{
    if (*work < DD_POLL_WORK)
        return 0;
    *work = 0;
    return hf_search_stop_asked(poll, poll_ctx, HF_STOP_RAYS);
}

/* The error of a run stopped on request (HF_ERR_INTERRUPTED). */
hf_err_t hf_dd_stopped(void);

/* This thread's CPU seconds: the cost of the repeated parts of a step (hf_cone_info_t). */
static inline double dd_cpu(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* ---- one step (cone_steps.c; its pairs, cone_pairs.c; dealt, cone_exchange.c) ---- */

/* The rays of a stage bucketed by the first and last position of their support (every
 * support is nonempty once the start rows are processed): a ray whose support lies in a
 * set U sits in a bucket (a, b) with a <= b both in U. */
#define ENDS_INDEX_POSITIONS_MAX 2048 /* the table has positions^2 buckets */
typedef struct {
    long p;      /* positions processed (0: no index) */
    long *start; /* p * p + 1 bucket offsets (key a * p + b) */
    long *ray;   /* ray numbers, bucket by bucket */
    long *key;   /* per ray */
    long start_cap, ray_cap, key_cap;
} ends_index_t;

/* The index of the rays of cur by their ends over the p positions processed (ix->p = 0, no
 * index, when it would not pay: ends_blocked then scans every ray). */
hf_err_t hf_dd_ends_index(const rayset_t *cur, long p, ends_index_t *ix);
void hf_dd_ends_index_clear(ends_index_t *ix);

/* One step's shared data: the row at position p, the signs of the rays on it, the lists of
 * positive and negative rays, their folded supports and the index of the rays' ends, and
 * its cells: cell c is the pairs of positive ray posl[c / nblk] with the negative rays of
 * block c % nblk (blk of them each; the last block may be shorter), so cells in increasing
 * order are the serial loop's pairs in order. Every rank builds it alike from the same
 * rays. */
typedef struct {
    long p, R, npos, nneg;
    long blk, nblk, ncells;
    /* the row's nonzero positions, and the row values s of the rays: computed for every
     * ray by one process, for a share of them when the signs are split (the others as the
     * pairs need them, dd_s); sg their signs, have which s are computed */
    const fmpz *a;
    const long *nzi;
    long nz;
    fmpz *s;
    signed char *sg;
    unsigned char *have;
    long slen, sg_cap, have_cap;
    long *posl, *negl;
    uint64_t *sig; /* the negative rays' support folds, in the order of negl */
    long posl_cap, negl_cap, sig_cap;
    long *kept; /* the rays that stay, in order (keeping them) */
    long kept_cap;
    ends_index_t ix;
} dd_step_t;

/* Ray i's value on the step's row (computed now if it is not yet: the signs were split;
 * its vector must be decoded, hf_dd_rayset_vector). */
static inline const fmpz *dd_s(const dd_step_t *st, const rayset_t *cur, long i)
{
    if (!st->have[i]) {
        dot_row(st->s + i, st->a, RAY(cur, i), st->nzi, st->nz);
        st->have[i] = 1;
    }
    return st->s + i;
}

/* Where a step's new rays go: pushed to the next stage (a whole step on this process), or
 * encoded as records for the exchange (a range of a step dealt across ranks). */
typedef struct {
    rayset_t *next; /* or NULL */
    hf_bytes_t b;   /* records: cell, size, zero bitset, vector */
} dd_sink_t;

/* One step's pairs: the plan, the positions' weights, the bound, the rays and the step. */
typedef struct {
    const dd_plan_t *pl;
    const long *wpos;
    long bound;
    rayset_t *cur; /* its vectors are decoded as the pairs need them */
    const dd_step_t *st;
    dd_ctl_t *ctl;
} dd_job_t;

/* The start: the rays of the simplicial cone of the first n rows of the order within the
 * bound (start ray j is positive on position j only). */
hf_err_t hf_dd_begin(const dd_plan_t *pl, const long *wpos, long bound, dd_ctl_t *ctl,
                     rayset_t *cur);

/* The rows after the start, one step each (docs/search.md, "Engine cone", claim 3): cur
 * holds the extreme rays of the cone of the rows processed so far with at most `bound` box
 * points in their support, and at the end those of the whole cone. */
hf_err_t hf_dd_steps(const dd_plan_t *pl, const long *wpos, long bound, dd_ctl_t *ctl,
                     rayset_t *cur);

/* The pairs of cells lo, lo + 1, ... (while below range->hi, which a steal may lower): the
 * adjacent ones give new rays, in the order of the serial loop. poll is called every
 * DD_POLL_WORK pair tests and rays looked at by the adjacency test, inside a cell too (a
 * cell's adjacency tests can look at every ray many times over). A positive ray's cells
 * run as one loop over its negative rays, with no test per cell, so cells can be small (a
 * short tail at the end of a dealt step) at no cost per cell. */
hf_err_t hf_dd_pairs(const dd_job_t *job, long lo, hf_search_range_t *range, hf_search_poll_fn poll,
                     void *poll_ctx, dd_sink_t *sink);

/* The pairs of one step: on this process alone, or dealt across the processes and
 * exchanged. With a split every process reaches the same collective calls with its status
 * (err: a failure or stop of its own so far), so none waits forever for another. */
hf_err_t hf_dd_step_pairs(const dd_plan_t *pl, const long *wpos, long bound, rayset_t *cur,
                          const dd_step_t *st, dd_ctl_t *ctl, hf_err_t err, rayset_t *next,
                          int *agreed);

/* Every ray's sign on the step's row, from the processes that own them: each sends the
 * signs of its own rays in the rays' order, one byte each, and the others' are read from
 * the gathered bytes (which come process by process) in the same order. Collective: the
 * result is agreed by every process. */
hf_err_t hf_dd_gather_signs(const hf_search_split_t *sp, const rayset_t *cur, dd_step_t *st,
                            hf_err_t err);

/* With a split, a process that failed before the steps' first agreement joins it with
 * its error (every process's first collective call in hf_dd_steps is an agreement), so the
 * others learn of it there instead of waiting for it in a later exchange. */
hf_err_t hf_dd_carry(const dd_ctl_t *ctl, hf_err_t err);

#endif
