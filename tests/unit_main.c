/* Shared main for the CUnit test executables: each test file defines
 * hf_register_tests() and this runs them, failing the process on any failure
 * (CU_basic_run_tests returns 0 even when assertions fail). */
#include <CUnit/Basic.h>
#include <stdio.h>
#include <stdlib.h>

#include <flint/flint.h>

#include "unit.h"

int main(void)
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
    CU_basic_set_mode(CU_BRM_VERBOSE);
    CU_basic_run_tests();
    unsigned failures = CU_get_number_of_failures();
    unsigned tests_failed = CU_get_number_of_tests_failed();
    CU_cleanup_registry();
    return (failures || tests_failed) ? 1 : 0;
}
