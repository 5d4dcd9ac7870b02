/* The read guard (src/store/read_guard.c) with probes that behave as a reader of a
 * damaged file would: crash, hang, run out of memory, fail cleanly, succeed. */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "headfuse/error.h"
#include "headfuse/store.h"
#include "store/store_impl.h"
#include "unit.h"

#if defined(__SANITIZE_ADDRESS__)
#define UNDER_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define UNDER_ASAN 1
#endif
#endif

static char path[64];
static int parent_marker; /* a probe's side effect, which must stay in the child */

static void make_file(void)
{
    snprintf(path, sizeof path, "/tmp/hf-guard-%d.h5", (int)getpid());
    FILE *f = fopen(path, "w");
    CU_ASSERT_PTR_NOT_NULL_FATAL(f);
    fputs("not really HDF5", f);
    fclose(f);
}

static hf_err_t probe_ok(const char *p, const void *arg)
{
    (void)p;
    (void)arg;
    parent_marker = 1;
    return HF_OK;
}

static hf_err_t probe_clean_error(const char *p, const void *arg)
{
    (void)arg;
    return hf_error(HF_ERR_INPUT, "%s: shard of another job (probe)", p);
}

static hf_err_t probe_segv(const char *p, const void *arg)
{
    (void)p;
    (void)arg;
    raise(SIGSEGV);
    return HF_OK;
}

static hf_err_t probe_hang(const char *p, const void *arg)
{
    (void)p;
    (void)arg;
    for (;;)
        pause();
    return HF_OK;
}

#ifndef UNDER_ASAN /* no address-space limit under ASan: the test using it is skipped there */
/* Touch far more memory than a reader of a small file needs: under the child's
 * address-space limit the allocation fails and the probe reports it cleanly. */
static hf_err_t probe_greedy(const char *p, const void *arg)
{
    (void)arg;
    size_t n = (size_t)8 << 30;
    char *big = malloc(n);
    if (!big)
        return hf_error(HF_ERR_NOMEM, "%s: 8 GiB refused (probe)", p);
    memset(big, 1, n);
    free(big);
    return HF_OK;
}
#endif

static void test_guard_success_runs_in_child(void)
{
    make_file();
    hf_h5_read_guard_enable(1);
    int ok = -1;
    parent_marker = 0;
    CU_ASSERT_EQUAL(hf_h5_read_guard(path, "shard", probe_ok, NULL, &ok), HF_OK);
    CU_ASSERT_EQUAL(ok, 1);
    CU_ASSERT_EQUAL(parent_marker, 0); /* the probe ran in the child only */
    unlink(path);
}

static void test_guard_clean_error_comes_back(void)
{
    make_file();
    hf_h5_read_guard_enable(1);
    int ok = -1;
    CU_ASSERT_EQUAL(hf_h5_read_guard(path, "shard", probe_clean_error, NULL, &ok), HF_ERR_INPUT);
    CU_ASSERT_EQUAL(ok, 0);
    CU_ASSERT_PTR_NOT_NULL(strstr(hf_error_msg(), "shard of another job (probe)"));
    CU_ASSERT_PTR_NOT_NULL(strstr(hf_error_msg(), path));
    hf_error_clear();
    unlink(path);
}

static void test_guard_crash_is_corrupt(void)
{
    make_file();
    hf_h5_read_guard_enable(1);
    int ok = -1;
    CU_ASSERT_EQUAL(hf_h5_read_guard(path, "result file", probe_segv, NULL, &ok), HF_ERR_CORRUPT);
    CU_ASSERT_EQUAL(ok, 0);
    CU_ASSERT_PTR_NOT_NULL(strstr(hf_error_msg(), path));
    CU_ASSERT_PTR_NOT_NULL(strstr(hf_error_msg(), "corrupt result file"));
#ifndef UNDER_ASAN /* ASan catches the signal itself and exits with status 1 */
    CU_ASSERT_PTR_NOT_NULL(strstr(hf_error_msg(), "crashed reading it (signal 11"));
#endif
    hf_error_clear();
    unlink(path);
}

static void test_guard_hang_times_out(void)
{
    make_file();
    hf_h5_read_guard_enable(1);
    setenv("HEADFUSE_READ_TIMEOUT", "1", 1);
    CU_ASSERT_EQUAL(hf_h5_read_guard(path, "shard", probe_hang, NULL, NULL), HF_ERR_CORRUPT);
    CU_ASSERT_PTR_NOT_NULL(strstr(hf_error_msg(), "did not finish reading it in 1 s"));
    unsetenv("HEADFUSE_READ_TIMEOUT");
    hf_error_clear();
    unlink(path);
}

static void test_guard_memory_limit(void)
{
#ifdef UNDER_ASAN
    hf_unit_skip("AddressSanitizer reserves the address space that the child's RLIMIT_AS "
                 "would limit (CTest: unit.test_read_guard.memory_limit, Skipped)");
#else
    make_file();
    hf_h5_read_guard_enable(1);
    CU_ASSERT_EQUAL(hf_h5_read_guard(path, "shard", probe_greedy, NULL, NULL), HF_ERR_NOMEM);
    CU_ASSERT_PTR_NOT_NULL(strstr(hf_error_msg(), "8 GiB refused"));
    hf_error_clear();
    unlink(path);
#endif
}

static void test_guard_off_and_missing_file(void)
{
    make_file();
    int ok = -1;
    hf_h5_read_guard_enable(0);
    parent_marker = 0;
    CU_ASSERT_EQUAL(hf_h5_read_guard(path, "shard", probe_segv, NULL, &ok), HF_OK);
    CU_ASSERT_EQUAL(ok, 0); /* nothing ran */
    hf_h5_read_guard_enable(1);
    unlink(path);
    /* a missing file is left to the reader, which names errno's reason */
    CU_ASSERT_EQUAL(hf_h5_read_guard(path, "shard", probe_segv, NULL, &ok), HF_OK);
    CU_ASSERT_EQUAL(ok, 0);
}

/* Through a real reader: a file that is not HDF5 gets the reader's own message, once
 * (a result reader says so before any HDF5 call: bad input, not damage). */
static void test_guard_real_reader(void)
{
    make_file();
    hf_h5_read_guard_enable(1);
    hf_result_t r;
    hf_result_init(&r);
    CU_ASSERT_EQUAL(hf_result_read(path, &r), HF_ERR_INPUT);
    CU_ASSERT_PTR_NOT_NULL(strstr(hf_error_msg(), "not an HDF5 file"));
    CU_ASSERT_EQUAL(r.nrows, 0);
    hf_result_clear(&r);
    hf_shard_data_t d;
    hf_shard_data_init(&d);
    CU_ASSERT_EQUAL(hf_shard_read(path, "fp", &d), HF_ERR_CORRUPT);
    CU_ASSERT_EQUAL(d.nunits, 0);
    hf_shard_data_clear(&d);
    hf_error_clear();
    unlink(path);
}

/* Fails cleanly on the file named in arg, crashes on none, reads the others. */
static long probed;
static hf_err_t probe_fail_on(const char *p, const void *arg)
{
    probed++;
    if (arg && !strcmp(p, arg))
        return hf_error(HF_ERR_INPUT, "%s: shard of another job (probe)", p);
    return HF_OK;
}

static hf_err_t probe_segv_on(const char *p, const void *arg)
{
    if (!strcmp(p, arg))
        raise(SIGSEGV);
    return HF_OK;
}

/* Many files in one child (the merge of many shards): all read, so the caller reads
 * them; the first clean failure comes back as it is; a crash is not attributed to any
 * file (HF_OK, read_ok 0: the caller guards each on its own); guard off: nothing runs. */
static void test_guard_all(void)
{
    make_file();
    const char *paths[3] = {path, path, path};
    char other[80];
    snprintf(other, sizeof other, "%s.b", path);
    const char *mixed[3] = {path, other, path};
    FILE *f = fopen(other, "w");
    CU_ASSERT_PTR_NOT_NULL_FATAL(f);
    fputs("also not HDF5", f);
    fclose(f);
    int ok = -1;
    hf_h5_read_guard_enable(1);
    probed = 0;
    CU_ASSERT_EQUAL(hf_h5_read_guard_all(paths, 3, "shard", probe_fail_on, NULL, &ok), HF_OK);
    CU_ASSERT_EQUAL(ok, 1);
    CU_ASSERT_EQUAL(probed, 0); /* in the child */
    CU_ASSERT_EQUAL(hf_h5_read_guard_all(mixed, 3, "shard", probe_fail_on, other, &ok),
                    HF_ERR_INPUT);
    CU_ASSERT_EQUAL(ok, 0);
    CU_ASSERT_PTR_NOT_NULL(strstr(hf_error_msg(), other));
    hf_error_clear();
    CU_ASSERT_EQUAL(hf_h5_read_guard_all(mixed, 3, "shard", probe_segv_on, other, &ok), HF_OK);
    CU_ASSERT_EQUAL(ok, 0);
    /* and each file guarded on its own names the one that crashes */
    CU_ASSERT_EQUAL(hf_h5_read_guard(mixed[0], "shard", probe_segv_on, other, &ok), HF_OK);
    CU_ASSERT_EQUAL(hf_h5_read_guard(mixed[1], "shard", probe_segv_on, other, &ok), HF_ERR_CORRUPT);
    CU_ASSERT_PTR_NOT_NULL(strstr(hf_error_msg(), other));
    hf_error_clear();
    hf_h5_read_guard_enable(0);
    CU_ASSERT_EQUAL(hf_h5_read_guard_all(mixed, 3, "shard", probe_segv_on, other, &ok), HF_OK);
    CU_ASSERT_EQUAL(ok, 0);
    hf_h5_read_guard_enable(1);
    unlink(other);
    unlink(path);
}

int hf_register_tests(void)
{
    static const hf_unit_case_t cases[] = {
        {"success runs in the child", test_guard_success_runs_in_child},
        {"a clean error comes back", test_guard_clean_error_comes_back},
        {"a crash is a corrupt file", test_guard_crash_is_corrupt},
        {"a hang times out", test_guard_hang_times_out},
        {"memory is limited", test_guard_memory_limit},
        {"off, and a missing file", test_guard_off_and_missing_file},
        {"a real reader", test_guard_real_reader},
        {"many files in one child", test_guard_all},
        {NULL, NULL}};
    return hf_unit_suite("read guard", cases);
}
