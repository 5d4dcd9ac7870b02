/* Best total value over pairwise disjoint faces of Newt(Q) (docs/math.md §5.3, §8.3; newton.h).
 *
 * Branch and bound over the vertices in index order: at the first undecided vertex v,
 * either some listed face through v that meets no decided vertex is taken (its vertices
 * become decided), or v is left uncovered (decided alone). Every disjoint family arises
 * exactly once. Bound: a face G spreads its value over its vertices, value(G)/|G| each,
 * so a family covering the undecided vertices U earns at most sum_{v in U} r(v) with
 * r(v) the largest share of a face through v. Shares are rounded up in units of 2^-20
 * (integers: the bound stays an upper bound and no floating point decides anything).
 * A greedy family (best share first) seeds the search; every family found is disjoint,
 * so stopping at the node limit still returns a valid bound. */
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "bounds/bounds_impl.h"
#include "headfuse/newton.h"

#define PACK_NODES_DEFAULT 2000000L
#define PACK_SCALE_BITS 20
#define PACK_DEPTH_MAX 20000L /* more vertices than this: the greedy family only */

__extension__ typedef __int128 pack_i128;

typedef struct {
    const hf_newton_t *N;
    const long *value;
    long nv;
    long **vfaces; /* per vertex: the faces through it */
    long *nvfaces;
    pack_i128 *share; /* per vertex: the largest scaled share, rounded up */
    unsigned char *used;
    pack_i128 rem;         /* sum of share over undecided vertices */
    long next;             /* no vertex below this is undecided */
    pack_i128 total, best; /* 128 bits: sums of long values cannot overflow */
    long nodes, limit;
    int stopped;
} pack_t;

/* Mark the vertices of face f decided (or undecided again). */
static void pack_mark(pack_t *P, long f, int on)
{
    const hf_newton_face_t *F = P->N->faces + f;
    for (long i = 0; i < F->nverts; i++) {
        long v = F->verts[i];
        P->used[v] = (unsigned char)on;
        P->rem += on ? -P->share[v] : P->share[v];
    }
}

static int pack_free(const pack_t *P, long f)
{
    const hf_newton_face_t *F = P->N->faces + f;
    for (long i = 0; i < F->nverts; i++)
        if (P->used[F->verts[i]])
            return 0;
    return 1;
}

static void pack_search(pack_t *P)
{
    if (P->stopped)
        return;
    if (++P->nodes > P->limit) {
        P->stopped = 1;
        return;
    }
    if (P->total > P->best)
        P->best = P->total;
    if (((pack_i128)P->total << PACK_SCALE_BITS) + P->rem <=
        ((pack_i128)P->best << PACK_SCALE_BITS))
        return; /* nothing below can do better than the best family known */
    long v = P->next;
    while (v < P->nv && P->used[v])
        v++;
    if (v == P->nv)
        return;
    long saved = P->next;
    P->next = v + 1;
    for (long k = 0; k < P->nvfaces[v] && !P->stopped; k++) {
        long f = P->vfaces[v][k];
        if (!pack_free(P, f))
            continue;
        pack_mark(P, f, 1);
        P->total += P->value[f];
        pack_search(P);
        P->total -= P->value[f];
        pack_mark(P, f, 0);
    }
    if (!P->stopped) { /* v stays uncovered */
        P->used[v] = 1;
        P->rem -= P->share[v];
        pack_search(P);
        P->rem += P->share[v];
        P->used[v] = 0;
    }
    P->next = saved;
}

/* Faces by decreasing share value/|G| (exact: cross-multiplied), then by index. */
static int pack_cmp_share(const void *ctx, long a, long b)
{
    const pack_t *P = ctx;
    pack_i128 x = (pack_i128)P->value[a] * P->N->faces[b].nverts;
    pack_i128 y = (pack_i128)P->value[b] * P->N->faces[a].nverts;
    if (x != y)
        return x > y ? -1 : 1;
    return (a > b) - (a < b);
}

hf_err_t hf_newton_packing_bound_ex(const hf_newton_t *N, const long *value, long node_limit,
                                    long *bound, int *exact)
{
    hf_err_t err = HF_OK;
    long nf = N->nfaces, nv = N->nverts;
    pack_t P;
    long *order = NULL, *flat = NULL;
    memset(&P, 0, sizeof P);
    *bound = 1;
    *exact = 1;
    for (long i = 0; i < nf; i++)
        if (value[i] < 1)
            return hf_error(HF_ERR_INPUT,
                            "packing bound: value[%ld] = %ld: every face needs at "
                            "least one atom",
                            i, value[i]);
    if (nf == 0 || nv < 1)
        return HF_OK;
    P.N = N;
    P.value = value;
    P.nv = nv;
    P.limit = node_limit > 0 ? node_limit : PACK_NODES_DEFAULT;
    P.nvfaces = hf_calloc((size_t)nv, sizeof *P.nvfaces);
    P.vfaces = hf_calloc((size_t)nv, sizeof *P.vfaces);
    P.share = hf_calloc((size_t)nv, sizeof *P.share);
    P.used = hf_calloc((size_t)nv, 1);
    order = hf_malloc((size_t)nf * sizeof *order);
    long incidences = 0;
    for (long f = 0; f < nf; f++)
        incidences += N->faces[f].nverts;
    flat = hf_malloc((size_t)(incidences ? incidences : 1) * sizeof *flat);
    if (!P.nvfaces || !P.vfaces || !P.share || !P.used || !order || !flat) {
        err = HF_ERR_NOMEM;
        goto cleanup;
    }
    for (long f = 0; f < nf; f++)
        order[f] = f;
    if (hf_sort(order, nf, pack_cmp_share, &P) != HF_OK) {
        err = HF_ERR_NOMEM;
        goto cleanup;
    }
    /* per-vertex face lists, best share first (good families are found early) */
    for (long f = 0; f < nf; f++)
        for (long i = 0; i < N->faces[f].nverts; i++)
            P.nvfaces[N->faces[f].verts[i]]++;
    long at = 0;
    for (long v = 0; v < nv; v++) {
        P.vfaces[v] = flat + at;
        at += P.nvfaces[v];
        P.nvfaces[v] = 0;
    }
    for (long k = 0; k < nf; k++) {
        long f = order[k];
        const hf_newton_face_t *F = N->faces + f;
        pack_i128 sh = (((pack_i128)value[f] << PACK_SCALE_BITS) + F->nverts - 1) / F->nverts;
        for (long i = 0; i < F->nverts; i++) {
            long v = F->verts[i];
            P.vfaces[v][P.nvfaces[v]++] = f;
            if (sh > P.share[v])
                P.share[v] = sh;
        }
    }
    /* greedy seed */
    for (long k = 0; k < nf; k++) {
        long f = order[k];
        if (pack_free(&P, f)) {
            pack_mark(&P, f, 1);
            P.best += value[f];
        }
    }
    memset(P.used, 0, (size_t)nv);
    P.rem = 0;
    for (long v = 0; v < nv; v++)
        P.rem += P.share[v];
    if (nv <= PACK_DEPTH_MAX)
        pack_search(&P);
    else
        P.stopped = 1;
    *exact = !P.stopped;
    *bound = P.best > LONG_MAX ? LONG_MAX : P.best > 1 ? (long)P.best : 1;
cleanup:
    free(flat);
    free(order);
    free(P.used);
    free(P.share);
    free(P.vfaces);
    free(P.nvfaces);
    return err;
}

hf_err_t hf_newton_packing_bound(const hf_newton_t *N, const long *value, long *bound)
{
    int exact;
    return hf_newton_packing_bound_ex(N, value, 0, bound, &exact);
}
