/* Record a search's workload for the SMPI scaling bench (bench/scaling): the scheduler's
 * loop in one process (preparation, sizes in order, every unit, stop after the first size
 * with a feasible support), with the CPU time of each size's preparation and each unit, and
 * of their cells (search.h): a profile of each unit and sub-unit, the CPU time spent before
 * the cell it was at, every few milliseconds, so that the replay can run any range of cells
 * (the scheduler hands out ranges and steals from long ones).
 * CPU time, not wall time: the recording machine is shared, and a unit's cost must not
 * include the time other processes took from it.
 *   scaling_record FAMILY-SPEC|FILE.json SPAN ENGINE [MAX_ATOMS [K/N]] > workload.txt
 * With K/N only units u = K mod N are run (N recorders side by side; each prepares every
 * size, as every rank does); bench/scaling_merge.py joins their outputs.
 * Output (text, one line each):
 *   # comments (target, command, totals)
 *   prepare SECONDS                    one-time preparation (hf_search_prepare), all of it
 *   agree N                            its agreements without an exchange (the cone
 *                                      engine's double description agrees at every step)
 *   x ... / s ... / p ...              its rounds (the cone engine's large steps: one
 *                                      sub-unit each, cells as cone_steps.c makes them), as below
 *   size M NUNITS SECONDS              hf_search_level(M), all of it
 *   x NSUB BYTES SECONDS [PAIRS [SIGNS RAYS]]  one round of the split preparation of size M
 *                                      (hf_search_split_t): NSUB sub-units dealt to the
 *                                      ranks, then BYTES gathered from all of them;
 *                                      SECONDS: the whole round on one process, with the
 *                                      recorder's own timing (what the size's SECONDS
 *                                      holds besides its rounds runs on every rank);
 *                                      a cone step's PAIRS, the CPU SECONDS of its signs
 *                                      (within the preparation's, outside the round's)
 *                                      and the RAYS it starts from
 *   s SECONDS CELLS POLLS              NSUB lines: each sub-unit's cost, cells and calls of
 *                                      the poll hook, each followed by its profile
 *   u UNIT SECONDS NODES FOUND POLLS CELLS   one line per unit of the size above, in
 *                                      order, followed by its profile; POLLS: calls of the
 *                                      poll hook (rank 0 answers requests there)
 *   p CELL SECONDS                     profile point: SECONDS of CPU spent before the unit
 *                                      (or sub-unit) above started cell CELL (one every
 *                                      HF_RECORD_SAMPLE seconds of it)
 *   end M_STAR UNITS TOTAL_SECONDS
 * Older recordings have no cells and no profiles (s SECONDS; u ... POLLS, or without
 * POLLS): their units are one cell. Every rank runs the rest of a size's preparation
 * (SECONDS minus its sub-units). The recorder prepares through a split of one process,
 * which only times the sub-units. Its exchanges copy the bytes to itself, a stand-in for
 * their receipt, which the replay charges as their transfer: those copies (and the
 * exchanges' bookkeeping) are left out of every SECONDS, and a comment gives their total. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "headfuse/control.h"
#include "headfuse/core.h"
#include "headfuse/search.h"
#include "search/cone_impl.h"

/* Profile points every this many seconds of a unit (of wall time, read cheaply; the
 * point itself holds CPU time). */
#define HF_RECORD_SAMPLE 0.01

static hf_err_t on_found(void *ctx, const hf_found_t *f)
{
    (void)f;
    (*(long *)ctx)++;
    return HF_OK;
}

static double clock_seconds(clockid_t id)
{
    struct timespec ts;
    clock_gettime(id, &ts);
    return ts.tv_sec + 1e-9 * ts.tv_nsec;
}

static double cpu(void)
{
    return clock_seconds(CLOCK_PROCESS_CPUTIME_ID);
}
static double wall(void)
{
    return clock_seconds(CLOCK_MONOTONIC);
}

/* Text lines gathered before they are printed. */
typedef struct {
    char *text;
    long len, cap;
    int failed;
} text_t;

static void text_append(text_t *t, const char *str, size_t k)
{
    if (t->failed)
        return;
    if (HF_GROW(&t->text, &t->cap, t->len + (long)k + 1) != HF_OK) {
        t->failed = 1;
        return;
    }
    memcpy(t->text + t->len, str, k);
    t->len += (long)k;
    t->text[t->len] = 0;
}

static void text_add(text_t *t, const char *fmt, ...)
{
    char line[128];
    va_list ap;
    va_start(ap, fmt);
    int k = vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    if (k > 0 && (size_t)k < sizeof line)
        text_append(t, line, (size_t)k);
}

static void text_flush(text_t *t, FILE *f)
{
    if (t->len)
        fputs(t->text, f);
    t->len = 0;
}

/* A unit (or sub-unit) being timed: its poll calls and its profile. */
typedef struct {
    const hf_search_range_t *range;
    double cpu0, wall_next;
    long polls;
    int64_t last_cell;
    text_t prof; /* p lines */
} timer_t_;

static void timer_start(timer_t_ *t, const hf_search_range_t *range)
{
    t->range = range;
    t->polls = 0;
    t->last_cell = 0;
    t->cpu0 = cpu();
    t->wall_next = wall() + HF_RECORD_SAMPLE;
    t->prof.len = 0;
}

static int timer_poll(void *ctx)
{
    timer_t_ *t = ctx;
    t->polls++;
    if (wall() >= t->wall_next && t->range->pos > t->last_cell) {
        t->last_cell = t->range->pos;
        text_add(&t->prof, "p %lld %.6f\n", (long long)t->last_cell, cpu() - t->cpu0);
        t->wall_next = wall() + HF_RECORD_SAMPLE;
    }
    return 0;
}

/* The split preparation of one process, timed: each sub-unit's CPU seconds, cells, polls
 * and profile, and each exchange's bytes, printed after the size line. */
typedef struct {
    text_t subs; /* s and p lines since the last exchange */
    long nsub;
    double round_cpu; /* CPU seconds of the rounds since the last exchange */
    text_t out;       /* x, s and p lines of the size being prepared */
    long agrees;      /* agreements without an exchange (the one-time preparation's) */
    timer_t_ tm;
    const hf_search_t *search; /* the cone's figures: pairs of each dealt step */
    double pairs_seen;
    double round_pairs;
    double signs_seen; /* CPU seconds of the signs so far, and of this round's step */
    double round_signs;
    long round_rays; /* rays the step starts from */
    double own_cpu;  /* CPU seconds of the exchanges' own bookkeeping and copies */
} rec_t;

static hf_err_t rec_deal(void *ctx, hf_err_t status, long nunits, const int64_t *cells,
                         hf_search_deal_fn run, void *run_ctx)
{
    rec_t *r = ctx;
    double t0 = cpu();
    const hf_cone_info_t *ci = r->search ? hf_search_cone_info(r->search) : NULL;
    if (ci) { /* the step's pairs and signs (counted before it is dealt) */
        r->round_pairs = ci->pairs - r->pairs_seen;
        r->pairs_seen = ci->pairs;
        r->round_signs = ci->cpu_signs - r->signs_seen;
        r->signs_seen = ci->cpu_signs;
        r->round_rays = ci->step_rays;
    }
    for (long u = 0; status == HF_OK && u < nunits; u++) {
        hf_search_range_t range = {0, cells[u]};
        timer_start(&r->tm, &range);
        status = run(run_ctx, u, 0, &range, timer_poll, &r->tm);
        text_add(&r->subs, "s %.6f %lld %ld\n", cpu() - r->tm.cpu0, (long long)cells[u],
                 r->tm.polls);
        text_append(&r->subs, r->tm.prof.text ? r->tm.prof.text : "", r->tm.prof.len);
        r->nsub++;
    }
    r->round_cpu += cpu() - t0;
    return status;
}

static hf_err_t rec_allgather(void *ctx, hf_err_t status, const void *buf, size_t len, void **out,
                              size_t *outlen)
{
    rec_t *r = ctx;
    double t0 = cpu();
    if (!out && status == HF_OK)
        r->agrees++;
    if (!out || status != HF_OK) {
        if (out)
            *out = NULL;
        if (status != HF_OK) {
            r->subs.len = 0;
            r->nsub = 0;
            r->round_cpu = 0;
        }
        return status;
    }
    text_add(&r->out, "x %ld %ld %.6f %.0f %.6f %ld\n", r->nsub, (long)len, r->round_cpu,
             r->round_pairs, r->round_signs, r->round_rays);
    r->round_pairs = 0;
    r->round_cpu = 0;
    text_append(&r->out, r->subs.text ? r->subs.text : "", r->subs.len);
    r->subs.len = 0;
    r->nsub = 0;
    *outlen = len;
    if (!(*out = hf_malloc(len ? len : 1)))
        return HF_ERR_NOMEM;
    if (len)
        memcpy(*out, buf, len);
    /* the copy stands for the receipt of the gathered bytes, which the replay charges as
     * their transfer (replay_exchange): left out of the preparation's time, so that it is
     * not also charged as work every rank repeats */
    r->own_cpu += cpu() - t0;
    return HF_OK;
}

int main(int argc, char **argv)
{
    if (argc < 4) {
        fprintf(stderr, "usage: %s FAMILY-SPEC|FILE.json SPAN ENGINE [MAX_ATOMS [K/N]]\n", argv[0]);
        return 2;
    }
    /* the cone engine's knobs (control.h): HF_CONE_SPLIT_PAIRS_MIN=0 records every step */
    if (hf_control_from_env() != HF_OK) {
        fprintf(stderr, "%s: %s\n", argv[0], hf_error_msg());
        return 2;
    }
    hf_target_t t;
    hf_target_init_empty(&t); /* the loaders replace an initialised target (target.h) */
    hf_err_t err = strstr(argv[1], ".json") ? hf_target_load_json(&t, argv[1])
                                            : hf_target_from_family(&t, argv[1]);
    if (err != HF_OK) {
        fprintf(stderr, "%s: cannot read target %s\n", argv[0], argv[1]);
        return 1;
    }
    hf_engine_t engine;
    if (hf_engine_parse(argv[3], "engine", &engine) != HF_OK)
        return 2;
    hf_search_opts_t so = {
        .span = atoi(argv[2]), .max_atoms = argc > 4 ? atol(argv[4]) : 0, .engine = engine};
    long part = 0, nparts = 1;
    if (argc > 5 && (sscanf(argv[5], "%ld/%ld", &part, &nparts) != 2 || nparts < 1 || part < 0 ||
                     part >= nparts))
        return 2;
    hf_search_t *s = NULL;
    rec_t rec;
    memset(&rec, 0, sizeof rec);
    hf_search_split_t split = {0, 1, rec_allgather, rec_deal, &rec};
    if ((err = hf_search_check(&t, &so)) != HF_OK ||
        (err = hf_search_create(&t, &so, NULL, &s)) != HF_OK) {
        fprintf(stderr, "%s: cannot create the search\n", argv[0]);
        return 1;
    }
    rec.search = s;
    /* the one-time preparation through the split, as the scheduler runs it with several
     * ranks: the cone engine's double description deals its large steps (x rounds of one
     * sub-unit whose cells are the step's cells, cone_exchange.c) and agrees between steps */
    hf_search_set_split(s, &split);
    double t0 = cpu();
    if ((err = hf_search_prepare(s, NULL, NULL)) != HF_OK) {
        fprintf(stderr, "%s: cannot prepare the search\n", argv[0]);
        return 1;
    }
    printf("# headfuse scaling workload: CPU seconds of each size's preparation and each unit\n");
    printf("# recorded by: build/scaling_record");
    for (int i = 1; i < argc; i++)
        printf(" %s", argv[i]);
    printf("\n# engine %s, first size %ld, last size %ld\n", hf_engine_name(hf_search_engine(s)),
           hf_search_first_size(s), hf_search_last_size(s));
    double prep = cpu() - t0 - rec.own_cpu;
    if (rec.own_cpu > 0)
        printf("# the recorder's own copies of the exchanged bytes, left out: %.3f s\n",
               rec.own_cpu);
    const hf_cone_info_t *ci = hf_search_cone_info(s);
    if (ci) /* what of the preparation every rank repeats, by part (cone_impl.h) */
        printf("# cone steps, repeated on every rank: signs %.3f s, lists and index %.3f s, "
               "merge %.3f s, keep %.3f s (CPU, of %.3f s)\n",
               ci->cpu_signs, ci->cpu_lists, ci->cpu_merge, ci->cpu_keep, prep);
    printf("prepare %.6f\n", prep);
    if (rec.agrees)
        printf("agree %ld\n", rec.agrees);
    text_flush(&rec.out, stdout);
    timer_t_ tm;
    memset(&tm, 0, sizeof tm);
    long m_star = -1, units = 0;
    for (long m = hf_search_first_size(s); m <= hf_search_last_size(s); m++) {
        /* the sizes the scheduler skips (no candidates) are not recorded */
        if ((m = hf_search_next_size(s, m)) > hf_search_last_size(s))
            break;
        long nu = 0, found = 0;
        double t1 = cpu(), own1 = rec.own_cpu;
        if ((err = hf_search_level(s, m, &nu)) != HF_OK)
            break;
        printf("size %ld %ld %.6f\n", m, nu, cpu() - t1 - (rec.own_cpu - own1));
        if (rec.out.failed || rec.subs.failed) {
            fprintf(stderr, "%s: out of memory\n", argv[0]);
            return 1;
        }
        text_flush(&rec.out, stdout);
        for (long u = part; u < nu; u += nparts) {
            long nodes = 0, before = found;
            int64_t cells = 0;
            if ((err = hf_search_unit_cells(s, m, u, &cells)) != HF_OK)
                break;
            hf_search_range_t range = {0, cells};
            timer_start(&tm, &range);
            if ((err = hf_search_run_cells(s, m, u, 0, &range, on_found, &found, timer_poll, &tm,
                                           &nodes)) != HF_OK)
                break;
            printf("u %ld %.6f %ld %ld %ld %lld\n", u, cpu() - tm.cpu0, nodes, found - before,
                   tm.polls, (long long)cells);
            text_flush(&tm.prof, stdout);
            if (tm.prof.failed) {
                fprintf(stderr, "%s: out of memory\n", argv[0]);
                return 1;
            }
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
    printf("end %ld %ld %.6f\n", m_star, units, cpu() - t0 - rec.own_cpu);
    hf_search_destroy(&s);
    hf_target_clear(&t);
    free(rec.subs.text);
    free(rec.out.text);
    free(tm.prof.text);
    return err == HF_OK ? 0 : 1;
}
