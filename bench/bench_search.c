/* Benchmark: the pruned search against the plain enumerator on one target and span, in
 * one run: nodes (candidate supports), exact tests and seconds for each, and the speedup.
 *   bench_search [FAMILY-SPEC|FILE.json] [SPAN] [pruned]     (default: wd:d=3 2)
 * With "pruned" only the pruned search runs (for targets the plain one cannot finish). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "headfuse/search.h"
#include "search/search_impl.h"

typedef struct {
    long found;
} count_t;

static hf_err_t on_found(void *ctx, long m, const int64_t *keys, const hf_head_t *w)
{
    (void)m;
    (void)keys;
    (void)w;
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
    long m_star, found, nodes, units;
    hf_search_stats_t st;
    long face_tests;
    double seconds;
} result_t;

/* The scheduler's loop in one process: sizes in order, every unit, stop after the first
 * size with a feasible support. */
static hf_err_t run(const hf_target_t *t, int span, int prune, result_t *r)
{
    hf_search_opts_t so = {.span = span, .prune = prune, .max_atoms = 0};
    hf_search_t *s = NULL;
    count_t c = {0};
    double t0 = now();
    memset(r, 0, sizeof *r);
    r->m_star = -1;
    HF_TRY(hf_search_create(t, &so, &s));
    hf_err_t err = HF_OK;
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
                    prune ? "pruned" : "plain", m, nu, r->nodes - before, t2 - t1, now() - t2);
        if (c.found) {
            r->m_star = m;
            break;
        }
    }
    r->found = c.found;
    hf_search_total_stats(s, &r->st, &r->face_tests);
    hf_search_destroy(&s);
    r->seconds = now() - t0;
    return err;
}

static void print(const char *name, const result_t *r)
{
    printf("%-7s m*=%ld supports=%ld units=%ld nodes=%ld exact_tests=%ld face_exact_tests=%ld "
           "face_rejections=%ld canonical_rejections=%ld seconds=%.3f\n",
           name, r->m_star, r->found, r->units, r->nodes, r->st.exact_tests, r->face_tests,
           r->st.face_rejections, r->st.canonical_rejections, r->seconds);
}

int main(int argc, char **argv)
{
    const char *spec = argc > 1 ? argv[1] : "wd:d=3";
    int span = argc > 2 ? atoi(argv[2]) : 2;
    hf_target_t t;
    result_t p, q;
    hf_err_t err =
        strstr(spec, ".json") ? hf_target_load_json(&t, spec) : hf_target_from_family(&t, spec);
    if (err != HF_OK) {
        fprintf(stderr, "bench_search: %s\n", hf_error_msg());
        return hf_err_exit_status(err);
    }
    int only = argc > 3 && !strcmp(argv[3], "pruned");
    printf("target %s span %d\n", t.name, span);
    if ((err = run(&t, span, 1, &p)) != HF_OK || (!only && (err = run(&t, span, 0, &q)) != HF_OK)) {
        fprintf(stderr, "bench_search: %s\n", hf_error_msg());
        hf_target_clear(&t);
        return hf_err_exit_status(err);
    }
    print("pruned", &p);
    if (only) {
        hf_target_clear(&t);
        return 0;
    }
    print("plain", &q);
    printf("speedup %.1fx (nodes ratio %.1f, exact-test ratio %.1f)%s\n",
           q.seconds / (p.seconds > 1e-9 ? p.seconds : 1e-9),
           (double)q.nodes / (p.nodes ? p.nodes : 1),
           (double)q.st.exact_tests / (p.st.exact_tests ? p.st.exact_tests : 1),
           p.m_star == q.m_star && p.found == q.found ? "" : "  MISMATCH");
    hf_target_clear(&t);
    return p.m_star == q.m_star && p.found == q.found ? 0 : 1;
}
