/* Tests of the job module: a job file using every key expands into the expected flat
 * list; each bad fixture in tests/fixtures/jobs/bad fails with the file, line and key
 * its first line names ("# expect: LINE: KEY: words"); the --out override; allocation
 * failures at every step. Run from the source directory (CTest does). */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "headfuse/job.h"
#include "headfuse/search.h"
#include "unit.h"

#define GOOD "tests/fixtures/jobs/good"
#define BAD "tests/fixtures/jobs/bad"

/* ---------------------------------------------------------------- helpers */

typedef struct {
    const char *label;
    int span;
    long max_atoms;
    int prune; /* 0: the plain engine */
    int is_file;
} want_t;

static int entry_is(const hf_job_t *job, long i, const want_t *w)
{
    const hf_job_entry_t *e = job->entries + i;
    return !strcmp(e->label, w->label) && e->span == w->span && e->max_atoms == w->max_atoms &&
           hf_engine_prunes((hf_engine_t)e->engine) == w->prune &&
           (e->target_path != NULL) == w->is_file && (e->family != NULL) == !w->is_file;
}

/* ---------------------------------------------------------------- good files */

static void test_sweeps_expand(void)
{
    static const want_t want[] = {
        {"wd:d=1", 1, 0, 1, 0},        {"wd:d=1", 2, 0, 1, 0},
        {"wd:d=2", 1, 0, 1, 0},        {"wd:d=2", 2, 0, 1, 0},
        {"wd:d=3", 1, 0, 1, 0},        {"wd:d=3", 2, 0, 1, 0},
        {"multi:d=2,k=3", 2, 9, 1, 0}, {"multi:d=2,k=4", 2, 9, 1, 0},
        {"multi:d=3,k=3", 2, 9, 1, 0}, {"multi:d=3,k=4", 2, 9, 1, 0},
        {"chain:d=2", 2, 0, 0, 0},     {"fixture_pair", 1, 0, 1, 1},
        {"fixture_pair", 3, 0, 1, 1},  {"two_heads_shared", 2, 0, 1, 1},
    };
    long n = (long)(sizeof want / sizeof *want);
    hf_job_t job;
    hf_job_init(&job);
    hf_err_t e = hf_job_load(&job, GOOD "/sweeps.yaml", NULL);
    CU_ASSERT_EQUAL_FATAL(e, HF_OK);
    if (e != HF_OK)
        fprintf(stderr, "%s\n", hf_error_msg());
    CU_ASSERT_STRING_EQUAL(job.name, "sweeps");
    CU_ASSERT_STRING_EQUAL(job.description, "fixture for tests/test_job.c");
    CU_ASSERT_STRING_EQUAL(job.output, "/tmp/hf-test-job-sweeps.h5");
    CU_ASSERT_EQUAL_FATAL(job.nentries, n);
    for (long i = 0; i < n; i++) {
        CU_ASSERT(entry_is(&job, i, want + i));
        if (!entry_is(&job, i, want + i))
            fprintf(stderr, "entry %ld: %s span %d max %ld engine %s\n", i, job.entries[i].label,
                    job.entries[i].span, job.entries[i].max_atoms,
                    hf_engine_name((hf_engine_t)job.entries[i].engine));
    }
    /* the lines and indices point back into the file */
    CU_ASSERT_EQUAL(job.entries[0].line, 10);
    CU_ASSERT_EQUAL(job.entries[0].index, 0);
    CU_ASSERT_EQUAL(job.entries[6].line, 13);
    CU_ASSERT_EQUAL(job.entries[13].index, 4);
    /* relative to the job file's directory, then to the source tree */
    CU_ASSERT_STRING_EQUAL(job.entries[11].target_path, GOOD "/target.json");
    const char *p = job.entries[13].target_path;
    CU_ASSERT(strlen(p) > 27 && !strcmp(p + strlen(p) - 27, "/data/two_heads_shared.json"));
    /* every entry builds the target it names */
    for (long i = 0; i < n; i++) {
        hf_target_t t;
        hf_target_init_empty(&t);
        CU_ASSERT_EQUAL_FATAL(hf_job_entry_target(&job, i, &t), HF_OK);
        CU_ASSERT_STRING_EQUAL(t.name, job.entries[i].label);
        hf_target_clear(&t);
    }
    char *s = hf_job_entry_describe(&job, 7);
    CU_ASSERT_STRING_EQUAL(s, "multi:d=2,k=4 span 2 max_atoms 9");
    free(s);
    s = hf_job_entry_describe(&job, 10);
    CU_ASSERT_STRING_EQUAL(s, "chain:d=2 span 2 no-prune");
    free(s);
    hf_target_t t;
    hf_target_init_empty(&t);
    CU_ASSERT_EQUAL(hf_job_entry_target(&job, n, &t), HF_ERR_INPUT);
    hf_job_clear(&job);
}

static void test_minimal_defaults(void)
{
    hf_job_t job;
    hf_job_init(&job);
    CU_ASSERT_EQUAL_FATAL(hf_job_load(&job, GOOD "/minimal.yaml", NULL), HF_OK);
    CU_ASSERT_STRING_EQUAL(job.name, "minimal");
    CU_ASSERT_PTR_NULL(job.description);
    CU_ASSERT_STRING_EQUAL(job.output, "minimal.h5");
    CU_ASSERT_EQUAL_FATAL(job.nentries, 1);
    want_t w = {"wdw:d=2", 1, 0, 1, 0};
    CU_ASSERT(entry_is(&job, 0, &w));
    CU_ASSERT_STRING_EQUAL(job.entries[0].family, "wdw:d=2");
    hf_job_clear(&job);
    hf_job_clear(&job); /* clear twice is harmless */
}

/* engine: from the defaults, per entry, auto, and prune: false as the plain engine. */
static void test_engines(void)
{
    static const int want[] = {HF_ENGINE_LAYERED, HF_ENGINE_CONE, HF_ENGINE_AUTO, HF_ENGINE_PLAIN,
                               HF_ENGINE_PLAIN};
    static const int prune[] = {1, 1, 1, 0, 0};
    hf_job_t job;
    hf_job_init(&job);
    CU_ASSERT_EQUAL_FATAL(hf_job_load(&job, GOOD "/engines.yaml", "/tmp/hf-engines.h5"), HF_OK);
    CU_ASSERT_EQUAL_FATAL(job.nentries, 5);
    for (long i = 0; i < 5; i++) {
        CU_ASSERT_EQUAL(job.entries[i].engine, want[i]);
        CU_ASSERT_EQUAL(hf_engine_prunes((hf_engine_t)job.entries[i].engine), prune[i]);
    }
    char *s = hf_job_entry_describe(&job, 1);
    CU_ASSERT_STRING_EQUAL(s, "chain:d=2 span 2 engine cone");
    free(s);
    s = hf_job_entry_describe(&job, 2);
    CU_ASSERT_STRING_EQUAL(s, "wdw:d=2 span 2");
    free(s);
    s = hf_job_entry_describe(&job, 4);
    CU_ASSERT_STRING_EQUAL(s, "wd:d=1 span 2 no-prune");
    free(s);
    hf_job_clear(&job);
}

/* Entries repeated by an alias and the same target with k given expand in full, with
 * the canonical names (the loader builds each family target once and reuses it). */
static void test_aliases_and_memo(void)
{
    static const want_t want[] = {
        {"multi:d=1,k=3", 1, 0, 1, 0}, {"multi:d=2,k=3", 1, 0, 1, 0}, {"multi:d=1,k=3", 1, 0, 1, 0},
        {"multi:d=2,k=3", 1, 0, 1, 0}, {"multi:d=2,k=3", 1, 0, 1, 0}, {"multi:d=2,k=3", 2, 0, 1, 0},
        {"wd:d=2", 1, 0, 1, 0},
    };
    long n = (long)(sizeof want / sizeof *want);
    hf_job_t job;
    hf_job_init(&job);
    CU_ASSERT_EQUAL_FATAL(hf_job_load(&job, GOOD "/aliases.yaml", NULL), HF_OK);
    CU_ASSERT_EQUAL_FATAL(job.nentries, n);
    for (long i = 0; i < n; i++) {
        CU_ASSERT(entry_is(&job, i, &want[i]));
        CU_ASSERT_STRING_EQUAL(job.entries[i].family, want[i].label);
    }
    hf_job_clear(&job);
}

static void test_output_override(void)
{
    hf_job_t job;
    hf_job_init(&job);
    CU_ASSERT_EQUAL(hf_job_load(&job, GOOD "/minimal.yaml", "/tmp/hf-override.h5"), HF_OK);
    CU_ASSERT_STRING_EQUAL(job.output, "/tmp/hf-override.h5");
    hf_job_clear(&job);
    CU_ASSERT_EQUAL(hf_job_load(&job, GOOD "/minimal.yaml", "/no-such-dir-hf/x.h5"), HF_ERR_INPUT);
    CU_ASSERT_STRING_EQUAL(hf_error_msg(), "--out: cannot write '/no-such-dir-hf/x.h5': "
                                           "directory /no-such-dir-hf: No such file or directory");
    hf_job_clear(&job);
    CU_ASSERT_EQUAL(hf_job_load(&job, GOOD "/minimal.yaml", "/tmp/"), HF_ERR_INPUT);
    CU_ASSERT_STRING_EQUAL(hf_error_msg(), "--out: '/tmp/' must name a file");
    hf_job_clear(&job);
}

/* max_memory: a size per rank (docs/jobs.md); none: NULL and 0 */
static void test_max_memory(void)
{
    hf_job_t job;
    hf_job_init(&job);
    CU_ASSERT_EQUAL_FATAL(hf_job_load(&job, GOOD "/minimal.yaml", NULL), HF_OK);
    CU_ASSERT_PTR_NULL(job.max_memory);
    CU_ASSERT_EQUAL(job.max_memory_bytes, 0);
    hf_job_clear(&job);
    const char *path = "/tmp/hf-test-job-max-memory.yaml";
    FILE *f = fopen(path, "w");
    CU_ASSERT_FATAL(f != NULL);
    fputs("name: m\nmax_memory: 1.5G\nentries:\n  - {family: wd, d: 2, span: 1}\n", f);
    fclose(f);
    CU_ASSERT_EQUAL_FATAL(hf_job_load(&job, path, "/tmp/hf-m.h5"), HF_OK);
    CU_ASSERT_STRING_EQUAL(job.max_memory, "1.5G");
    CU_ASSERT_EQUAL(job.max_memory_bytes, 1.5 * 1073741824.0);
    CU_ASSERT_EQUAL(job.max_memory_line, 2);
    hf_job_clear(&job);
    remove(path);
}

static void test_missing_file(void)
{
    hf_job_t job;
    hf_job_init(&job);
    CU_ASSERT_EQUAL(hf_job_load(&job, GOOD "/no-such-job.yaml", NULL), HF_ERR_INPUT);
    CU_ASSERT_STRING_EQUAL(hf_error_msg(), GOOD "/no-such-job.yaml: cannot read the job file: "
                                                "No such file or directory");
    hf_job_clear(&job);
}

/* ---------------------------------------------------------------- bad files */

/* The text after "# TAG: " on line `line` (1-based) of path, or "" (static buffer). */
static const char *header(const char *path, int line, const char *tag)
{
    static char buf[512];
    buf[0] = '\0';
    FILE *f = fopen(path, "r");
    if (!f)
        return buf;
    char l[512];
    for (int i = 1; fgets(l, sizeof l, f); i++)
        if (i == line) {
            size_t n = strlen(tag);
            l[strcspn(l, "\n")] = '\0';
            if (!strncmp(l, "# ", 2) && !strncmp(l + 2, tag, n) && !strncmp(l + 2 + n, ": ", 2))
                snprintf(buf, sizeof buf, "%s", l + 4 + n);
            break;
        }
    fclose(f);
    return buf;
}

static void test_bad_fixtures(void)
{
    DIR *d = opendir(BAD);
    CU_ASSERT_PTR_NOT_NULL_FATAL(d);
    struct dirent *de;
    int count = 0;
    while ((de = readdir(d))) {
        size_t len = strlen(de->d_name);
        if (len < 6 || strcmp(de->d_name + len - 5, ".yaml"))
            continue;
        char path[512], want[1024], also[512];
        snprintf(path, sizeof path, BAD "/%s", de->d_name);
        snprintf(want, sizeof want, "%s:%s", path, header(path, 1, "expect"));
        snprintf(also, sizeof also, "%s", header(path, 2, "also"));
        CU_ASSERT(strlen(want) > strlen(path) + 1); /* every fixture states its message */
        hf_job_t job;
        hf_job_init(&job);
        hf_err_t e = hf_job_load(&job, path, NULL);
        const char *msg = hf_error_msg();
        int ok = e == HF_ERR_INPUT && !strncmp(msg, want, strlen(want)) && strstr(msg, also);
        CU_ASSERT(ok);
        if (!ok)
            fprintf(stderr, "\n%s: got %d '%s'\n  want '%s' (also '%s')\n", de->d_name, e, msg,
                    want, also);
        hf_job_clear(&job);
        count++;
    }
    closedir(d);
    CU_ASSERT(count >= 30);
}

/* ---------------------------------------------------------------- faults */

static void test_allocation_failures(void)
{
    int saw_nomem = 0;
    for (long n = 1; n < 5000; n++) {
        hf_job_t job;
        hf_job_init(&job);
        hf_fail_after(n);
        hf_err_t e = hf_job_load(&job, GOOD "/sweeps.yaml", NULL);
        hf_fail_after(0);
        hf_job_clear(&job);
        CU_ASSERT(e == HF_OK || e == HF_ERR_NOMEM);
        if (e != HF_OK && e != HF_ERR_NOMEM)
            fprintf(stderr, "fail after %ld: %d %s\n", n, e, hf_error_msg());
        if (e == HF_ERR_NOMEM)
            saw_nomem = 1;
        if (e == HF_OK)
            break;
    }
    CU_ASSERT(saw_nomem);
}

int hf_register_tests(void)
{
    static const hf_unit_case_t cases[] = {
        {"sweeps expand in order with defaults", test_sweeps_expand},
        {"engine key: defaults, entries, prune false", test_engines},
        {"minimal file and defaults", test_minimal_defaults},
        {"aliases and repeated targets", test_aliases_and_memo},
        {"--out overrides the file and is checked", test_output_override},
        {"missing job file", test_missing_file},
        {"max_memory", test_max_memory},
        {"every bad fixture names file, line and key", test_bad_fixtures},
        {"allocation failures are reported, never leak", test_allocation_failures},
        {NULL, NULL}};
    return hf_unit_suite("job", cases);
}
