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
 *   size M NUNITS SECONDS              hf_search_level(M), all of it
 *   x NSUB BYTES                       one exchange of the split preparation of size M
 *                                      (hf_search_split_t): NSUB sub-units, split across
 *                                      the ranks, then BYTES gathered from all of them
 *   s SECONDS                          NSUB lines: each sub-unit's cost, in order
 *   u UNIT SECONDS NODES FOUND POLLS   one line per unit of the size above, in order;
 *                                      POLLS: calls of the poll hook (rank 0 answers
 *                                      requests there), absent in older recordings
 *   end M_STAR UNITS TOTAL_SECONDS
 * Every rank runs the rest of a size's preparation (SECONDS minus its sub-units). The
 * recorder prepares through a split of one process, which only times the sub-units. */
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

static int count_poll(void *ctx)
{
    (*(long *)ctx)++;
    return 0;
}

static double cpu(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return ts.tv_sec + 1e-9 * ts.tv_nsec;
}

/* The split preparation of one process, timed: each sub-unit's CPU seconds and each
 * exchange's bytes, printed after the size line. */
typedef struct {
    double t;  /* start of the open sub-unit, or < 0 */
    double *s; /* sub-units since the last exchange */
    long n, cap;
    char *text; /* x and s lines of the size being prepared */
    size_t len, textcap;
    int failed;
} rec_t;

static void rec_close(rec_t *r)
{
    if (r->t < 0)
        return;
    if (r->n == r->cap) {
        r->cap = r->cap ? 2 * r->cap : 1024;
        double *g = realloc(r->s, (size_t)r->cap * sizeof *g);
        if (!g) {
            r->failed = 1;
            r->n = 0;
        } else {
            r->s = g;
        }
    }
    if (r->n < r->cap)
        r->s[r->n++] = cpu() - r->t;
    r->t = -1;
}

static void rec_print(rec_t *r, const char *fmt, double v, long n)
{
    char line[64];
    int k =
        n >= 0 ? snprintf(line, sizeof line, fmt, n, (long)v) : snprintf(line, sizeof line, fmt, v);
    if (r->len + (size_t)k + 1 > r->textcap) {
        size_t cap = 2 * (r->textcap + (size_t)k + 1);
        char *g = realloc(r->text, cap);
        if (!g) {
            r->failed = 1;
            return;
        }
        r->text = g;
        r->textcap = cap;
    }
    memcpy(r->text + r->len, line, (size_t)k + 1);
    r->len += (size_t)k;
}

static void rec_sub_unit(void *ctx, long unit)
{
    (void)unit;
    rec_t *r = ctx;
    rec_close(r);
    r->t = cpu();
}

static hf_err_t rec_allgather(void *ctx, hf_err_t status, const void *buf, size_t len, void **out,
                              size_t *outlen)
{
    rec_t *r = ctx;
    rec_close(r);
    if (!out || status != HF_OK) {
        if (out)
            *out = NULL;
        if (status != HF_OK)
            r->n = 0;
        return status;
    }
    rec_print(r, "x %ld %ld\n", (double)len, r->n);
    for (long i = 0; i < r->n; i++)
        rec_print(r, "s %.6f\n", r->s[i], -1);
    r->n = 0;
    *outlen = len;
    if (!(*out = hf_malloc(len ? len : 1)))
        return HF_ERR_NOMEM;
    if (len)
        memcpy(*out, buf, len);
    return HF_OK;
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
    rec_t rec = {.t = -1};
    hf_search_split_t split = {0, 1, rec_allgather, rec_sub_unit, &rec};
    hf_search_set_split(s, &split);
    long m_star = -1, units = 0;
    for (long m = hf_search_first_size(s); m <= hf_search_last_size(s); m++) {
        long nu = 0, found = 0;
        double t1 = cpu();
        if ((err = hf_search_level(s, m, &nu)) != HF_OK)
            break;
        printf("size %ld %ld %.6f\n", m, nu, cpu() - t1);
        if (rec.failed) {
            fprintf(stderr, "%s: out of memory\n", argv[0]);
            return 1;
        }
        fputs(rec.text ? rec.text : "", stdout);
        rec.len = 0;
        if (rec.text)
            rec.text[0] = 0;
        for (long u = part; u < nu; u += nparts) {
            long nodes = 0, before = found, polls = 0;
            double t2 = cpu();
            if ((err = hf_search_run_unit(s, m, u, on_found, &found, count_poll, &polls, &nodes)) !=
                HF_OK)
                break;
            printf("u %ld %.6f %ld %ld %ld\n", u, cpu() - t2, nodes, found - before, polls);
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
    free(rec.s);
    free(rec.text);
    return err == HF_OK ? 0 : 1;
}
