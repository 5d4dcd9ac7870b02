/* Record a search's workload for the SMPI scaling bench (bench/scaling): the scheduler's
 * loop in one process (preparation, sizes in order, every unit, stop after the first size
 * with a feasible support), with the CPU time of each size's preparation and each unit.
 * CPU time, not wall time: the recording machine is shared, and a unit's cost must not
 * include the time other processes took from it.
 *   scaling_record FAMILY-SPEC|FILE.json SPAN ENGINE [MAX_ATOMS [K/N]] > workload.txt
 * With K/N only units u = K mod N are run (N recorders side by side; each prepares every
 * size, as every rank does); bench/scaling_merge.py joins their outputs.
 * Output (text, one line each):
 *   # comments (target, command, totals)
 *   prepare SECONDS                    one-time preparation (hf_search_prepare)
 *   size M NUNITS SECONDS              hf_search_level(M): run by every rank
 *   u UNIT SECONDS NODES FOUND         one line per unit of the size above, in order
 *   end M_STAR UNITS TOTAL_SECONDS */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "headfuse/search.h"

static hf_err_t on_found(void *ctx, long m, const int64_t *keys, const hf_head_t *w)
{
    (void)m;
    (void)keys;
    (void)w;
    (*(long *)ctx)++;
    return HF_OK;
}

static double cpu(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return ts.tv_sec + 1e-9 * ts.tv_nsec;
}

int main(int argc, char **argv)
{
    if (argc < 4) {
        fprintf(stderr, "usage: %s FAMILY-SPEC|FILE.json SPAN ENGINE [MAX_ATOMS [K/N]]\n", argv[0]);
        return 2;
    }
    hf_target_t t;
    hf_err_t err = strstr(argv[1], ".json") ? hf_target_load_json(&t, argv[1])
                                            : hf_target_from_family(&t, argv[1]);
    if (err != HF_OK) {
        fprintf(stderr, "%s: cannot read target %s\n", argv[0], argv[1]);
        return 1;
    }
    hf_engine_t engine;
    if (hf_engine_parse(argv[3], "engine", &engine) != HF_OK)
        return 2;
    hf_search_opts_t so = {.span = atoi(argv[2]),
                           .prune = engine != HF_ENGINE_PLAIN,
                           .max_atoms = argc > 4 ? atol(argv[4]) : 0,
                           .engine = engine == HF_ENGINE_PLAIN ? HF_ENGINE_AUTO : engine};
    long part = 0, nparts = 1;
    if (argc > 5 && (sscanf(argv[5], "%ld/%ld", &part, &nparts) != 2 || nparts < 1 || part < 0 ||
                     part >= nparts))
        return 2;
    hf_search_t *s = NULL;
    double t0 = cpu();
    if ((err = hf_search_create(&t, &so, &s)) != HF_OK ||
        (err = hf_search_prepare(s, NULL, NULL)) != HF_OK) {
        fprintf(stderr, "%s: cannot prepare the search\n", argv[0]);
        return 1;
    }
    printf("# headfuse scaling workload: CPU seconds of each size's preparation and each unit\n");
    printf("# recorded by: build/scaling_record");
    for (int i = 1; i < argc; i++)
        printf(" %s", argv[i]);
    printf("\n# engine %s, first size %ld, last size %ld\n", hf_engine_name(hf_search_engine(s)),
           hf_search_first_size(s), hf_search_last_size(s));
    printf("prepare %.6f\n", cpu() - t0);
    long m_star = -1, units = 0;
    for (long m = hf_search_first_size(s); m <= hf_search_last_size(s); m++) {
        long nu = 0, found = 0;
        double t1 = cpu();
        if ((err = hf_search_level(s, m, &nu)) != HF_OK)
            break;
        printf("size %ld %ld %.6f\n", m, nu, cpu() - t1);
        for (long u = part; u < nu; u += nparts) {
            long nodes = 0, before = found;
            double t2 = cpu();
            if ((err = hf_search_run_unit(s, m, u, on_found, &found, NULL, NULL, &nodes)) != HF_OK)
                break;
            printf("u %ld %.6f %ld %ld\n", u, cpu() - t2, nodes, found - before);
        }
        fflush(stdout);
        units += nu;
        if (err != HF_OK)
            break;
        fprintf(stderr, "m=%ld: %ld units, %ld feasible, %.1f s CPU so far\n", m, nu, found,
                cpu() - t0);
        if (found) {
            m_star = m;
            break;
        }
    }
    printf("end %ld %ld %.6f\n", m_star, units, cpu() - t0);
    hf_search_destroy(&s);
    hf_target_clear(&t);
    return err == HF_OK ? 0 : 1;
}
