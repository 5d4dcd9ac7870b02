/* Shared inside the three-dimensional face accounting (faces3d.c, faces3d_eval.c). */
#ifndef HF_FACES3D_IMPL_H
#define HF_FACES3D_IMPL_H

#include <stdint.h>

#include "headfuse/faces3d.h"
#include "headfuse/control.h"

__extension__ typedef __int128 hf_faces3d_i128;

/* Lattice length of the segment [a, b] in Z^3: the gcd of the coordinate differences. */
long hf_faces3d_lattice_length(const int64_t *a, const int64_t *b);

/* The knobs of tests/test_faces3d.c (control.h), planted errors the counts must catch:
 * HF_KNOB_FACES3D_UNSHARED, nonzero: hf_faces3d_combine charges every gain in full to each
 * lost facet around it, as if no two lost facets could share one (the count on P = [0, e2]
 * for chain:d=3 must catch it); HF_KNOB_FACES3D_ZONE_THRESHOLD: the points claimed on every
 * zone circle (FACES3D_ZONE_THRESHOLD, 3, Lemma 11.11; a planted 5 claims two too many);
 * HF_KNOB_FACES3D_SKIP_EDGE_SEGMENTS, nonzero: the exact count of the segments along edge
 * directions is skipped (as if Lemma 11.10's count covered them). */
#define FACES3D_ZONE_THRESHOLD 3

/* The zone count (faces3d_zones.c): nzones, nzones_gaining, zone_delta, seg_bound,
 * weak_kind and weak_u from the face values, base and q_exps. */
hf_err_t hf_faces3d_zone_count(hf_faces3d_t *A);

/* The covering problem of the zone count (docs/math.md §11.13), exposed for its tests: the
 * least, over sets X of the nf facet normals holding every forced one (forced may be NULL),
 * of sum_{F in X} cost[F] + 2 sum_{zones z with use[z]} max(y0[z], t[z] - |X n z|), where
 * on[F * nz + z] says that normal F lies on zone z. *exact = 0 when the search stopped at
 * its node cap: *out is then a smaller value, still a lower bound. */
hf_err_t hf_faces3d_cover_min(long nf, long nz, const char *on, const char *use, const long *cost,
                              const char *forced, const long *t, const long *y0, long *out,
                              int *exact);

/* Keys forced inside an edge of X of lattice length len over the Z-edge e: the edge lemma
 * (sigmoid-type: min(len + 1, 4) keys on it) or Descartes' rule (roots + 1 keys on it),
 * less its two endpoints. */
long hf_faces3d_edge_forced(const hf_faces3d_edge_t *e, long len);

/* w . x in 128 bits (no overflow for 64-bit inputs). */
static inline hf_faces3d_i128 hf_faces3d_dot(const int64_t *w, const int64_t *x)
{
    return (hf_faces3d_i128)w[0] * x[0] + (hf_faces3d_i128)w[1] * x[1] +
           (hf_faces3d_i128)w[2] * x[2];
}

/* Lexicographic order of exponent triples (qsort and bsearch of q_exps). */
static inline int hf_faces3d_exp_cmp(const void *a, const void *b)
{
    const int64_t *x = a, *y = b;
    for (int j = 0; j < 3; j++)
        if (x[j] != y[j])
            return x[j] < y[j] ? -1 : 1;
    return 0;
}

#endif
