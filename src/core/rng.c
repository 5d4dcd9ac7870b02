/* The one seeded generator (approx samples and starts, verify's random points, the
 * symmetry filter's points): splitmix64 for bits, Box-Muller for normals, and a mixer
 * that derives independent stream seeds from (seed, m, restart). Written out here so
 * the sequences are the same on every machine. */
#include <math.h>

#include "headfuse/core.h"

#define GOLDEN 0x9E3779B97F4A7C15ULL

void hf_rng_seed(hf_rng_t *r, uint64_t seed)
{
    r->state = seed;
    r->has_spare = 0;
    r->spare = 0;
}

uint64_t hf_rng_next(hf_rng_t *r)
{
    r->state += GOLDEN;
    return hf_hash_mix(r->state);
}

double hf_rng_uniform(hf_rng_t *r)
{
    /* the top 53 bits, centred in their cell: never 0, never 1 */
    return ((double)(hf_rng_next(r) >> 11) + 0.5) * 0x1.0p-53;
}

double hf_rng_normal(hf_rng_t *r)
{
    if (r->has_spare) {
        r->has_spare = 0;
        return r->spare;
    }
    double u1 = hf_rng_uniform(r), u2 = hf_rng_uniform(r);
    double rad = sqrt(-2.0 * log(u1)), ang = 2.0 * M_PI * u2;
    r->spare = rad * sin(ang);
    r->has_spare = 1;
    return rad * cos(ang);
}

uint64_t hf_rng_mix(uint64_t seed, uint64_t a, uint64_t b, uint64_t c)
{
    /* each input goes through the finaliser before it is folded in, so nearby inputs
     * (restart 3 and 4) give unrelated streams */
    uint64_t h = hf_hash_mix(seed + GOLDEN);
    h = hf_hash_mix(h ^ hf_hash_mix(a + 2 * GOLDEN));
    h = hf_hash_mix(h ^ hf_hash_mix(b + 3 * GOLDEN));
    h = hf_hash_mix(h ^ hf_hash_mix(c + 4 * GOLDEN));
    return h;
}
