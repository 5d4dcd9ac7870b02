/* Cost of the read guard (src/store/read_guard.c): the same shard read with the guard
 * on (a forked child reads it first, then this process) and off, alternated, for a
 * small and a large shard. Each timing is the best of `reps`.
 *   bench_read_guard [reps=20] [large_units=20000] */
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "headfuse/store.h"
#include "store/store_impl.h"

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* A closed shard with `units` units, one found record of ~120 bytes every 4th. */
static int write_shard(const char *path, long units)
{
    hf_shard_t *sh = NULL;
    unlink(path);
    if (hf_shard_create(path, "bench", NULL, &sh) != HF_OK)
        return -1;
    for (long u = 0; u < units; u++) {
        if (u % 4 == 0 &&
            hf_shard_add_found(sh, 0, 8, u, 0,
                               "{\"keys\":[[0,0,0],[0,0,1],[0,1,0],[0,1,1],[1,0,0],[1,0,1],"
                               "[1,1,0],[1,1,1]],\"weights\":[\"1\",\"1/2\"]}") != HF_OK)
            return -1;
        hf_unit_record_t rec = {.row = 0,
                                .rank = 0,
                                .m = 8,
                                .unit = u,
                                .lo = 0,
                                .hi = HF_CELLS_ALL,
                                .nodes = 1000,
                                .found = u % 4 == 0,
                                .seconds = 0.01};
        if (hf_shard_finish_unit(sh, &rec) != HF_OK)
            return -1;
    }
    return hf_shard_destroy(&sh) == HF_OK ? 0 : -1;
}

static double best_read(const char *path, int guard, int reps, long *units)
{
    double best = 1e30;
    hf_h5_read_guard_enable(guard);
    for (int r = 0; r < reps; r++) {
        hf_shard_data_t d;
        hf_shard_data_init(&d);
        double t0 = now();
        if (hf_shard_read(path, "bench", &d) != HF_OK) {
            fprintf(stderr, "bench_read_guard: %s\n", hf_error_msg());
            exit(1);
        }
        double t = now() - t0;
        *units = d.nunits;
        hf_shard_data_clear(&d);
        if (t < best)
            best = t;
    }
    return best;
}

int main(int argc, char **argv)
{
    int reps = argc > 1 ? atoi(argv[1]) : 20;
    long large = argc > 2 ? atol(argv[2]) : 20000;
    long sizes[2] = {16, large};
    char path[64];
    snprintf(path, sizeof path, "/tmp/hf-bench-guard-%d.h5", (int)getpid());
    for (int i = 0; i < 2; i++) {
        if (write_shard(path, sizes[i]) != 0) {
            fprintf(stderr, "bench_read_guard: writing %s: %s\n", path, hf_error_msg());
            return 1;
        }
        struct stat st;
        stat(path, &st);
        long n_on = 0, n_off = 0;
        double on = best_read(path, 1, reps, &n_on), off = best_read(path, 0, reps, &n_off);
        if (n_on != n_off || n_on != sizes[i]) {
            fprintf(stderr, "bench_read_guard: units read differ (%ld, %ld)\n", n_on, n_off);
            return 1;
        }
        printf("shard of %6ld units (%8lld bytes): guard on %8.3f ms  off %8.3f ms  ratio %.2f\n",
               sizes[i], (long long)st.st_size, 1e3 * on, 1e3 * off, on / off);
    }
    unlink(path);
    return 0;
}
