/* Unit tests of core's toolbox (core.h): hash, generator, growth (one array, parallel
 * arrays), sort, hash index, integer-vector set, integer parser, whole-file reader, the count
 * of a box's points, and the I/O seam (atomic writes, their write faults, the move). */
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "headfuse/core.h"
#include "unit.h"

static void test_hash_fnv1a(void)
{
    /* published FNV-1a 64 vectors */
    CU_ASSERT_EQUAL(hf_hash_str(HF_HASH_INIT, ""), 0xcbf29ce484222325ULL);
    CU_ASSERT_EQUAL(hf_hash_str(HF_HASH_INIT, "a"), 0xaf63dc4c8601ec8cULL);
    CU_ASSERT_EQUAL(hf_hash_str(HF_HASH_INIT, "foobar"), 0x85944171f73967e8ULL);
    /* folding in pieces is hashing the concatenation (the cli fingerprints rely on it) */
    CU_ASSERT_EQUAL(hf_hash_str(hf_hash_str(HF_HASH_INIT, "foo"), "bar"),
                    hf_hash_bytes(HF_HASH_INIT, "foobar", 6));
    /* a word step is the byte step with the whole word as the symbol */
    CU_ASSERT_EQUAL(hf_hash_word(HF_HASH_INIT, 'a'), hf_hash_str(HF_HASH_INIT, "a"));
    CU_ASSERT_EQUAL(hf_hash_mix(0), 0);
    CU_ASSERT_NOT_EQUAL(hf_hash_mix(1), hf_hash_mix(2));
}

static void test_rng_sequence(void)
{
    hf_rng_t r;
    hf_rng_seed(&r, 0);
    /* splitmix64 from state 0: the reference sequence */
    CU_ASSERT_EQUAL(hf_rng_next(&r), 0xE220A8397B1DCDAFULL);
    CU_ASSERT_EQUAL(hf_rng_next(&r), 0x6E789E6AA1B965F4ULL);
    hf_rng_seed(&r, 42);
    for (int i = 0; i < 1000; i++) {
        double u = hf_rng_uniform(&r);
        CU_ASSERT(u > 0 && u < 1);
    }
    CU_ASSERT_NOT_EQUAL(hf_rng_mix(1, 2, 3, 4), hf_rng_mix(1, 2, 3, 5));
}

static void test_grow(void)
{
    int *a = NULL;
    long cap = 0;
    for (long n = 1; n <= 1000; n++) {
        CU_ASSERT_EQUAL_FATAL(HF_GROW(&a, &cap, n), HF_OK);
        CU_ASSERT(cap >= n);
        a[n - 1] = (int)n;
    }
    CU_ASSERT(cap < 2048); /* doubling, not one element a call */
    for (long i = 0; i < 1000; i++)
        CU_ASSERT_EQUAL(a[i], i + 1);
    long before = cap;
    CU_ASSERT_EQUAL(HF_GROW(&a, &cap, 10), HF_OK); /* never shrinks */
    CU_ASSERT_EQUAL(cap, before);
    free(a);
}

static void test_grow_arrays(void)
{
    long *a = NULL;
    char *b = NULL;
    long cap = 0;
    for (long n = 1; n <= 1000; n++) {
        CU_ASSERT_EQUAL_FATAL(HF_GROW2(&a, &b, &cap, n), HF_OK);
        CU_ASSERT(cap >= n);
        a[n - 1] = n;
        b[n - 1] = (char)(n % 100);
    }
    CU_ASSERT(cap < 2048); /* doubling, not one element a call */
    int same = 1;
    for (long i = 0; i < 1000; i++)
        same &= a[i] == i + 1 && b[i] == (char)((i + 1) % 100);
    CU_ASSERT(same);
    /* the second array's failure leaves the capacity as it was, both arrays valid */
    long before = cap;
    hf_fail_after(2);
    CU_ASSERT_EQUAL(HF_GROW2(&a, &b, &cap, before + 1), HF_ERR_NOMEM);
    hf_fail_after(0);
    CU_ASSERT_EQUAL(cap, before);
    CU_ASSERT_EQUAL(a[999], 1000);
    CU_ASSERT_EQUAL(HF_GROW2(&a, &b, &cap, before + 1), HF_OK);
    CU_ASSERT_EQUAL(b[999], 0);
    free(a);
    free(b);
}

/* Items for the index test: strings compared in full. */
typedef struct {
    const char *const *items;
    const char *key;
} str_key_t;

static int str_eq(const void *ctx, long item)
{
    const str_key_t *k = ctx;
    return !strcmp(k->items[item], k->key);
}

static void test_index(void)
{
    static char buf[600][8];
    const char *items[600];
    hf_index_t x;
    hf_index_init(&x);
    str_key_t k = {items, "absent"};
    CU_ASSERT_EQUAL(hf_index_find(&x, 1, str_eq, &k), -1); /* empty: no slots yet */
    for (long i = 0; i < 600; i++) {
        snprintf(buf[i], sizeof buf[i], "s%ld", i);
        items[i] = buf[i];
        /* a bad hash (eight values): items collide, only eq tells them apart */
        CU_ASSERT_EQUAL_FATAL(hf_index_add(&x, hf_hash_str(HF_HASH_INIT, "") + i % 8, i), HF_OK);
    }
    CU_ASSERT_EQUAL(x.n, 600);
    int found = 1;
    for (long i = 0; i < 600; i++) {
        k.key = items[i];
        found &= hf_index_find(&x, hf_hash_str(HF_HASH_INIT, "") + i % 8, str_eq, &k) == i;
    }
    CU_ASSERT(found);
    k.key = "s3";
    CU_ASSERT_EQUAL(hf_index_find(&x, hf_hash_str(HF_HASH_INIT, "") + 4, str_eq, &k), -1);
    hf_index_reset(&x);
    CU_ASSERT_EQUAL(x.n, 0);
    CU_ASSERT_EQUAL(hf_index_find(&x, hf_hash_str(HF_HASH_INIT, "") + 3, str_eq, &k), -1);
    /* a failed growth leaves the index as it was (64 slots hold 32 items) */
    hf_index_clear(&x);
    for (long i = 0; i < 32; i++)
        CU_ASSERT_EQUAL(hf_index_add(&x, (uint64_t)i, i), HF_OK);
    hf_fail_after(1);
    CU_ASSERT_EQUAL(hf_index_add(&x, 32, 32), HF_ERR_NOMEM);
    hf_fail_after(0);
    CU_ASSERT_EQUAL(x.n, 32);
    k.key = items[31];
    CU_ASSERT_EQUAL(hf_index_find(&x, 31, str_eq, &k), 31);
    hf_index_clear(&x);
}

static int cmp_mod10(const void *ctx, long a, long b)
{
    const long *v = ctx;
    return (int)(v[a] % 10) - (int)(v[b] % 10);
}

static void test_sort_stable_with_context(void)
{
    long v[] = {31, 20, 11, 42, 1, 30, 21};
    long idx[7];
    for (long i = 0; i < 7; i++)
        idx[i] = i;
    CU_ASSERT_EQUAL(hf_sort(idx, 7, cmp_mod10, v), HF_OK);
    /* by last digit, ties in input order: 20 30 | 31 11 1 21 | 42 */
    long want[] = {1, 5, 0, 2, 4, 6, 3};
    CU_ASSERT_EQUAL(memcmp(idx, want, sizeof want), 0);

    int64_t rows[] = {2, 1, 1, 5, 2, 0, 1, 5};
    hf_rows_t o = {rows, 2};
    long r[4] = {0, 1, 2, 3};
    CU_ASSERT_EQUAL(hf_sort(r, 4, hf_cmp_rows, &o), HF_OK);
    long rwant[] = {1, 3, 2, 0}; /* (1,5) (1,5) (2,0) (2,1) */
    CU_ASSERT_EQUAL(memcmp(r, rwant, sizeof rwant), 0);
}

static int cmp_key(const void *ctx, long a, long b)
{
    const int64_t *k = ctx;
    return k[a] < k[b] ? -1 : k[a] > k[b];
}

/* The radix sort gives the merge sort's order (both stable), for keys of 0 to 40 bits,
 * few distinct keys (ties) or many, and for n = 0, 1. */
static void test_sort_keys(void)
{
    enum { N = 3000 };
    int64_t *key = malloc(N * sizeof *key);
    long *a = malloc(N * sizeof *a), *b = malloc(N * sizeof *b);
    CU_ASSERT_FATAL(key && a && b);
    uint64_t x = 12345;
    int bits[] = {0, 1, 5, 11, 12, 22, 23, 33, 40};
    for (int t = 0; t < (int)(sizeof bits / sizeof *bits); t++) {
        for (long n = 0; n <= N; n += n < 3 ? 1 : N / 3) {
            for (long i = 0; i < n; i++) {
                x = x * 6364136223846793005u + 1442695040888963407u;
                key[i] = bits[t] ? (int64_t)((x >> 20) & ((1ull << bits[t]) - 1)) : 0;
                b[i] = i;
            }
            CU_ASSERT_EQUAL(hf_sort_keys(key, n, a), HF_OK);
            CU_ASSERT_EQUAL(hf_sort(b, n, cmp_key, key), HF_OK);
            CU_ASSERT(n == 0 || memcmp(a, b, (size_t)n * sizeof *a) == 0);
        }
    }
    free(key);
    free(a);
    free(b);
}

static void test_ivset(void)
{
    hf_ivset_t s;
    CU_ASSERT_EQUAL_FATAL(hf_ivset_init(&s, 3), HF_OK);
    int added;
    /* enough vectors to grow both the key array and the table several times */
    for (int64_t i = 0; i < 500; i++) {
        int64_t k[3] = {i % 7, -i, i * i};
        CU_ASSERT_EQUAL(hf_ivset_insert(&s, k, &added), i);
        CU_ASSERT_EQUAL(added, 1);
    }
    for (int64_t i = 0; i < 500; i++) {
        int64_t k[3] = {i % 7, -i, i * i};
        CU_ASSERT_EQUAL(hf_ivset_insert(&s, k, &added), i);
        CU_ASSERT_EQUAL(added, 0);
        CU_ASSERT_EQUAL(hf_ivset_find(&s, k), i);
    }
    int64_t absent[3] = {0, 1, 0};
    CU_ASSERT_EQUAL(hf_ivset_find(&s, absent), -1);
    CU_ASSERT_EQUAL(s.n, 500);
    CU_ASSERT_EQUAL(s.keys[3 * 10 + 1], -10);
    hf_ivset_clear(&s);
}

static void test_parse_long(void)
{
    long v = 7;
    CU_ASSERT_EQUAL(hf_parse_long("42", -1, 0, 100, &v), HF_PARSE_OK);
    CU_ASSERT_EQUAL(v, 42);
    CU_ASSERT_EQUAL(hf_parse_long("-5", -1, -10, 10, &v), HF_PARSE_OK);
    CU_ASSERT_EQUAL(v, -5);
    CU_ASSERT_EQUAL(hf_parse_long("123x", 3, 0, 1000, &v), HF_PARSE_OK); /* a prefix only */
    CU_ASSERT_EQUAL(v, 123);
    v = 7;
    const char *syntax[] = {"", "-", "+1", " 1", "1 ", "1.0", "0x10", "1e3", "--1", NULL};
    for (int i = 0; syntax[i]; i++)
        CU_ASSERT_EQUAL(hf_parse_long(syntax[i], -1, LONG_MIN, LONG_MAX, &v), HF_PARSE_SYNTAX);
    CU_ASSERT_EQUAL(hf_parse_long("101", -1, 0, 100, &v), HF_PARSE_RANGE);
    CU_ASSERT_EQUAL(hf_parse_long("-1", -1, 0, 100, &v), HF_PARSE_RANGE);
    CU_ASSERT_EQUAL(hf_parse_long("99999999999999999999999", -1, LONG_MIN, LONG_MAX, &v),
                    HF_PARSE_RANGE);
    CU_ASSERT_EQUAL(v, 7); /* untouched unless OK */
}

/* The whole-file reader: every byte (across its chunks, NULs inside too), the limit, the
 * empty file, and out of memory leaves no output. */
static void test_read_stream(void)
{
    enum { N = 200000 }; /* more than one chunk */
    FILE *f = tmpfile();
    CU_ASSERT_PTR_NOT_NULL_FATAL(f);
    for (long i = 0; i < N; i++)
        fputc((int)(i % 251), f);
    rewind(f);
    char *s = NULL;
    size_t len = 0;
    CU_ASSERT_EQUAL_FATAL(hf_read_stream(f, "t.bin", 0, &s, &len), HF_OK);
    CU_ASSERT_EQUAL(len, (size_t)N);
    int same = 1;
    for (long i = 0; i < N; i++)
        same &= (unsigned char)s[i] == i % 251;
    CU_ASSERT(same);
    CU_ASSERT_EQUAL(s[N], '\0');
    free(s);
    rewind(f);
    s = NULL;
    CU_ASSERT_EQUAL(hf_read_stream(f, "t.bin", N - 1, &s, &len), HF_ERR_LIMIT);
    CU_ASSERT_PTR_NULL(s);
    CU_ASSERT_STRING_EQUAL(hf_error_msg(), "t.bin: larger than 199999 bytes");
    rewind(f);
    CU_ASSERT_EQUAL(hf_read_stream(f, "t.bin", N, &s, NULL), HF_OK); /* exactly max */
    free(s);
    rewind(f);
    s = NULL;
    hf_fail_after(1);
    CU_ASSERT_EQUAL(hf_read_stream(f, "t.bin", 0, &s, &len), HF_ERR_NOMEM);
    hf_fail_after(0);
    CU_ASSERT_PTR_NULL(s);
    fclose(f);
    f = tmpfile();
    CU_ASSERT_PTR_NOT_NULL_FATAL(f);
    CU_ASSERT_EQUAL_FATAL(hf_read_stream(f, "empty", 0, &s, &len), HF_OK);
    CU_ASSERT_EQUAL(len, 0);
    CU_ASSERT_STRING_EQUAL(s, "");
    free(s);
    fclose(f);
}

static void test_parse_bytes(void)
{
    double v = 7;
    struct {
        const char *s;
        double want;
    } ok[] = {{"1", 1},
              {"1500000000", 1.5e9},
              {"4G", 4294967296.0},
              {"4g", 4294967296.0},
              {"4GB", 4294967296.0},
              {"4GiB", 4294967296.0},
              {"4gib", 4294967296.0},
              {"512M", 536870912.0},
              {"1.5K", 1536},
              {"2T", 2199023255552.0},
              {"1P", 1125899906842624.0},
              {"100B", 100},
              {NULL, 0}};
    for (int i = 0; ok[i].s; i++) {
        CU_ASSERT_EQUAL(hf_parse_bytes(ok[i].s, &v), HF_PARSE_OK);
        CU_ASSERT_EQUAL(v, ok[i].want);
    }
    v = 7;
    const char *syntax[] = {"",   "G",   "4 G", " 4G", "4G ",  "-4G",  "+4G",
                            "4X", "4GG", "4iB", "1e9", "0x10", "4.G.", NULL};
    for (int i = 0; syntax[i]; i++)
        CU_ASSERT_EQUAL(hf_parse_bytes(syntax[i], &v), HF_PARSE_SYNTAX);
    CU_ASSERT_EQUAL(hf_parse_bytes("0", &v), HF_PARSE_RANGE);
    CU_ASSERT_EQUAL(hf_parse_bytes("0.5", &v), HF_PARSE_RANGE);
    CU_ASSERT_EQUAL(hf_parse_bytes("9000P", &v), HF_PARSE_RANGE); /* 2^63 and more */
    CU_ASSERT_EQUAL(v, 7);                                        /* untouched unless OK */
    char buf[32];
    hf_bytes_text(812, buf, sizeof buf);
    CU_ASSERT_STRING_EQUAL(buf, "812 B");
    hf_bytes_text(1.5 * 1073741824.0, buf, sizeof buf);
    CU_ASSERT_STRING_EQUAL(buf, "1.50 GiB");
    hf_bytes_text(23.4 * 1048576, buf, sizeof buf);
    CU_ASSERT_STRING_EQUAL(buf, "23.4 MiB");
    hf_bytes_text(274.0 * 1048576, buf, sizeof buf);
    CU_ASSERT_STRING_EQUAL(buf, "274 MiB");
}

/* The count of a box's points: the product, 0 for an empty axis, -1 past the cap, the axes
 * taken in order (an overflow met before an empty axis is -1). */
static void test_box_points(void)
{
    int64_t w[4] = {3, 4, 5, 2};
    CU_ASSERT_EQUAL(hf_box_points(0, w, LONG_MAX), 1);
    CU_ASSERT_EQUAL(hf_box_points(4, w, LONG_MAX), 120);
    CU_ASSERT_EQUAL(hf_box_points(4, w, 120), 120);
    CU_ASSERT_EQUAL(hf_box_points(4, w, 119), -1);
    CU_ASSERT_EQUAL(hf_box_points(2, w, 12), 12);
    int64_t empty[3] = {3, 0, 5}, neg[2] = {2, -1};
    CU_ASSERT_EQUAL(hf_box_points(3, empty, LONG_MAX), 0);
    CU_ASSERT_EQUAL(hf_box_points(2, neg, LONG_MAX), 0);
    int64_t late[3] = {1L << 40, 1L << 40, 0}, big[2] = {INT64_MAX, 2};
    CU_ASSERT_EQUAL(hf_box_points(3, late, LONG_MAX), -1);
    CU_ASSERT_EQUAL(hf_box_points(1, big, LONG_MAX), LONG_MAX);
    CU_ASSERT_EQUAL(hf_box_points(2, big, LONG_MAX), -1);
    /* 17^15 fits a long, 17^16 does not */
    int64_t cube[16];
    for (int a = 0; a < 16; a++)
        cube[a] = 17;
    CU_ASSERT_EQUAL(hf_box_points(15, cube, LONG_MAX), 2862423051509815793L);
    CU_ASSERT_EQUAL(hf_box_points(16, cube, LONG_MAX), -1);
}

/* ---- the I/O seam ---- */

/* The whole text of path into buf (NUL-terminated); -1 if it cannot be read. */
static long slurp(const char *path, char *buf, size_t n)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return -1;
    size_t got = fread(buf, 1, n - 1, f);
    buf[got] = '\0';
    fclose(f);
    return (long)got;
}

static int exists(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0;
}

/* Entries of dir other than . and .. */
static int entries(const char *dir)
{
    DIR *d = opendir(dir);
    int n = 0;
    for (struct dirent *e; d && (e = readdir(d));)
        n += strcmp(e->d_name, ".") && strcmp(e->d_name, "..");
    if (d)
        closedir(d);
    return n;
}

/* The atomic write: a new file, a replaced one, an exclusive one that keeps the first
 * writer's file; every write call failed in turn leaves the old file and no temporary one,
 * with one message naming the file; the messages of a missing directory. */
static void test_io_write_file(void)
{
    char dir[] = "/tmp/hf_test_core_XXXXXX", path[256], buf[64];
    CU_ASSERT_PTR_NOT_NULL_FATAL(mkdtemp(dir));
    snprintf(path, sizeof path, "%s/f.txt", dir);
    CU_ASSERT_EQUAL(hf_io_write_file(path, "first\n", 6, 0), HF_OK);
    CU_ASSERT_EQUAL(slurp(path, buf, sizeof buf), 6);
    CU_ASSERT_STRING_EQUAL(buf, "first\n");
    long before = hf_io_write_calls();
    CU_ASSERT_EQUAL(hf_io_write_file(path, "second\n", 7, 0), HF_OK);
    long calls = hf_io_write_calls() - before;
    CU_ASSERT_EQUAL(calls, 5); /* open, write, fsync, close, rename */
    CU_ASSERT_STRING_EQUAL((slurp(path, buf, sizeof buf), buf), "second\n");
    CU_ASSERT_EQUAL(entries(dir), 1);
    /* exclusive: made when absent, kept when present */
    char ex[256];
    snprintf(ex, sizeof ex, "%s/job.txt", dir);
    CU_ASSERT_EQUAL(hf_io_write_file(ex, "one", 3, 1), HF_OK);
    CU_ASSERT_EQUAL(hf_io_write_file(ex, "two", 3, 1), HF_OK);
    CU_ASSERT_STRING_EQUAL((slurp(ex, buf, sizeof buf), buf), "one");
    CU_ASSERT_EQUAL(entries(dir), 2);
    unlink(ex);
    /* each call failed in turn */
    static const char *const steps[] = {"cannot create", "writing", "writing", "writing",
                                        "renaming"};
    for (long n = 1; n <= calls; n++) {
        hf_io_fail_after(n);
        hf_err_t e = hf_io_write_file(path, "third\n", 6, 0);
        hf_io_fail_after(0);
        CU_ASSERT_EQUAL(e, HF_ERR_IO);
        char want[1024];
        snprintf(want, sizeof want, "%s: %s %s.tmp: %s", path, steps[n - 1], path,
                 strerror(n == 2 ? ENOSPC : EIO));
        CU_ASSERT_STRING_EQUAL(hf_error_msg(), want);
        CU_ASSERT_STRING_EQUAL((slurp(path, buf, sizeof buf), buf), "second\n");
        CU_ASSERT_EQUAL(entries(dir), 1);
    }
    /* the link of an exclusive write */
    hf_io_fail_after(5);
    CU_ASSERT_EQUAL(hf_io_write_file(ex, "one", 3, 1), HF_ERR_IO);
    hf_io_fail_after(0);
    snprintf(buf, sizeof buf, "%s", strerror(EIO));
    char want[1024];
    snprintf(want, sizeof want, "%s: cannot create: %s", ex, buf);
    CU_ASSERT_STRING_EQUAL(hf_error_msg(), want);
    CU_ASSERT(!exists(ex));
    CU_ASSERT_EQUAL(entries(dir), 1);
    /* no such directory */
    CU_ASSERT_EQUAL(hf_io_write_file("/nonexistent-hf-dir/x", "x", 1, 0), HF_ERR_IO);
    CU_ASSERT_STRING_EQUAL(hf_error_msg(), "/nonexistent-hf-dir/x: cannot create "
                                           "/nonexistent-hf-dir/x.tmp: No such file or "
                                           "directory");
    hf_fail_after(1);
    CU_ASSERT_EQUAL(hf_io_write_file(path, "x", 1, 0), HF_ERR_NOMEM);
    hf_fail_after(0);
    unlink(path);
    rmdir(dir);
}

/* The commit of a file written by someone else, and the move with its fault. */
static void test_io_commit_move(void)
{
    char dir[] = "/tmp/hf_test_core_XXXXXX", tmp[256], path[256], other[256], buf[64];
    CU_ASSERT_PTR_NOT_NULL_FATAL(mkdtemp(dir));
    snprintf(tmp, sizeof tmp, "%s/r.h5.tmp", dir);
    snprintf(path, sizeof path, "%s/r.h5", dir);
    snprintf(other, sizeof other, "%s/moved", dir);
    FILE *f = fopen(tmp, "wb");
    CU_ASSERT_PTR_NOT_NULL_FATAL(f);
    fputs("data", f);
    fclose(f);
    CU_ASSERT_EQUAL(hf_io_commit(tmp, path), HF_OK);
    CU_ASSERT(!exists(tmp));
    CU_ASSERT_STRING_EQUAL((slurp(path, buf, sizeof buf), buf), "data");
    /* failed commits (fsync, close, rename) remove tmp and keep path */
    for (long n = 1; n <= 3; n++) {
        f = fopen(tmp, "wb");
        CU_ASSERT_PTR_NOT_NULL_FATAL(f);
        fputs("new", f);
        fclose(f);
        hf_io_fail_after(n);
        CU_ASSERT_EQUAL(hf_io_commit(tmp, path), HF_ERR_IO);
        hf_io_fail_after(0);
        CU_ASSERT_PTR_NOT_NULL(strstr(hf_error_msg(), n < 3 ? ": writing " : ": renaming "));
        CU_ASSERT(!exists(tmp));
        CU_ASSERT_STRING_EQUAL((slurp(path, buf, sizeof buf), buf), "data");
    }
    CU_ASSERT_EQUAL(hf_io_commit(tmp, path), HF_ERR_IO); /* no tmp */
    CU_ASSERT_PTR_NOT_NULL(strstr(hf_error_msg(), ": cannot reopen "));
    /* a move, a move failed on purpose (not made, not counted) and by the injection */
    CU_ASSERT_EQUAL(hf_io_move(path, other, 0), HF_OK);
    CU_ASSERT(!exists(path) && exists(other));
    long before = hf_io_write_calls();
    CU_ASSERT_EQUAL(hf_io_move(other, path, 1), HF_ERR_IO);
    CU_ASSERT_EQUAL(hf_io_write_calls(), before);
    char want[1024];
    snprintf(want, sizeof want, "%s: cannot move to %s: %s", other, path, strerror(EIO));
    CU_ASSERT_STRING_EQUAL(hf_error_msg(), want);
    hf_io_fail_after(1);
    CU_ASSERT_EQUAL(hf_io_move(other, path, 0), HF_ERR_IO);
    hf_io_fail_after(0);
    CU_ASSERT_STRING_EQUAL(hf_error_msg(), want);
    CU_ASSERT(!exists(path) && exists(other));
    unlink(other);
    rmdir(dir);
}

int hf_register_tests(void)
{
    static const hf_unit_case_t cases[] = {
        {"hash_fnv1a", test_hash_fnv1a},
        {"rng_sequence", test_rng_sequence},
        {"sort_keys", test_sort_keys},
        {"grow", test_grow},
        {"grow_arrays", test_grow_arrays},
        {"index", test_index},
        {"sort_stable_with_context", test_sort_stable_with_context},
        {"ivset", test_ivset},
        {"parse_long", test_parse_long},
        {"read_stream", test_read_stream},
        {"parse_bytes and bytes_text", test_parse_bytes},
        {"box_points", test_box_points},
        {"io write_file", test_io_write_file},
        {"io commit and move", test_io_commit_move},
        {NULL, NULL},
    };
    return hf_unit_suite("core", cases);
}
