/* Newton polytopes of the reduced denominator (docs/math.md §5).
 *
 * Let T = P/Q be reduced (algebra.h). Every support K of a head representing T has
 * conv(K) = Newt(Q) + Newt(R) for some Laurent polynomial R (7.1), so
 *   |K| >= |vert Newt(Q)|                                   (7.2, the vertex bound)
 *   |K| >= sum_i |F_{w_i}(K)| over pairwise disjoint faces G_i of Newt(Q)   (7.3)
 * where w_i is any direction with F_{w_i}(Newt Q) = G_i and F_{w_i}(K) represents the
 * limit target T_{w_i} (bounds.h). This header gives Newt(Q) with its faces, each
 * with such a direction, and the best total over disjoint faces.
 *
 * Exact throughout: cddlib with GMP rationals converts the exponent points to facets;
 * vertices, incidences and faces are then decided with integer arithmetic. The
 * functions are not collective and keep no state between calls (cddlib's global
 * constants are set once per process, guarded). */
#ifndef HEADFUSE_NEWTON_H
#define HEADFUSE_NEWTON_H

#include <stdint.h>

#include <flint/fmpz.h>

#include "headfuse/algebra.h"

/* One proper nonempty face G of Newt(Q). */
typedef struct {
    int dim;     /* dimension of the face (0 = vertex) */
    int64_t *w;  /* d integers, primitive: a direction in the relative interior of G's
                  * normal cone, so that F_w(Newt Q) = G exactly. It is the sum of the
                  * facet_w of the facets containing G (divided by its content), so it
                  * lies in the direction space of Newt(Q)'s affine hull. */
    long nverts; /* vertices of the face */
    long *verts; /* their indices into hf_newton_t.verts, increasing */
} hf_newton_face_t;

typedef struct {
    int d;                   /* ambient dimension (the target's d) */
    int dim;                 /* affine dimension of Newt(Q) (0 when Q is a monomial) */
    long nverts;             /* vertices */
    int64_t *verts;          /* nverts x d, row-major, sorted lexicographically, in Q's exponent
                              * coordinates (Q as hf_fraction_from_target returns it) */
    long nfacets;            /* facets of Newt(Q) within its affine hull (0 when dim = 0) */
    int64_t *facet_w;        /* nfacets x d: primitive integer outer normals. When dim < d they
                              * lie in the direction space L of the affine hull (w in L with
                              * w.x = the facet's functional on the hull), so F_w picks exactly
                              * the facet; adding any vector orthogonal to L would too. */
    int64_t *facet_b;        /* nfacets: max of facet_w . x over Newt(Q) */
    long nfaces;             /* proper nonempty faces listed (all dimensions 0..dim-1) */
    hf_newton_face_t *faces; /* sorted by dimension, then by vertex list; vertices come
                              * first and faces[i] for i < nverts is vertex i when the
                              * list holds all vertices */
    int faces_complete;      /* 1 when faces lists every proper nonempty face; 0 when the
                              * list was capped (it then holds every face of dimension < k and
                              * some of dimension k, for some k) */
} hf_newton_t;

/* An empty polytope object (d = 0, nothing allocated). */
void hf_newton_init(hf_newton_t *N);

/* Free everything and leave N as after init. */
void hf_newton_clear(hf_newton_t *N);

/* Newt(Q) of a reduced fraction: vertices, facets and up to max_faces proper faces
 * (max_faces = 0: no faces are listed; faces_complete is 1 only if there are none).
 * N must be initialised (anything in it is replaced). Errors: HF_ERR_INPUT for a
 * negative max_faces or Q = 0; HF_ERR_LIMIT when a normal does not fit 64 bits or
 * cddlib reports a failure; HF_ERR_NOMEM. Cost: cddlib's double description on
 * Q's terms (thousands of points in small dimension are fine; W_20's 2^20 are not). */
hf_err_t hf_newton_from_fraction(const hf_fraction_t *f, long max_faces, hf_newton_t *N);

/* The same for the convex hull of n points pts[n][d] (any integer coordinates up to 2^40
 * in absolute value; repeated points allowed): the polytope is conv(pts) instead of
 * Newt(Q). HF_ERR_INPUT when n <= 0 or d is out of 1..HF_D_MAX, HF_ERR_LIMIT for a
 * larger coordinate; otherwise as hf_newton_from_fraction. */
hf_err_t hf_newton_from_points(const int64_t *pts, long n, int d, long max_faces, hf_newton_t *N);

/* Best total over families of pairwise disjoint faces (docs/math.md §5.3). value[i] (one per
 * N->faces[i], each at least 1) is a proven lower bound on |F_w(K)| for the face's
 * direction w; *bound is then a proven lower bound on |K| for every K representing T
 * (or for every K inside a span, when the values are within-span values: the faces of
 * K lie in the same box). Two faces are disjoint when their vertex sets are.
 *
 * Exact branch and bound: the maximum over all disjoint families of listed faces when
 * it finishes within 2,000,000 branch nodes; otherwise the best family found so far
 * (any disjoint family is valid, so the bound stays sound, only possibly weaker).
 * hf_newton_packing_bound_ex says which. *bound is at least 1 (K is not empty).
 * Errors: HF_ERR_INPUT when some value is below 1. */
hf_err_t hf_newton_packing_bound(const hf_newton_t *N, const long *value, long *bound);

/* The same with a node limit (<= 0: the default 2,000,000); *exact = 1 when the
 * search finished (the bound is the maximum), 0 when the limit stopped it. */
hf_err_t hf_newton_packing_bound_ex(const hf_newton_t *N, const long *value, long node_limit,
                                    long *bound, int *exact);

/* Number of vertices of Newt(Q) for the reduced denominator Q of t (7.2, 7.6), without
 * forming P/Q when possible: heads on disjoint coordinates form blocks whose counts
 * multiply; a block whose non-constant heads all have their keys on lines counts as a
 * zonotope (regions of a hyperplane arrangement, docs/bounds.md); any other block
 * through hf_newton_from_fraction when the product of its head sizes is at most 4096
 * and it uses at most 8 coordinates (that can take seconds). *known = 0 (count 0) when
 * some block is out of reach. Not collective. */
hf_err_t hf_newton_vertex_count(const hf_target_t *t, fmpz_t count, int *known);

#endif
