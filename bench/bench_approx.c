/* Cost and quality of the approximation table: for one target and a range of atom
 * budgets, run hf_approx_run (restarts over the ranks) and print per budget the best
 * train/test RMS, the time per TAO solve (mean, median, max over all its restarts), the
 * mean TAO iterations, and how many random restarts reached the best error (within a
 * factor 1.01, or rounding level): the success rate of a single random start.
 *   mpirun -n N bench_approx FAMILY A B [samples=1000] [restarts=8] [product_max=128]
 *                            [PETSc options...] */
#include <math.h>
#include <petscsys.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "headfuse/approx.h"

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

int main(int argc, char **argv)
{
    if (argc < 4) {
        fprintf(stderr, "usage: bench_approx FAMILY A B [samples] [restarts] [product_max]\n");
        return 2;
    }
    /* positional arguments first, PETSc options after them */
    int npos = 1;
    while (npos < argc && argv[npos][0] != '-')
        npos++;
    MPI_Init(&argc, &argv);
    int pargc = 1 + argc - npos;
    char **pargv = calloc((size_t)pargc + 1, sizeof *pargv), **pav = pargv;
    pargv[0] = argv[0];
    for (int i = npos; i < argc; i++)
        pargv[1 + i - npos] = argv[i];
    PetscInitialize(&pargc, &pav, NULL, NULL);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);

    hf_target_t t;
    hf_target_init_empty(&t);
    if (hf_target_from_family(&t, argv[1]) != HF_OK) {
        fprintf(stderr, "%s\n", hf_error_msg());
        return 2;
    }
    hf_approx_opts_t o;
    hf_approx_opts_default(&o);
    o.m_lo = atoi(argv[2]);
    o.m_hi = atoi(argv[3]);
    if (npos > 4)
        o.samples = o.test_samples = atol(argv[4]);
    if (npos > 5)
        o.restarts = atol(argv[5]);
    if (npos > 6)
        o.product_max = atol(argv[6]);
    hf_approx_result_t r;
    hf_approx_result_init(&r);
    double t0 = MPI_Wtime();
    if (hf_approx_run(MPI_COMM_WORLD, &t, &o, &r) != HF_OK) {
        if (rank == 0)
            fprintf(stderr, "bench_approx: %s\n", hf_error_msg());
        return 1;
    }
    double wall = MPI_Wtime() - t0;
    if (rank == 0) {
        printf("# %s  m %d..%d  samples %ld  restarts %ld + warm  ranks %d  tao %s  exact head %ld "
               "(%s)  wall %.2f s\n",
               r.name, o.m_lo, o.m_hi, o.samples, o.restarts, size, r.tao_type, r.exact_atoms,
               r.exact_source, wall);
        printf("%4s %11s %11s %9s %8s %8s %8s %8s %9s %8s %-8s %s\n", "m", "train_rms", "test_rms",
               "budget_s", "solves", "mean_s", "median_s", "max_s", "mean_its", "rand_ok", "start",
               "status");
        double *secs = malloc((size_t)(r.nlog ? r.nlog : 1) * sizeof *secs);
        for (int i = 0; i < r.nrows; i++) {
            const hf_approx_row_t *row = r.rows + i;
            long n = 0, nrand = 0, ok = 0;
            double its = 0, sum = 0;
            for (long k = 0; k < r.nlog; k++) {
                const hf_approx_restart_t *e = r.log + k;
                if (e->m != row->m)
                    continue;
                secs[n++] = e->seconds;
                sum += e->seconds;
                its += (double)e->iterations;
                if (!strcmp(e->start, "random")) {
                    nrand++;
                    ok += e->train_mse <= 1.01 * row->train_mse ||
                          hf_approx_is_rounding(e->train_mse, r.target_rms);
                }
            }
            qsort(secs, (size_t)n, sizeof *secs, cmp_double);
            printf("%4d %11.3e %11.3e %9.3f %8ld %8.4f %8.4f %8.4f %9.1f %5ld/%-2ld %-8s %s\n",
                   row->m, sqrt(row->train_mse), sqrt(row->test_mse), row->seconds, n, sum / n,
                   secs[n / 2], secs[n - 1], its / n, ok, nrand, row->start, row->status);
        }
        free(secs);
    }
    hf_approx_result_clear(&r);
    hf_target_clear(&t);
    PetscFinalize();
    free(pargv);
    MPI_Finalize();
    return 0;
}
