/* Benchmark: the time to make the symmetry group of targets (hf_group_create, as at the
 * creation of a search) and its order.
 *   bench_group SPEC...   (default: wd, chain and multi:k=3 at d = 4..12)
 * Each target is timed alone: its fraction is built first, the group under the clock. */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "headfuse/symmetry.h"

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + 1e-9 * ts.tv_nsec;
}

static int bench(const char *spec)
{
    hf_target_t t;
    hf_fraction_t f;
    hf_fraction_init(&f);
    hf_group_t *g = NULL;
    hf_target_init_empty(&t);
    if (hf_target_from_family(&t, spec) != HF_OK) {
        fprintf(stderr, "bench_group: %s: %s\n", spec, hf_error_msg());
        hf_target_clear(&t);
        return 1;
    }
    hf_err_t err = hf_fraction_from_target(&f, &t);
    double t0 = now(), dt = 0;
    if (err == HF_OK) {
        err = hf_group_create(&t, &f, &g);
        dt = now() - t0;
    }
    if (err == HF_OK)
        printf("%-16s order %12ld  %9.4f s\n", spec, hf_group_order(g), dt);
    else
        fprintf(stderr, "bench_group: %s: %s\n", spec, hf_error_msg());
    fflush(stdout);
    hf_group_destroy(&g);
    hf_fraction_clear(&f);
    hf_target_clear(&t);
    return err != HF_OK;
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
