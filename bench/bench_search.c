/* Benchmark: search engines against each other on one target and span, in one run:
 * nodes (candidate supports), exact tests and seconds for each, and ratios against the
 * first engine, which must agree with every other one on m* and the supports found.
 *   bench_search [FAMILY-SPEC|FILE.json] [SPAN] [ENGINES]   (default: wd:d=3 2 layered,plain)
 * ENGINES is a comma list of cone, layered, plain, auto; "pruned" means layered alone. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "headfuse/search.h"
#include "search/cone_impl.h"

typedef struct {
    long found;
} count_t;

static hf_err_t on_found(void *ctx, const hf_found_t *f)
{
    (void)f;
    ((count_t *)ctx)->found++;
    return HF_OK;
}

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + 1e-9 * ts.tv_nsec;
}

typedef struct {
    long m_star, found, nodes, units, first;
    hf_search_stats_t st;
    long face_tests;
    double prep, seconds;
    hf_engine_t used;
    hf_cone_info_t cone;
    int have_cone;
} result_t;

/* The scheduler's loop in one process: preparation, sizes in order, every unit, stop after
 * the first size with a feasible support. */
static hf_err_t run(const hf_target_t *t, int span, hf_engine_t engine, result_t *r)
{
    hf_search_opts_t so = {.span = span, .max_atoms = 0, .engine = engine};
    hf_search_t *s = NULL;
    count_t c = {0};
    double t0 = now();
    memset(r, 0, sizeof *r);
    r->m_star = -1;
    HF_TRY(hf_search_check(t, &so));
    HF_TRY(hf_search_create(t, &so, NULL, &s));
    r->used = hf_search_engine(s);
    r->first = hf_search_first_size(s);
    hf_err_t err = hf_search_prepare(s, NULL, NULL);
    r->prep = now() - t0;
    int verbose = getenv("HF_BENCH_VERBOSE") != NULL;
    for (long m = hf_search_first_size(s); m <= hf_search_last_size(s) && err == HF_OK; m++) {
        long nu = 0, before = r->nodes;
        double t1 = now();
        err = hf_search_level(s, m, &nu);
        double t2 = now();
        r->units += nu;
        for (long u = 0; u < nu && err == HF_OK; u++) {
            long nodes = 0;
            err = hf_search_run_unit(s, m, u, on_found, &c, NULL, NULL, &nodes);
            r->nodes += nodes;
        }
        if (verbose)
            fprintf(stderr, "  %s m=%ld units=%ld nodes=%ld level %.3fs units %.3fs\n",
                    hf_engine_name(r->used), m, nu, r->nodes - before, t2 - t1, now() - t2);
        if (c.found) {
            r->m_star = m;
            break;
        }
    }
    r->found = c.found;
    hf_search_total_stats(s, &r->st, &r->face_tests);
    const hf_cone_info_t *ci = hf_search_cone_info(s);
    if (ci) {
        r->cone = *ci;
        r->have_cone = 1;
    }
    hf_search_destroy(&s);
    r->seconds = now() - t0;
    return err;
}

static void print(const result_t *r)
{
    printf("%-7s first=%ld m*=%ld supports=%ld units=%ld nodes=%ld exact_tests=%ld "
           "face_exact_tests=%ld face_rejections=%ld canonical_rejections=%ld prepare=%.3f "
           "seconds=%.3f\n",
           hf_engine_name(r->used), r->first, r->m_star, r->found, r->units, r->nodes,
           r->st.exact_tests, r->face_tests, r->st.face_rejections, r->st.canonical_rejections,
           r->prep, r->seconds);
    if (r->have_cone)
        printf("        cone: unknowns=%ld rows=%ld hyperplanes=%ld rays=%ld rays_max=%ld "
               "adjacencies=%ld\n",
               r->cone.unknowns, r->cone.rows, r->cone.hyperplanes, r->cone.rays, r->cone.rays_max,
               r->cone.adjacencies);
}

int main(int argc, char **argv)
{
    const char *spec = argc > 1 ? argv[1] : "wd:d=3";
    int span = argc > 2 ? atoi(argv[2]) : 2;
    char list[256];
    snprintf(list, sizeof list, "%s", argc > 3 ? argv[3] : "layered,plain");
    if (!strcmp(list, "pruned"))
        snprintf(list, sizeof list, "layered");
    hf_target_t t;
    hf_target_init_empty(&t);
    hf_err_t err =
        strstr(spec, ".json") ? hf_target_load_json(&t, spec) : hf_target_from_family(&t, spec);
    if (err != HF_OK) {
        fprintf(stderr, "bench_search: %s\n", hf_error_msg());
        return hf_err_exit_status(err);
    }
    printf("target %s span %d\n", t.name, span);
    result_t res[8];
    int nres = 0, status = 0;
    for (char *tok = strtok(list, ","); tok && nres < 8; tok = strtok(NULL, ",")) {
        hf_engine_t e;
        if ((err = hf_engine_parse(tok, "engines", &e)) != HF_OK ||
            (err = run(&t, span, e, &res[nres])) != HF_OK) {
            fprintf(stderr, "bench_search: %s\n", hf_error_msg());
            hf_target_clear(&t);
            return hf_err_exit_status(err);
        }
        print(&res[nres++]);
    }
    for (int i = 1; i < nres; i++) {
        const result_t *a = &res[0], *b = &res[i];
        int same = a->m_star == b->m_star && a->found == b->found;
        printf("%s/%s: time %.1fx, nodes %.1fx, exact tests %.1fx%s\n", hf_engine_name(b->used),
               hf_engine_name(a->used), b->seconds / (a->seconds > 1e-9 ? a->seconds : 1e-9),
               (double)b->nodes / (a->nodes ? a->nodes : 1),
               (double)b->st.exact_tests / (a->st.exact_tests ? a->st.exact_tests : 1),
               same ? "" : "  MISMATCH");
        if (!same)
            status = 1;
    }
    hf_target_clear(&t);
    return status;
}
