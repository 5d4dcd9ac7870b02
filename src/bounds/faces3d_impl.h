/* Shared inside the three-dimensional face accounting (faces3d.c, faces3d_eval.c). */
#ifndef HF_FACES3D_IMPL_H
#define HF_FACES3D_IMPL_H

#include <stdint.h>

#include "headfuse/faces3d.h"

__extension__ typedef __int128 hf_faces3d_i128;

/* Lattice length of the segment [a, b] in Z^3: the gcd of the coordinate differences. */
long hf_faces3d_lattice_length(const int64_t *a, const int64_t *b);

/* Test-only (tests/test_faces3d.c): when nonzero, hf_faces3d_combine charges every gain in
 * full to each lost facet around it, as if no two lost facets could share one: a planted
 * error that the count on P = [0, e2] for chain:d=3 must catch. */
extern int hf_faces3d_test_unshared;

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

#endif
