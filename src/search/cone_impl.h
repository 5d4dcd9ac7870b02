/* Declarations shared by the cone engine's files: the engine (cone.c: rows, hyperplanes,
 * faces by Close-by-One, units) and its double description (cone_dd.c and the files of
 * cone_dd_impl.h: the extreme rays of support <= a bound). docs/search.md, "Engine cone". */
#ifndef HF_CONE_IMPL_H
#define HF_CONE_IMPL_H

#include <stdint.h>
#include <time.h>

#include <flint/fmpz.h>

#include "search/search_impl.h"
#include "headfuse/stop.h"

/* The figures of the cone engine, for reports (hf_search_cone_info). */
typedef struct {
    int empty;            /* some extent of Newt(Q) exceeds the span: no support at all */
    long unknowns;        /* points of B_R */
    long rows;            /* box points reached by Q + B_R */
    long hyperplanes;     /* distinct rows */
    long rays;            /* extreme rays with support <= bound */
    long bound;           /* support bound of the last ray enumeration */
    long rays_max;        /* most rays kept at one step of the double description */
    long adjacencies;     /* adjacent pairs combined into new rays */
    double pairs;         /* (positive, negative) pairs examined: the machine-free cost */
    long step, step_rays; /* progress of the double description: rows done, rays kept */
    double started;       /* hf_cone_clock() when the double description started */
    double done_pairs;    /* the pairs of the steps finished (the progress line) */
    double step_pairs;    /* the pairs of the step under way */
    /* CPU seconds of the parts of the steps that every rank repeats (bench/scaling_record
     * prints them): the signs (dot products), the lists, folds and index, the merge of
     * a dealt step's records, and keeping the rays that stay */
    double cpu_signs, cpu_lists, cpu_merge, cpu_keep;
    int64_t extent[HF_D_MAX];
} hf_cone_info_t;

/* Monotonic wall seconds: the double description's rate in its progress line. */
static inline double hf_cone_clock(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* The cone's rays and hyperplanes (the cone engine's state). */
typedef struct hf_cone_s hf_cone_t;
struct hf_cone_s {
    long n;         /* unknowns: points of B_R */
    long nh;        /* hyperplanes (rows up to a positive factor) */
    long words;     /* 64-bit words of a hyperplane bitset */
    fmpz *A;        /* nh x n rows, primitive */
    long *weight;   /* box points on each hyperplane */
    long *pstart;   /* points of hyperplane h: pts[pstart[h] .. pstart[h + 1]) */
    uint32_t *pts;  /* box point indices, increasing per hyperplane */
    long nrays;     /* extreme rays of support <= bound */
    uint64_t *supp; /* nrays x words: hyperplanes where the ray's row value is > 0 */
    long *ssize;    /* support sizes (box points) */
    long bound;     /* the M the rays were computed for */
    hf_cone_info_t info;
    /* a large row (docs/search.md, "Large rows"; cone_classes.c): no point lists (pstart and
     * pts NULL) but, per hyperplane, its smallest box point, its zero mask (bit a: some point
     * has x_a = 0) and the span of the numerators' rows at its points; pspan[nh]: the points
     * P reaches and Q does not. NULL in an ordinary row. */
    uint64_t *minpt, *zmask;
    hf_rowspan_t *pspan;
};

/* Bitsets over hyperplanes (or over processed positions): 64 per word. */
static inline int bit_get(const uint64_t *b, long i)
{
    return (int)(b[i >> 6] >> (i & 63) & 1);
}

static inline void bit_set(uint64_t *b, long i)
{
    b[i >> 6] |= (uint64_t)1 << (i & 63);
}

static inline int bits_subset(const uint64_t *a, const uint64_t *b, long words)
{
    for (long w = 0; w < words; w++)
        if (a[w] & ~b[w])
            return 0;
    return 1;
}

/* Sum of the weights of the set bits. */
static inline long bits_weight(const uint64_t *b, long words, const long *weight)
{
    long total = 0;
    for (long w = 0; w < words; w++) {
        uint64_t x = b[w];
        while (x) {
            int i = __builtin_ctzll(x);
            total += weight[w * 64 + i];
            x &= x - 1;
        }
    }
    return total;
}

/* The pruned double description (cone_dd.c): every extreme ray of the cone
 * {R : A R >= 0} (c->A, c->nh hyperplanes, c->n unknowns) with at most `bound` box points
 * in its support, into c->nrays, c->supp and c->ssize, sorted by support size, then by
 * support bitset; progress and figures in c->info. poll may stop it (HF_ERR_INTERRUPTED).
 * With a split of several processes (collective: every process calls it with the same cone
 * and bound) the pair tests of each large step are dealt across them and the new rays
 * exchanged: every process ends with the same rays as one process alone. */
/* Steps of the double description with fewer (positive, negative) pairs than
 * hf_cone_split_threshold(nranks) run whole on every process: HF_CONE_SPLIT_PAIRS_MIN
 * (2^16, about a millisecond of pair tests) whatever the rank count (a threshold that grew
 * with the ranks left more steps whole on every rank and measured worse in the simulated
 * runs, docs/performance.md §16); tests set it to 0 to deal every step (the knob
 * HF_KNOB_CONE_SPLIT_PAIRS_MIN, control.h, or HF_CONE_SPLIT_PAIRS_MIN). */
#define HF_CONE_SPLIT_PAIRS_MIN (1L << 16)
double hf_cone_split_threshold(int nranks);
/* Whether a step over `rays` rays computes its signs split across nranks processes (each
 * a share, then an all-gather of one byte a ray): when rays^2 / 4, the pairs of an even
 * split into positive and negative rays, reach hf_cone_split_threshold(nranks). */
int hf_cone_split_signs(long rays, int nranks);
/* The knob HF_KNOB_CONE_DROP_CELL (tests/test_sched_ranks.c): when set, the records of that
 * cell of every dealt step are dropped, a planted bug that the comparison of rays with one
 * process's must catch. */
/* Negative rays per cell of a step (32): a cell is one positive ray against one block of
 * this many negative rays, so that no cell holds more than a slice of a step (one positive
 * ray against all negatives took up to 0.6 s of a 12 s step of chain:d=3 span 6, which no
 * number of ranks could shorten; the last cells of a dealt step are its tail). A cell
 * costs nothing of its own (hf_dd_pairs runs a positive ray's cells in one loop). Tests lower
 * it (the knob HF_KNOB_CONE_CELL_NEGATIVES, or HF_CONE_CELL_NEGATIVES) to make cells of a
 * few pairs. */
#define HF_CONE_CELL_NEGATIVES 32

hf_err_t hf_cone_rays(hf_cone_t *c, long bound, const hf_search_split_t *split,
                      hf_search_poll_fn poll, void *poll_ctx);

/* ---- large rows (cone_classes.c; docs/search.md, "Large rows") ---- */

/* The hyperplanes of a large row from this process's slices of P/Q (hf_search_large_slices),
 * with their classes' figures, exchanged and merged across the processes of sp (collective
 * when sp has several: every process calls it, with err its own status so far, and gets the
 * agreed one), in the order of their smallest points: c->n, nh, words, A, weight, minpt,
 * zmask, pspan and info.rows/hyperplanes. The same on every process and for every number of
 * processes. */
hf_err_t hf_cone_classes(hf_search_t *s, hf_cone_t *c, const hf_search_split_t *sp, hf_err_t err);
void hf_cone_classes_free(hf_cone_t *c);
/* The candidate face whose hyperplanes are U (m points): canonical check and exact test from
 * its classes (hf_search_candidate_begin, hf_search_candidate_rows). */
hf_err_t hf_cone_classes_test(hf_search_t *s, const hf_cone_t *c, long m, const uint64_t *U,
                              hf_run_t *run);
/* The order of two supports given by their multipliers (supp(Q R)): *cmp < 0, 0 or > 0 as
 * the first's sorted key list is before, equal to or after the second's. */
hf_err_t hf_cone_classes_cmp(const hf_cone_t *c, const fmpz *ra, const fmpz *rb, int *cmp);

/* Figures of the cone engine (NULL before preparation or for another engine). */
const hf_cone_info_t *hf_search_cone_info(const hf_search_t *s);
/* The cone engine's rays (tests): their number, the words of a support bitset over the
 * hyperplanes, the bitsets and the support sizes, sorted canonically (0 rays and NULL
 * before preparation or for another engine). */
void hf_search_cone_rays(const hf_search_t *s, long *nrays, long *words, const uint64_t **supp,
                         const long **ssize);

#endif
