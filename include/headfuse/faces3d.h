/* Span-free face accounting in three dimensions (docs/math.md §11; docs/search.md, "In
 * three dimensions").
 *
 * Let T = P/Q be reduced in d = 3 variables with Z = Newt(Q) full-dimensional, and let K
 * represent T: conv(K) = X = Z + P' for a lattice polytope P' (Theorem 5.1). Every face of X
 * is X_w = Z_w + P'_w and K meets it in a support of the limit target T_w, which depends
 * on the face Z_w only. Counting the keys that this forces into the relative interiors of
 * the faces of X (disjoint sets, so the counts add):
 *   - every vertex of X is a key;
 *   - an edge of X lying over an edge e of Z whose limit target is sigmoid-type holds at
 *     least min(s + 1, 4) keys (s its lattice length; the edge lemma), so at least
 *     min(s, 3) - 1 inside; any edge over e holds at least r_e + 1 keys, r_e the negative
 *     real roots of e's reduced limit denominator (Descartes' rule of signs);
 *   - a facet of X lying over a facet F of Z with P'_F a point is a translate of F, and
 *     when the reduced denominator q_F of T_F has Newton polygon F ("exact" facet) K meets
 *     it in supp(q_F) translated: its inner terms are keys.
 * The sum is L(X). When P' is a point it is `base` (and K = supp Q exactly). When P' is
 * not a point, L(X) >= bound = base + delta, where delta bounds gains minus losses:
 * vertices of Z split, edges grow, and the inner keys of exact facets are lost when P'_F
 * is not a point; a lost facet forces gains around it, shared with at most as many lost
 * facets as the counts h (per vertex) and m (per edge) say. The proof is docs/math.md §11.
 *
 * Everything is exact (integers, FLINT rationals, cddlib with GMP through newton.h). Not
 * collective; no state between calls. */
#ifndef HEADFUSE_FACES3D_H
#define HEADFUSE_FACES3D_H

#include <stdint.h>

#include "headfuse/newton.h"
#include "headfuse/target.h"

/* Faces listed at most (Newt(Q) of every target the accounting is meant for has far fewer). */
#define HF_FACES3D_MAX_FACES 100000

/* An edge of Z. */
typedef struct {
    long face;   /* index into Z.faces */
    long v0, v1; /* its vertices (indices into Z.verts) */
    long len;    /* lattice length */
    int sigmoid; /* the reduced limit target is sigmoid-type: a two-term denominator whose
                  * exponents differ by a primitive vector, and not constant */
    long roots;  /* negative real roots, with multiplicity, of the reduced limit
                  * denominator as a polynomial along the edge (Descartes: every support
                  * of the limit target has at least roots + 1 keys) */
    long forced; /* keys forced inside the edge of X over it when P'_e is a point:
                  * max(min(len, 3) - 1 if sigmoid, roots - 1, 0) */
    int gain;    /* 1 when one more lattice step forces one more key inside (sigmoid and
                  * len <= 2), else 0 */
    long shared; /* m_e: exact facets with inner keys containing the edge (combine) */
} hf_faces3d_edge_t;

/* A facet (2-face) of Z. */
typedef struct {
    long face;  /* index into Z.faces */
    int exact;  /* Newt(q_F) = F up to translation (q_F: the reduced limit denominator) */
    long terms; /* |supp q_F| when exact, else 0 */
    long inner; /* terms of q_F in the relative interior of its Newton polygon (0 unless
                 * exact): the keys kept inside the facet when P'_F is a point */
    long share_num, share_den; /* s_F (combine): a lower bound on the gains its loss forces,
                                * charged to it; 0/1 when inner = 0 */
} hf_faces3d_facet_t;

typedef struct {
    int ok;          /* 1: the accounting applies; 0: see why */
    const char *why; /* static text when !ok: "d is not 3", "Newt(Q) is not full-dimensional",
                      * "too many faces", "out of reach" */
    hf_newton_t Z;   /* Newt(Q): vertices, facets, every face */
    long nedges, nfacets;
    hf_faces3d_edge_t *edges;
    hf_faces3d_facet_t *facets;
    long *vertex_shared; /* h_z per vertex: exact facets with inner keys containing it */
    long supp_q;         /* |supp Q| */
    /* the combination (hf_faces3d_combine): */
    long base;     /* forced boundary keys when P' is a point */
    long gain_min; /* every P' that is not a point gains at least this much: 3 when every
                    * edge of Z has gain 1, else 0 */
    long delta;    /* every P' that is not a point has L(X) - base >= delta */
    /* the zone count (faces3d_zones.c; docs/math.md §11.9 to docs/math.md §11.14): */
    int q_one_sign;      /* every coefficient of Q has the same sign */
    int64_t *q_exps;     /* supp Q: supp_q x 3 exponents, sorted lexicographically */
    long nzones;         /* edge directions u of Z whose great circle u^perp lies in the 1-skeleton
                          * of Z's normal fan (all of them for a zonotope) */
    long nzones_gaining; /* those whose edges all gain */
    long zone_delta;     /* every P' other than a point and a segment along an edge direction of
                          * Z has L(X) - base >= zone_delta: the least of */
    long zone_segment;   /*   ... for the other segments, */
    long zone_polygon;   /*   ... for polygons, */
    long zone_polytope;  /*   ... and for three-dimensional P' */
    long seg_bound;      /* every support whose P' is a segment along an edge direction of Z has
                          * at least this many keys (LONG_MAX: no such direction) */
    int weak_kind;       /* the kind of P' that attains min(seg_bound, base + zone_delta):
                          * HF_FACES3D_WEAK_* */
    int64_t weak_u[3];   /* its direction: the segment's, or the polygon's normal (else 0) */
    long bound;          /* max(base + delta, min(seg_bound, base + zone_delta)): keys of every
                          * support whose hull is not a translate of Z */
} hf_faces3d_t;

/* Kinds of P' (the weakest one, weak_kind). */
enum {
    HF_FACES3D_WEAK_SHARES = 0,   /* the shares of Lemma 11.5 give the bound (zone count lower) */
    HF_FACES3D_WEAK_EDGE_SEGMENT, /* a lattice segment along the edge direction weak_u */
    HF_FACES3D_WEAK_SEGMENT,      /* another segment */
    HF_FACES3D_WEAK_POLYGON,      /* a polygon (normal weak_u when it is a facet normal of Z) */
    HF_FACES3D_WEAK_POLYTOPE      /* a three-dimensional P' */
};

void hf_faces3d_init(hf_faces3d_t *A);
void hf_faces3d_clear(hf_faces3d_t *A);

/* The face values of Z = Newt(Q) for t, then hf_faces3d_combine. A must be initialised;
 * its contents are replaced. A->ok = 0 (and HF_OK) when the accounting does not apply.
 * Errors: HF_ERR_NOMEM, HF_ERR_INPUT for an invalid target. */
hf_err_t hf_faces3d_from_target(const hf_target_t *t, hf_faces3d_t *A);

/* Recompute the shares, base, gain_min, delta and bound from the face values (edges'
 * sigmoid/len/forced/gain and facets' exact/inner), e.g. after a test has planted a
 * wrong value. Needs A->ok. */
hf_err_t hf_faces3d_combine(hf_faces3d_t *A);

/* The count L(X) for one hull X = Z + P', with its parts. */
typedef struct {
    long total;     /* L(X): keys forced on the boundary of X */
    long vertices;  /* vertices of X */
    long on_edges;  /* forced inside edges of X */
    long on_facets; /* forced inside facets of X (exact facets of Z kept as translates) */
    int translate;  /* 1 when X is a translate of Z (P' a point) */
} hf_faces3d_count_t;

/* L(X) for X = conv(pts[n][3]), which must be Z + P' for a lattice polytope P' (the hull
 * of a support is; HF_ERR_INPUT when a face of X is not the sum of a face of Z and a face
 * seen from the same direction, i.e. X is not of that form). Needs A->ok. */
hf_err_t hf_faces3d_count_hull(const hf_faces3d_t *A, const int64_t *pts, long n,
                               hf_faces3d_count_t *out);

/* L(Z + P') for P' = conv(p[n][3]) (any lattice points; a point gives base). */
hf_err_t hf_faces3d_count_sum(const hf_faces3d_t *A, const int64_t *p, long n,
                              hf_faces3d_count_t *out);

/* Check a key set K (keys[m][3], a support of T) face by face against the accounting:
 * every face of conv(K) holds in its relative interior at least the keys the accounting
 * forces there. *ok = 1 when it does; otherwise *ok = 0 and bad (if not NULL, at least
 * HF_FACES3D_BAD_LEN bytes) names the first face that does not. */
#define HF_FACES3D_BAD_LEN 256
hf_err_t hf_faces3d_check_support(const hf_faces3d_t *A, const int64_t *keys, long m, int *ok,
                                  char *bad);

/* The limit target T_w of t (bounds.h) is sigmoid-type: reduced, its denominator has two
 * terms whose exponents differ by a primitive vector, and it is not constant. */
hf_err_t hf_faces3d_limit_is_sigmoid(const hf_target_t *t, const int64_t *w, int *yes);

/* The kind of P' that gives the bound (weak_kind, weak_u) in words, e.g. "a polygon" or
 * "a segment along (0,1,0)". Writes at most n bytes. */
void hf_faces3d_weakest(const hf_faces3d_t *A, char *buf, size_t n);

/* The face types of Z in words, e.g. "18 vertices; 28 edges (28 sigmoid-type of length 1);
 * 12 facets (4 hexagons with 1 inner key, 8 quadrilaterals)". Writes at most n bytes. */
void hf_faces3d_describe(const hf_faces3d_t *A, char *buf, size_t n);

#endif
