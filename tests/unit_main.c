/* Shared main for the CUnit test executables: each test file defines
 * hf_register_tests() and this runs them, failing the process on any failure
 * (CU_basic_run_tests returns 0 even when assertions fail). */
#include <CUnit/Basic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <dirent.h>
#include <sys/stat.h>
#include <unistd.h>

#include <flint/flint.h>

#include "unit.h"

void hf_unit_rm_tree(const char *dir)
{
    DIR *d = opendir(dir);
    if (!d)
        return;
    struct dirent *e;
    char p[4096];
    while ((e = readdir(d))) {
        if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
            continue;
        snprintf(p, sizeof p, "%s/%s", dir, e->d_name);
        struct stat st;
        if (lstat(p, &st) == 0 && S_ISDIR(st.st_mode))
            hf_unit_rm_tree(p);
        else
            unlink(p);
    }
    closedir(d);
    rmdir(dir);
}

/* Tests skipped in this run (hf_unit_skip), reported after CUnit's summary. */
enum { SKIPS_MAX = 64 };
static struct {
    char name[160], why[160];
} skips[SKIPS_MAX];
static int nskips;

void hf_unit_skip(const char *why)
{
    CU_pTest test = CU_get_current_test();
    CU_pSuite suite = CU_get_current_suite();
    if (nskips < SKIPS_MAX) {
        snprintf(skips[nskips].name, sizeof skips[nskips].name, "%s: %s",
                 suite ? suite->pName : "?", test ? test->pName : "?");
        snprintf(skips[nskips].why, sizeof skips[nskips].why, "%s", why);
    }
    nskips++;
}

/* Only the tests whose name contains `filter` stay active (a developer's shortcut:
 * build/test_search "preparing a size"); "!NAME": every test but those (CTest runs a
 * test on its own that way, to report it as skipped where it cannot run). */
static void keep_matching(const char *filter)
{
    int except = filter[0] == '!';
    const char *name = filter + except;
    for (CU_pSuite suite = CU_get_registry()->pSuite; suite; suite = suite->pNext)
        for (CU_pTest test = suite->pTest; test; test = test->pNext)
            if ((strstr(test->pName, name) != NULL) == except)
                CU_set_test_active(test, CU_FALSE);
}

int main(int argc, char **argv)
{
    /* FLINT caches freed big integers; release them so valgrind sees no leak */
    atexit(flint_cleanup_master);
    if (CU_initialize_registry() != CUE_SUCCESS)
        return 1;
    if (hf_register_tests() != 0) {
        fprintf(stderr, "test registration failed: %s\n", CU_get_error_msg());
        CU_cleanup_registry();
        return 1;
    }
    if (argc > 1)
        keep_matching(argv[1]);
    CU_basic_set_mode(CU_BRM_VERBOSE);
    CU_basic_run_tests();
    unsigned failures = CU_get_number_of_failures();
    unsigned tests_failed = CU_get_number_of_tests_failed();
    unsigned tests_run = CU_get_number_of_tests_run();
    CU_cleanup_registry();
    for (int i = 0; i < nskips && i < SKIPS_MAX; i++)
        fprintf(stderr, "SKIPPED (counted as passed by CUnit): %s: %s\n", skips[i].name,
                skips[i].why);
    if (failures || tests_failed)
        return 1;
    return nskips > 0 && (unsigned)nskips == tests_run ? HF_UNIT_SKIPPED : 0;
}
