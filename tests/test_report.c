/* Tests of what the commands report, as library values (headfuse/report.h): the target
 * report (bounds, certificate, product head) and its plan at a span, the check of one key
 * set, a table's files and rows as text and JSON, the verification of stored witnesses,
 * a job's plans and the verdict of an approximation table. */
#include <math.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "headfuse/report.h"
#include "unit.h"

/* Family spec -> target, asserted. */
static void family(hf_target_t *t, const char *spec)
{
    hf_target_init_empty(t);
    CU_ASSERT_FATAL(hf_target_from_family(t, spec) == HF_OK);
}

/* Whether s begins with prefix. */
static int starts(const char *s, const char *prefix)
{
    return !strncmp(s, prefix, strlen(prefix));
}

/* The JSON text of j (released). */
static char *dumps(json_t *j)
{
    char *s = hf_json_dumps(j);
    json_decref(j);
    CU_ASSERT_FATAL(s != NULL);
    return s;
}

/* ------------------------------------------------------------------ target */

/* The target of a family spec and its report into t and r (both replaced), asserted. */
static void report(const char *spec, hf_target_t *t, hf_report_target_t *r)
{
    CU_ASSERT_FATAL(hf_target_from_family(t, spec) == HF_OK);
    CU_ASSERT_FATAL(hf_report_target(t, r) == HF_OK);
}

/* chain:d=3: LB = UB = 24 by the three-dimensional argument, the product head of 24 atoms
 * built and verified; then the same report replaced by wd:d=2's. */
static void test_target_chain3(void)
{
    hf_target_t t;
    hf_target_init_empty(&t);
    hf_report_target_t r;
    hf_report_target_init(&r);
    report("chain:d=3", &t, &r);
    CU_ASSERT(fmpz_equal_si(r.lb, 24));
    CU_ASSERT_STRING_EQUAL(r.lb_rule, "newton_3d");
    CU_ASSERT(fmpz_equal_si(r.ub, 24));
    /* the bounds' LB alone is below UB: the certificate proves m* */
    CU_ASSERT(r.ub_exact && !r.lb_ub && r.certified && fmpz_cmp(r.low.lb, r.ub) < 0);
    CU_ASSERT(r.cert.certified && r.cert.m_star == 24 && r.cert.dim == 3);
    CU_ASSERT(r.product && r.product_head.natoms == 24 && r.product_head.d == 3);
    CU_ASSERT(r.product_err < 1e-12);
    CU_ASSERT(r.fraction_bytes > 0);
    char *s = dumps(hf_report_target_json(&t, &r));
    CU_ASSERT(strstr(s, "\"lb\":24,\"lb_rule\":\"newton_3d\"") != NULL);
    CU_ASSERT(strstr(s, "\"certified\":true,\"m_star_certified\":24") != NULL);
    CU_ASSERT(strstr(s, "\"product_head\":{\"atoms\":24,\"verified\":true") != NULL);
    free(s);

    /* a second report into the same value replaces it */
    report("wd:d=2", &t, &r);
    CU_ASSERT(fmpz_equal_si(r.lb, 4) && fmpz_equal_si(r.ub, 4) && r.certified);
    CU_ASSERT(r.product && r.product_head.natoms == 4 && r.product_head.d == 2);
    hf_report_target_clear(&r);
    CU_ASSERT(!r.product && r.product_head.natoms == 0);
    hf_target_clear(&t);
}

/* chain:d=4: nothing certifies m* (69 <= m* <= 82); wd:d=53: UB = 2^53, no product head,
 * and lb and ub as decimal strings in JSON from 2^53 on. */
static void test_target_open_and_large(void)
{
    hf_target_t t;
    hf_target_init_empty(&t);
    hf_report_target_t r;
    hf_report_target_init(&r);
    report("chain:d=4", &t, &r);
    CU_ASSERT(fmpz_equal_si(r.lb, 69) && fmpz_equal_si(r.ub, 82));
    CU_ASSERT(!r.certified && !r.lb_ub && !r.cert.certified);
    CU_ASSERT(r.product && r.product_head.natoms == 82);
    char *s = dumps(hf_report_target_json(&t, &r));
    CU_ASSERT(strstr(s, "\"certified\":false,\"m_star_certified\":null") != NULL);
    free(s);

    report("wd:d=53", &t, &r);
    CU_ASSERT(r.ub_exact && r.certified && !r.product);
    CU_ASSERT(fmpz_bits(r.ub) == 54); /* 2^53 */
    s = dumps(hf_report_target_json(&t, &r));
    CU_ASSERT(strstr(s, "\"lb\":\"9007199254740992\"") != NULL);
    CU_ASSERT(strstr(s, "\"product_head\":null") != NULL);
    free(s);
    hf_report_target_clear(&r);
    hf_target_clear(&t);
}

/* The plan at a span: a search (chain:d=3 at span 3, the cone), a row no support fits
 * (span 1), and a box too large to build (refused, not an error). */
static void test_target_span(void)
{
    hf_target_t t;
    family(&t, "chain:d=3");
    hf_report_span_opts_t o = {.span = 3, .ranks = 1, .nodes = 1, .max_memory = "4G"};
    hf_report_span_t sp;
    CU_ASSERT_FATAL(hf_report_span(&t, &o, &sp) == HF_OK);
    CU_ASSERT(sp.refused == HF_OK && sp.shortcut == 0 && sp.fits);
    CU_ASSERT(sp.plan.engine == HF_ENGINE_CONE && sp.plan.mem.total > 0);
    CU_ASSERT_EQUAL(sp.lim.bytes, 4.0 * (1 << 30));
    char *s = dumps(hf_report_span_json(&sp));
    CU_ASSERT(starts(s, "{\"span\":3,\"search\":true,\"bytes\":"));
    CU_ASSERT(strstr(s, "\"plan\":{\"engine\":\"cone\"") != NULL);
    free(s);

    o.span = 1;
    CU_ASSERT_FATAL(hf_report_span(&t, &o, &sp) == HF_OK);
    CU_ASSERT(sp.refused == HF_OK && sp.shortcut == 2);
    hf_target_clear(&t);

    family(&t, "chain:d=12");
    o.span = 6;
    o.max_memory = "1M";
    CU_ASSERT_FATAL(hf_report_span(&t, &o, &sp) == HF_OK);
    CU_ASSERT(sp.refused == HF_ERR_INPUT && strstr(sp.why, "box {0..6}^12") != NULL);
    s = dumps(hf_report_span_json(&sp));
    CU_ASSERT(strstr(s, "\"search\":false,\"refused\":\"span: box") != NULL);
    CU_ASSERT(strstr(s, "\"plan\"") == NULL);
    free(s);
    hf_target_clear(&t);
}

/* ------------------------------------------------------------------ check */

/* The product support of W_2, {0,1}^2. */
static const int64_t w2_keys[8] = {0, 0, 1, 0, 0, 1, 1, 1};

/* W_2 into t, and the check of its first m product keys (from the end when m < 4) into r;
 * t and r are initialised by the caller and replaced. */
static void check_w2(hf_target_t *t, long m, hf_report_check_t *r)
{
    CU_ASSERT_FATAL(hf_target_from_family(t, "wd:d=2") == HF_OK);
    CU_ASSERT_FATAL(hf_report_check(t, m, w2_keys + 2 * (4 - m), r) == HF_OK);
}

/* W_2's product support is feasible (weights equal, values the number of ones); without
 * one key it is not, and that is an outcome, not an error. */
static void test_check(void)
{
    hf_target_t t;
    hf_target_init_empty(&t);
    hf_report_check_t r;
    hf_report_check_init(&r);
    check_w2(&t, 4, &r);
    CU_ASSERT(r.feasible && r.m == 4 && r.witness.natoms == 4);
    CU_ASSERT(r.err < 1e-12);
    for (long i = 0; i < 4; i++) {
        CU_ASSERT(fmpq_equal(r.witness.weights + i, r.witness.weights));
        CU_ASSERT(fmpz_equal_si(fmpq_numref(r.witness.values + i),
                                r.witness.keys[2 * i] + r.witness.keys[2 * i + 1]));
    }
    char *s = dumps(hf_report_check_json(&t, &r));
    CU_ASSERT(strstr(s, "\"m\":4,\"feasible\":true") != NULL);
    CU_ASSERT(strstr(s, "\"values\":[\"0\",\"1\",\"1\",\"2\"]") != NULL);
    free(s);

    /* the same value, replaced: three keys carry no head equal to W_2 */
    check_w2(&t, 3, &r);
    CU_ASSERT(!r.feasible && r.m == 3);
    s = dumps(hf_report_check_json(&t, &r));
    CU_ASSERT(strstr(s, "\"feasible\":false") != NULL && strstr(s, "witness") == NULL);
    free(s);
    hf_report_check_clear(&r);
    hf_target_clear(&t);
}

/* ------------------------------------------------------------------ table */

#define FORMAT2 "tests/fixtures/results/format2.h5"

/* A missing file is skipped while another exists; none existing, every file is kept. */
static void test_table_files(void)
{
    const char *paths[] = {"no-such.h5", FORMAT2, "no-such-either.h5"};
    hf_report_table_t tab;
    hf_report_table_init(&tab);
    CU_ASSERT_FATAL(hf_report_table(paths, 3, &tab) == HF_OK);
    CU_ASSERT(tab.n == 1 && tab.nmissing == 2 && !strcmp(tab.paths[0], FORMAT2));
    CU_ASSERT(!strcmp(tab.missing[1], "no-such-either.h5") && !tab.missing_shards[1]);
    CU_ASSERT_FATAL(hf_report_table_read(&tab) == HF_OK);
    CU_ASSERT(tab.napprox == 0 && tab.nread == 1 && tab.res[0].nrows == 2);

    CU_ASSERT_FATAL(hf_report_table(paths, 1, &tab) == HF_OK);
    CU_ASSERT(tab.n == 1 && tab.nmissing == 0 && tab.res == NULL);
    CU_ASSERT(hf_report_table_read(&tab) != HF_OK); /* the reader names the file */
    CU_ASSERT(strstr(hf_error_msg(), "no-such.h5") != NULL);
    hf_report_table_clear(&tab);
}

/* The rows of format2.h5 as table fields, JSON and supports: wd:d=2 (m* 4, one support)
 * and wd:d=64 (certified at 2^64, m* unknown to format 2). */
static void test_table_rows(void)
{
    const char *paths[] = {FORMAT2};
    hf_report_table_t tab;
    hf_report_table_init(&tab);
    CU_ASSERT_FATAL(hf_report_table(paths, 1, &tab) == HF_OK);
    CU_ASSERT_FATAL(hf_report_table_read(&tab) == HF_OK);
    const hf_result_t *res = tab.res;
    char buf[HF_BIGINT_LEN];
    CU_ASSERT_STRING_EQUAL(hf_report_row_fields[HF_FIELD_GROUP_ORDER], "group_order");
    CU_ASSERT_STRING_EQUAL(hf_report_row_field(res->rows, HF_FIELD_M_STAR, buf, sizeof buf), "4");
    CU_ASSERT_STRING_EQUAL(hf_report_row_field(res->rows, HF_FIELD_SPAN, buf, sizeof buf), "1");
    CU_ASSERT_STRING_EQUAL(hf_report_row_field(res->rows + 1, HF_FIELD_M_STAR, buf, sizeof buf),
                           "");
    CU_ASSERT_STRING_EQUAL(hf_report_row_field(res->rows + 1, HF_FIELD_UB, buf, sizeof buf),
                           "18446744073709551616");
    CU_ASSERT_STRING_EQUAL(hf_report_row_upper(res->rows, buf), "4");
    CU_ASSERT_STRING_EQUAL(hf_report_row_upper(res->rows + 1, buf), "18446744073709551616");

    char *keys = hf_report_supports_text(&res->supports[0]);
    CU_ASSERT_FATAL(keys != NULL);
    CU_ASSERT_STRING_EQUAL(keys, "0,0;0,1;1,0;1,1");
    free(keys);
    json_t *o = hf_report_row_json(res->rows);
    hf_report_supports_json(o, &res->supports[0]);
    char *s = dumps(o);
    CU_ASSERT(starts(s, "{\"name\":\"wd:d=2\",\"d\":2,\"span\":1,\"m_star\":4,\"lb\":4,"));
    CU_ASSERT(strstr(s, "\"supports\":[[[0,0],[0,1],[1,0],[1,1]]],\"witnesses\":[{") != NULL);
    free(s);
    s = dumps(hf_report_row_json(res->rows + 1));
    CU_ASSERT(strstr(s, "\"m_star\":null,\"lb\":\"18446744073709551616\"") != NULL);
    free(s);
    hf_report_table_clear(&tab);
}

/* Integers of any size: bare digits in the text, strings kept as they are. */
static void test_json_integers(void)
{
    json_t *a = json_array();
    json_array_append_new(a, hf_json_decimal("18446744073709551616"));
    json_array_append_new(a, hf_json_decimal("12"));
    json_array_append_new(a, hf_json_decimal("-1"));
    json_array_append_new(a, hf_json_decimal("1e5"));
    json_array_append_new(a, json_string("\001hf-int:5 is text"));
    char *s = dumps(a);
    CU_ASSERT_STRING_EQUAL(s, "[18446744073709551616,12,null,\"1e5\",\"\\u0001hf-int:5 is text\"]");
    free(s);
}

/* ------------------------------------------------------------------ verify */

typedef struct {
    long nfailed, failed_j, rows, bad;
} seen_t;

static void on_failed(void *ctx, const hf_result_t *r, long i, long j, const char *why)
{
    (void)r, (void)i, (void)why;
    seen_t *s = ctx;
    s->nfailed++;
    s->failed_j = j;
}

static void on_row(void *ctx, const hf_result_t *r, long i, long bad, double maxerr)
{
    (void)r, (void)i, (void)maxerr;
    seen_t *s = ctx;
    s->rows++;
    s->bad += bad;
}

/* W_2's product witness verifies; the same with one weight doubled fails, reported as
 * support 1 of the row. */
static void test_verify(void)
{
    hf_target_t t;
    hf_target_init_empty(&t);
    hf_report_check_t c;
    hf_report_check_init(&c);
    check_w2(&t, 4, &c);
    CU_ASSERT_FATAL(c.feasible);
    hf_supports_t sup;
    hf_supports_init(&sup, 4, 2, 1);
    CU_ASSERT_FATAL(hf_supports_push_head(&sup, &c.witness) == HF_OK);
    fmpq_mul_si(c.witness.weights, c.witness.weights, 2);
    CU_ASSERT_FATAL(hf_supports_push_head(&sup, &c.witness) == HF_OK);
    hf_row_t row;
    memset(&row, 0, sizeof row);
    snprintf(row.name, sizeof row.name, "wd:d=2");
    row.d = 2, row.span = 1, row.m_star = 4, row.n_min_raw = 2, row.n_min_sym = 1;
    snprintf(row.lb, sizeof row.lb, "4");
    snprintf(row.ub, sizeof row.ub, "4");
    snprintf(row.status, sizeof row.status, "certified");
    snprintf(row.engine, sizeof row.engine, "cone");
    snprintf(row.lb_rule, sizeof row.lb_rule, "newton_vertices");
    snprintf(row.m_star_dec, sizeof row.m_star_dec, "4");
    char *tj = hf_target_to_json(&t);
    hf_result_t res;
    hf_result_init(&res);
    CU_ASSERT_FATAL(tj && hf_result_add_row(&res, &row, &sup, tj) == HF_OK);
    char path[] = "/tmp/hf_report_XXXXXX";
    int fd = mkstemp(path);
    CU_ASSERT_FATAL(fd >= 0);
    close(fd);
    CU_ASSERT_FATAL(hf_result_write(path, &res) == HF_OK);

    seen_t seen = {0};
    hf_report_verify_fns_t fns = {on_failed, on_row, &seen};
    long failed = -1;
    CU_ASSERT(hf_report_verify(MPI_COMM_SELF, path, &fns, &failed) == HF_OK);
    CU_ASSERT(failed == 1 && seen.nfailed == 1 && seen.failed_j == 1);
    CU_ASSERT(seen.rows == 1 && seen.bad == 1);
    CU_ASSERT(hf_report_verify(MPI_COMM_SELF, FORMAT2, NULL, &failed) == HF_OK && failed == 0);
    unlink(path);
    hf_result_clear(&res);
    free(tj);
    hf_supports_clear(&sup);
    hf_report_check_clear(&c);
    hf_target_clear(&t);
}

/* ------------------------------------------------------------------ run --list */

/* A job of one entry (wdw:d=2 at span 1) planned for 4 ranks on 2 nodes. */
static void test_job(void)
{
    hf_report_job_t r;
    hf_report_job_init(&r);
    CU_ASSERT_FATAL(hf_report_job("tests/fixtures/jobs/good/minimal.yaml", "/tmp/m.h5", "4G", "64G",
                                  4, 2, &r) == HF_OK);
    CU_ASSERT(r.job.nentries == 1 && r.lim.ranks == 4 && r.lim.node_ranks == 2);
    CU_ASSERT(r.big == (r.plan[0].mem.total > 0 ? 0 : -1));
    char *s = dumps(hf_report_job_json(&r));
    CU_ASSERT(strstr(s, "\"output\":\"/tmp/m.h5\",\"max_memory_bytes\":4294967296") != NULL);
    CU_ASSERT(strstr(s, "\"entries\":[{\"index\":0,\"target\":\"wdw:d=2\",\"span\":1") != NULL);
    free(s);
    /* a failed call keeps the value */
    CU_ASSERT(hf_report_job("no-such.yaml", NULL, NULL, NULL, 1, 1, &r) != HF_OK);
    CU_ASSERT(r.job.nentries == 1 && r.lim.ranks == 4);
    hf_report_job_clear(&r);
    CU_ASSERT(r.plan == NULL && r.big == -1);
}

/* ------------------------------------------------------------------ approx */

/* A table in r (rows[8] its rows, exact_atoms exact, nothing to clear) from the statuses
 * of its rows m = m0.. ('r': rounding level, else approx); p with the lower bound lb. */
static void approx_table(hf_approx_result_t *r, hf_approx_row_t *rows, hf_approx_prov_t *p,
                         const char *statuses, int m0, long exact, const char *lb)
{
    memset(rows, 0, 8 * sizeof *rows);
    memset(r, 0, sizeof *r);
    memset(p, 0, sizeof *p);
    r->rows = rows;
    r->exact_atoms = exact;
    for (; statuses[r->nrows]; r->nrows++) {
        rows[r->nrows].m = m0 + r->nrows;
        snprintf(rows[r->nrows].status, sizeof rows[r->nrows].status, "%s",
                 statuses[r->nrows] == 'r' ? "rounding" : "approx");
    }
    p->lower_bound = (char *)lb;
}

/* The verdict of such a table, and m. */
static hf_approx_verdict_t verdict(const char *statuses, int m0, long exact, const char *lb, int *m)
{
    hf_approx_row_t rows[8];
    hf_approx_result_t r;
    hf_approx_prov_t p;
    approx_table(&r, rows, &p, statuses, m0, exact, lb);
    return hf_report_approx_verdict(&r, &p, m);
}

static void test_approx_verdict(void)
{
    int m;
    CU_ASSERT(verdict("aa", 1, 4, "4", &m) == HF_VERDICT_NONE && m == 0);
    CU_ASSERT(verdict("aaar", 1, 4, "4", &m) == HF_VERDICT_CONFIRMED && m == 4);
    CU_ASSERT(verdict("aar", 2, 4, "3", &m) == HF_VERDICT_AT_EXACT && m == 4);
    CU_ASSERT(verdict("ar", 1, 4, "1", &m) == HF_VERDICT_BELOW && m == 2);
    CU_ASSERT(verdict("aar", 1, -1, "3", &m) == HF_VERDICT_AT_LB && m == 3);
    /* rounding at the first budget above 1 says nothing of the sizes below it */
    CU_ASSERT(verdict("rr", 4, 4, "4", &m) == HF_VERDICT_IN_RANGE && m == 4);
    CU_ASSERT(verdict("ar", 1, -1, NULL, &m) == HF_VERDICT_IN_RANGE && m == 2);
}

/* The table as JSON: errors that are not finite are null, the RMS is the root. */
static void test_approx_json(void)
{
    hf_approx_row_t rows[8];
    hf_approx_result_t r;
    hf_approx_prov_t p;
    approx_table(&r, rows, &p, "ar", 1, -1, "2");
    r.name = "wd:d=2";
    rows[0].train_mse = 4.0, rows[0].test_mse = NAN;
    p.ranks = 2;
    char *s = dumps(hf_report_approx_row_json(&r, rows, "x.h5"));
    CU_ASSERT(starts(s,
                     "{\"file\":\"x.h5\",\"name\":\"wd:d=2\",\"d\":0,\"m\":1,"
                     "\"train_mse\":4.0,\"test_mse\":null,\"train_rms\":2.0,\"test_rms\":null,"));
    free(s);
    s = dumps(hf_report_approx_json(&r, &p, NULL));
    CU_ASSERT(strstr(s, "\"exact_atoms\":null,\"exact_source\":\"\",\"lower_bound\":\"2\","
                        "\"ranks\":2,\"rows\":[{\"name\"") != NULL);
    CU_ASSERT(strstr(s, "\"status\":\"rounding\"") != NULL && strstr(s, "file") == NULL);
    free(s);
}

static void mpi_end(void)
{
    MPI_Finalize();
}

int hf_register_tests(void)
{
    static const hf_unit_case_t target[] = {
        {"chain:d=3 certified, product head verified", test_target_chain3},
        {"open bounds, and 2^53", test_target_open_and_large},
        {"the plan at a span", test_target_span},
        {NULL, NULL}};
    static const hf_unit_case_t check[] = {{"a witness and an infeasible support", test_check},
                                           {NULL, NULL}};
    static const hf_unit_case_t table[] = {{"missing files skipped", test_table_files},
                                           {"rows as fields, JSON and supports", test_table_rows},
                                           {"integers of any size in JSON", test_json_integers},
                                           {NULL, NULL}};
    static const hf_unit_case_t other[] = {{"verify: a wrong witness is named", test_verify},
                                           {"run --list: a job planned", test_job},
                                           {"approx: the verdict", test_approx_verdict},
                                           {"approx: the table as JSON", test_approx_json},
                                           {NULL, NULL}};
    /* hf_report_verify takes a communicator: MPI as a singleton, ended at exit */
    if (MPI_Init(NULL, NULL) != MPI_SUCCESS || atexit(mpi_end) != 0)
        return -1;
    return hf_unit_suite("target", target) || hf_unit_suite("check", check) ||
                   hf_unit_suite("table", table) || hf_unit_suite("verify, job, approx", other)
               ? -1
               : 0;
}
