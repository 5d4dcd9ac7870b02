/* Helpers shared by the CUnit test files. */
#ifndef HF_TESTS_UNIT_H
#define HF_TESTS_UNIT_H

#include <CUnit/CUnit.h>

/* Remove a directory tree (files and subdirectories; a missing one is fine). */
void hf_unit_rm_tree(const char *dir);

/* A test that cannot run in this build calls this (and returns): CUnit has no skipped
 * state, so the test's name and why are printed after the run as skipped, not passed, and
 * an executable whose selected tests were all skipped exits with HF_UNIT_SKIPPED, which
 * CTest reports as "Skipped" (SKIP_RETURN_CODE). */
#define HF_UNIT_SKIPPED 77
void hf_unit_skip(const char *why);

/* Each tests/test_<module>.c defines this: add its suites; return 0 on success. */
int hf_register_tests(void);

/* Add a suite with the given tests (NULL-terminated {name, fn} array). */
typedef struct {
    const char *name;
    CU_TestFunc fn;
} hf_unit_case_t;

/* Add a suite with a cleanup function (may be NULL) and its tests. */
static inline int hf_unit_suite_with(const char *name, CU_CleanupFunc cleanup,
                                     const hf_unit_case_t *cases)
{
    CU_pSuite s = CU_add_suite(name, NULL, cleanup);
    if (!s)
        return -1;
    for (; cases->name; cases++)
        if (!CU_add_test(s, cases->name, cases->fn))
            return -1;
    return 0;
}

static inline int hf_unit_suite(const char *name, const hf_unit_case_t *cases)
{
    return hf_unit_suite_with(name, NULL, cases);
}

/* A poll hook that counts its calls and answers 1 (stop) from call number `limit` on
 * (never when 0): stops a polled search at a chosen point. */
typedef struct {
    long calls, limit;
} hf_unit_poll_count_t;

static inline int hf_unit_poll_count(void *ctx)
{
    hf_unit_poll_count_t *p = ctx;
    p->calls++;
    return p->limit > 0 && p->calls >= p->limit;
}

#endif
