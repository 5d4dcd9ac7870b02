/* Benchmark: the time to compute the symmetry group of targets (hf_search_group_compute,
 * as at the creation of a search) and its order.
 *   bench_group SPEC...   (default: wd, chain and multi:k=3 at d = 4..12)
 * Each target is timed alone: the search is created once (span 1, no pruning), its
 * group dropped and computed again under the clock. */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "headfuse/search.h"
#include "search/search_impl.h"

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + 1e-9 * ts.tv_nsec;
}

static int bench(const char *spec)
{
    hf_target_t t;
    hf_target_init_empty(&t);
    hf_search_t *s = NULL;
    hf_search_opts_t so = {.span = 1, .prune = 0, .max_atoms = 0};
    if (hf_target_from_family(&t, spec) != HF_OK || hf_search_create(&t, &so, &s) != HF_OK) {
        fprintf(stderr, "bench_group: %s: %s\n", spec, hf_error_msg());
        return 1;
    }
    free(s->gperm);
    free(s->gsign);
    s->gperm = s->gsign = NULL;
    s->gorder = 1;
    s->group_unknown = 0;
    double t0 = now();
    hf_err_t err = hf_search_group_compute(s);
    double dt = now() - t0;
    if (err != HF_OK) {
        fprintf(stderr, "bench_group: %s: %s\n", spec, hf_error_msg());
        return 1;
    }
    printf("%-16s order %12ld  %9.4f s\n", spec, hf_search_group_order(s), dt);
    fflush(stdout);
    hf_search_destroy(&s);
    hf_target_clear(&t);
    return 0;
}

int main(int argc, char **argv)
{
    int rc = 0;
    if (argc > 1) {
        for (int i = 1; i < argc; i++)
            rc |= bench(argv[i]);
        return rc;
    }
    static const char *const fams[] = {"wd:d=%d", "chain:d=%d", "multi:d=%d,k=3"};
    for (size_t f = 0; f < sizeof fams / sizeof *fams; f++)
        for (int d = 4; d <= 12; d++) {
            char spec[32];
            snprintf(spec, sizeof spec, fams[f], d);
            rc |= bench(spec);
        }
    return rc;
}
