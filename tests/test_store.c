/* Tests of the HDF5 store: RESULT.h5 round trips and validation, shards written
 * unit by unit, a shard of a killed process, truncated and corrupted files, and
 * errors that name the file. */
#include <dirent.h>
#include <fcntl.h>
#include <hdf5.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "headfuse/control.h"
#include "headfuse/store.h"
#include "store/store_impl.h"
#include "unit.h"

/* ---- scratch directory ---- */

static char tmpdir[64];

static void scratch_make(void)
{
    strcpy(tmpdir, "/tmp/hf_store_XXXXXX");
    CU_ASSERT_FATAL(mkdtemp(tmpdir) != NULL);
}

/* HF_STORE_KEEP=1 keeps the files for inspection (h5dump, h5py). */
static void scratch_done(void)
{
    /* every HDF5 object opened by the store or by a test was closed again */
    CU_ASSERT_EQUAL(H5Fget_obj_count(H5F_OBJ_ALL, H5F_OBJ_ALL), 0);
    if (getenv("HF_STORE_KEEP")) {
        fprintf(stderr, "[kept %s] ", tmpdir);
        return;
    }
    hf_unit_rm_tree(tmpdir);
}

static void scratch_path(char *buf, size_t n, const char *name)
{
    snprintf(buf, n, "%s/%s", tmpdir, name);
}

static int file_exists(const char *p)
{
    struct stat st;
    return stat(p, &st) == 0;
}

static long file_size(const char *p)
{
    struct stat st;
    return stat(p, &st) == 0 ? (long)st.st_size : -1;
}

/* ---- a sample result ---- */

static hf_row_t make_row(const char *name, int d, int span, int64_t m_star, const char *lb,
                         const char *ub, const char *status)
{
    hf_row_t w;
    memset(&w, 0, sizeof w);
    snprintf(w.name, sizeof w.name, "%s", name);
    w.d = d;
    w.span = span;
    w.m_star = m_star;
    snprintf(w.lb, sizeof w.lb, "%s", lb);
    snprintf(w.ub, sizeof w.ub, "%s", ub);
    snprintf(w.status, sizeof w.status, "%s", status);
    w.n_min_raw = m_star >= 0 ? 2 : -1;
    w.n_min_sym = m_star >= 0 ? 1 : -1;
    w.group_order = 2;
    w.nodes = 12345;
    w.units = 7;
    w.seconds = 1.25;
    w.max_atoms = m_star >= 0 ? 0 : 5;
    snprintf(w.engine, sizeof w.engine, "%s", m_star >= 0 ? "layered" : "plain");
    snprintf(w.lb_rule, sizeof w.lb_rule, "%s", m_star >= 0 ? "newton_vertices" : "face_rule");
    snprintf(w.m_star_dec, sizeof w.m_star_dec, "%lld", (long long)m_star);
    return w;
}

/* Append the support keys[m d] with weights and values given as rationals (the witness
 * head, turned into the stored integers by hf_supports_push_head). */
static hf_err_t push_strs(hf_supports_t *s, const int64_t *keys, char *const *w, char *const *v)
{
    hf_head_t h;
    hf_head_init(&h, s->d, s->dv);
    hf_err_t e = hf_head_resize(&h, s->m);
    memcpy(h.keys, keys, (size_t)(s->m * s->d) * sizeof *keys);
    for (long i = 0; e == HF_OK && i < s->m; i++) {
        e = hf_rational_parse(h.weights + i, w[i]);
        for (int j = 0; e == HF_OK && j < s->dv; j++)
            e = hf_rational_parse(h.values + i * s->dv + j, v[i * s->dv + j]);
    }
    if (e == HF_OK)
        e = hf_supports_push_head(s, &h);
    hf_head_clear(&h);
    return e;
}

/* Three rows: dv=2 with two supports; no support and m_star -1; big lb/ub. */
static void make_result(hf_result_t *r)
{
    hf_result_init(r);
    hf_row_t w0 = make_row("wd:d=2", 2, 1, 3, "3", "4", "exhaustive");
    hf_supports_t s0;
    hf_supports_init(&s0, 3, 2, 2);
    int64_t k0[6] = {0, 0, 1, 0, 0, 1}, k1[6] = {0, 0, 1, 1, 1, 0};
    char *wt0[3] = {"1", "1/2", "3/7"}, *wt1[3] = {"2", "5", "1/3"};
    char *v0[6] = {"0", "1", "-1/2", "2", "7", "0"}, *v1[6] = {"1", "1", "1", "1", "-3/4", "9"};
    CU_ASSERT_FATAL(push_strs(&s0, k0, wt0, v0) == HF_OK);
    CU_ASSERT_FATAL(push_strs(&s0, k1, wt1, v1) == HF_OK);
    CU_ASSERT_FATAL(hf_result_add_row(r, &w0, &s0, "{\"name\": \"wd:d=2\"}") == HF_OK);
    hf_supports_clear(&s0);

    hf_row_t w1 = make_row("chain:d=3", 3, 2, -1, "5", "24", "open");
    hf_supports_t s1;
    hf_supports_init(&s1, -1, 3, 1);
    CU_ASSERT_FATAL(hf_result_add_row(r, &w1, &s1, "{\"name\": \"chain:d=3\"}") == HF_OK);
    hf_supports_clear(&s1);

    hf_row_t w2 = make_row("big", 1, 4, 2, "123456789012345678901234567890",
                           "98765432109876543210987654321098765432100", "certified");
    w2.seconds = -1;
    hf_supports_t s2;
    hf_supports_init(&s2, 2, 1, 1);
    int64_t k2[2] = {0, 1};
    char *wt2[2] = {"1", "123456789012345678901234567890/7"}, *v2[2] = {"0", "1"};
    CU_ASSERT_FATAL(push_strs(&s2, k2, wt2, v2) == HF_OK);
    CU_ASSERT_FATAL(hf_result_add_row(r, &w2, &s2, "{\"name\": \"big\"}") == HF_OK);
    hf_supports_clear(&s2);

    r->nunits = 3;
    r->units = calloc(3, sizeof *r->units);
    CU_ASSERT_FATAL(r->units != NULL);
    /* whole units, and a range of cells of one */
    r->units[0] = (hf_unit_record_t){.row = 0,
                                     .rank = 0,
                                     .m = 3,
                                     .unit = 0,
                                     .lo = 0,
                                     .hi = HF_CELLS_ALL,
                                     .nodes = 100,
                                     .found = 2,
                                     .seconds = 0.5};
    r->units[1] = (hf_unit_record_t){.row = 0,
                                     .rank = 1,
                                     .m = 3,
                                     .unit = 1,
                                     .lo = 2,
                                     .hi = 5,
                                     .nodes = 50,
                                     .found = 0,
                                     .seconds = 0.25};
    r->units[2] = (hf_unit_record_t){.row = 2,
                                     .rank = 1,
                                     .m = 2,
                                     .unit = 0,
                                     .lo = 0,
                                     .hi = HF_CELLS_ALL,
                                     .nodes = 7,
                                     .found = 1,
                                     .seconds = 0.0};
    r->version = strdup("0.1.0");
    r->git_commit = strdup("abcdef123456");
    r->command_line = strdup("headfuse search --family wd:d=2");
    r->host = strdup("node1");
    r->start_time = strdup("2024-01-01T00:00:00Z");
    r->end_time = strdup("2024-01-01T00:01:00Z");
    r->ranks = 4;
    r->job_text = strdup("name: sample\nentries:\n  - {family: wd, d: 2, span: 1}\n");
}

static void assert_rows_equal(const hf_row_t *a, const hf_row_t *b)
{
    CU_ASSERT_STRING_EQUAL(a->name, b->name);
    CU_ASSERT_EQUAL(a->d, b->d);
    CU_ASSERT_EQUAL(a->span, b->span);
    CU_ASSERT_EQUAL(a->m_star, b->m_star);
    CU_ASSERT_STRING_EQUAL(a->lb, b->lb);
    CU_ASSERT_STRING_EQUAL(a->ub, b->ub);
    CU_ASSERT_STRING_EQUAL(a->status, b->status);
    CU_ASSERT_EQUAL(a->n_min_raw, b->n_min_raw);
    CU_ASSERT_EQUAL(a->n_min_sym, b->n_min_sym);
    CU_ASSERT_EQUAL(a->group_order, b->group_order);
    CU_ASSERT_EQUAL(a->nodes, b->nodes);
    CU_ASSERT_EQUAL(a->units, b->units);
    CU_ASSERT_EQUAL(a->seconds, b->seconds);
    CU_ASSERT_EQUAL(a->max_atoms, b->max_atoms);
    CU_ASSERT_STRING_EQUAL(a->engine, b->engine);
    CU_ASSERT_STRING_EQUAL(a->lb_rule, b->lb_rule);
    char ma[HF_BIGINT_LEN], mb[HF_BIGINT_LEN];
    CU_ASSERT_STRING_EQUAL(hf_row_m_star(a, ma), hf_row_m_star(b, mb));
}

static void assert_supports_equal(const hf_supports_t *a, const hf_supports_t *b)
{
    CU_ASSERT_EQUAL_FATAL(a->n, b->n);
    CU_ASSERT_EQUAL(a->m, b->m);
    CU_ASSERT_EQUAL_FATAL(a->d, b->d);
    CU_ASSERT_EQUAL_FATAL(a->dv, b->dv);
    long m = a->m > 0 ? a->m : 0;
    for (long i = 0; i < a->n * m * a->d; i++)
        CU_ASSERT_EQUAL(a->keys[i], b->keys[i]);
    for (long i = 0; i < a->n * m; i++)
        CU_ASSERT(fmpz_equal(a->weights + i, b->weights + i));
    for (long i = 0; i < a->n * m * a->dv; i++)
        CU_ASSERT(fmpz_equal(a->wvalues + i, b->wvalues + i));
}

static void assert_results_equal(const hf_result_t *a, const hf_result_t *b)
{
    CU_ASSERT_EQUAL_FATAL(a->nrows, b->nrows);
    for (long i = 0; i < a->nrows; i++) {
        assert_rows_equal(&a->rows[i], &b->rows[i]);
        assert_supports_equal(&a->supports[i], &b->supports[i]);
        CU_ASSERT_STRING_EQUAL(a->target_json[i], b->target_json[i]);
    }
    CU_ASSERT_EQUAL_FATAL(a->nunits, b->nunits);
    CU_ASSERT(a->nunits == 0 || !memcmp(a->units, b->units, a->nunits * sizeof *a->units));
    CU_ASSERT_STRING_EQUAL(a->version, b->version);
    CU_ASSERT_STRING_EQUAL(a->git_commit, b->git_commit);
    CU_ASSERT_STRING_EQUAL(a->command_line, b->command_line);
    CU_ASSERT_STRING_EQUAL(a->host, b->host);
    CU_ASSERT_STRING_EQUAL(a->start_time, b->start_time);
    CU_ASSERT_STRING_EQUAL(a->end_time, b->end_time);
    CU_ASSERT_EQUAL(a->ranks, b->ranks);
    /* NULL is written as "" */
    CU_ASSERT_STRING_EQUAL(a->job_text ? a->job_text : "", b->job_text ? b->job_text : "");
}

/* ---- result tests ---- */

static void test_result_roundtrip(void)
{
    char path[256], tmp[300];
    scratch_make();
    scratch_path(path, sizeof path, "RESULT.h5");
    snprintf(tmp, sizeof tmp, "%s.tmp", path);
    hf_result_t r, back;
    hf_result_init(&r);
    hf_result_init(&back);
    make_result(&r);
    CU_ASSERT_EQUAL(hf_result_write(path, &r), HF_OK);
    CU_ASSERT(file_exists(path));
    CU_ASSERT(!file_exists(tmp));
    CU_ASSERT_EQUAL_FATAL(hf_result_read(path, &back), HF_OK);
    assert_results_equal(&r, &back);
    /* the empty row reads back as zero supports */
    CU_ASSERT_EQUAL(back.supports[1].n, 0);
    CU_ASSERT_EQUAL(back.rows[1].m_star, -1);
    hf_result_clear(&back);

    /* overwriting an existing result replaces it */
    r.ranks = 9;
    CU_ASSERT_EQUAL(hf_result_write(path, &r), HF_OK);
    CU_ASSERT_EQUAL_FATAL(hf_result_read(path, &back), HF_OK);
    CU_ASSERT_EQUAL(back.ranks, 9);
    hf_result_clear(&back);
    hf_result_clear(&r);
    scratch_done();
}

static void test_result_empty_and_null_provenance(void)
{
    char path[256];
    scratch_make();
    scratch_path(path, sizeof path, "empty.h5");
    hf_result_t r, back;
    hf_result_init(&back);
    hf_result_init(&r);
    CU_ASSERT_EQUAL(hf_result_write(path, &r), HF_OK);
    CU_ASSERT_EQUAL_FATAL(hf_result_read(path, &back), HF_OK);
    CU_ASSERT_EQUAL(back.nrows, 0);
    CU_ASSERT_EQUAL(back.nunits, 0);
    CU_ASSERT_PTR_NOT_NULL_FATAL(back.host);
    CU_ASSERT_STRING_EQUAL(back.host, ""); /* NULL is written as "" */
    hf_result_clear(&back);
    scratch_done();
}

static void test_result_write_rejects_invalid(void)
{
    char path[256];
    scratch_make();
    scratch_path(path, sizeof path, "bad.h5");
    hf_result_t r;
    hf_result_init(&r);
    make_result(&r);
    strcpy(r.rows[0].status, "done");
    CU_ASSERT_EQUAL(hf_result_write(path, &r), HF_ERR_INTERNAL);
    CU_ASSERT(strstr(hf_error_msg(), "status") != NULL);
    strcpy(r.rows[0].status, "open");
    strcpy(r.rows[0].engine, "");
    CU_ASSERT_EQUAL(hf_result_write(path, &r), HF_ERR_INTERNAL);
    CU_ASSERT(strstr(hf_error_msg(), "engine") != NULL);
    strcpy(r.rows[0].engine, "Pruned!");
    CU_ASSERT_EQUAL(hf_result_write(path, &r), HF_ERR_INTERNAL);
    strcpy(r.rows[0].engine, "layered");
    strcpy(r.rows[0].lb_rule, "Newton!");
    CU_ASSERT_EQUAL(hf_result_write(path, &r), HF_ERR_INTERNAL);
    CU_ASSERT(strstr(hf_error_msg(), "lb_rule") != NULL);
    strcpy(r.rows[0].lb_rule, "newton_2d");
    r.rows[0].max_atoms = -2;
    CU_ASSERT_EQUAL(hf_result_write(path, &r), HF_ERR_INTERNAL);
    CU_ASSERT(strstr(hf_error_msg(), "max_atoms") != NULL);
    r.rows[0].max_atoms = 0;
    r.supports[0].m = 4; /* supports no longer of size m_star */
    CU_ASSERT_EQUAL(hf_result_write(path, &r), HF_ERR_INTERNAL);
    r.supports[0].m = 3;
    /* a weight must be positive */
    fmpz_set_si(r.supports[2].weights + 1, -3);
    CU_ASSERT_EQUAL(hf_result_write(path, &r), HF_ERR_INTERNAL);
    CU_ASSERT(strstr(hf_error_msg(), "a weight is not positive") != NULL);
    CU_ASSERT(!file_exists(path));
    hf_result_clear(&r);
    scratch_done();
}

static void test_result_unwritable(void)
{
    char path[256], tmp[300], dir[256];
    scratch_make();
    hf_result_t r;
    hf_result_init(&r);
    make_result(&r);

    /* a directory that does not exist */
    scratch_path(path, sizeof path, "no/such/dir/RESULT.h5");
    CU_ASSERT_EQUAL(hf_result_write(path, &r), HF_ERR_IO);
    CU_ASSERT(strstr(hf_error_msg(), path) != NULL);

    /* failure after the tmp file exists: the target is a directory, rename fails */
    scratch_path(path, sizeof path, "isdir.h5");
    CU_ASSERT_FATAL(mkdir(path, 0755) == 0);
    scratch_path(dir, sizeof dir, "isdir.h5/x");
    CU_ASSERT_FATAL(mkdir(dir, 0755) == 0);
    snprintf(tmp, sizeof tmp, "%s.tmp", path);
    CU_ASSERT_EQUAL(hf_result_write(path, &r), HF_ERR_IO);
    CU_ASSERT(strstr(hf_error_msg(), path) != NULL);
    CU_ASSERT(!file_exists(tmp));

    /* the disk fills up mid-write (a file size limit): tmp removed, path named */
    scratch_path(path, sizeof path, "full.h5");
    snprintf(tmp, sizeof tmp, "%s.tmp", path);
    size_t big = 200000;
    char *json = malloc(big + 1);
    CU_ASSERT_FATAL(json != NULL);
    memset(json, ' ', big);
    json[big] = '\0';
    json[0] = '{';
    json[big - 1] = '}';
    free(r.target_json[1]);
    r.target_json[1] = json;
    struct rlimit old, lim;
    CU_ASSERT_FATAL(getrlimit(RLIMIT_FSIZE, &old) == 0);
    lim = old;
    lim.rlim_cur = 65536;
    void (*oldsig)(int) = signal(SIGXFSZ, SIG_IGN);
    CU_ASSERT_FATAL(setrlimit(RLIMIT_FSIZE, &lim) == 0);
    hf_err_t err = hf_result_write(path, &r);
    setrlimit(RLIMIT_FSIZE, &old);
    signal(SIGXFSZ, oldsig);
    CU_ASSERT_EQUAL(err, HF_ERR_IO);
    CU_ASSERT(strstr(hf_error_msg(), path) == hf_error_msg());
    CU_ASSERT(!file_exists(tmp));
    CU_ASSERT(!file_exists(path));
    CU_ASSERT(strstr(hf_error_msg(), "File too large") != NULL);

    /* a read-only directory (permissions do not bind root) */
    if (geteuid() != 0) {
        scratch_path(dir, sizeof dir, "ro");
        CU_ASSERT_FATAL(mkdir(dir, 0555) == 0);
        scratch_path(path, sizeof path, "ro/RESULT.h5");
        CU_ASSERT_EQUAL(hf_result_write(path, &r), HF_ERR_IO);
        CU_ASSERT(strstr(hf_error_msg(), path) != NULL);
        CU_ASSERT(strstr(hf_error_msg(), "Permission denied") != NULL);
        chmod(dir, 0755);
    }
    hf_result_clear(&r);
    scratch_done();
}

/* Run fn with stderr sent to a scratch file; return how many bytes it printed. */
static long stderr_bytes_during(hf_err_t (*fn)(const char *), const char *arg, hf_err_t *err)
{
    char log[256];
    scratch_path(log, sizeof log, "stderr.log");
    fflush(stderr);
    int saved = dup(2);
    int fd = open(log, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    dup2(fd, 2);
    close(fd);
    *err = fn(arg);
    fflush(stderr);
    dup2(saved, 2);
    close(saved);
    return file_size(log);
}

static hf_err_t read_and_clear(const char *path)
{
    hf_result_t r;
    hf_result_init(&r);
    hf_err_t err = hf_result_read(path, &r);
    hf_result_clear(&r);
    return err;
}

static void test_result_truncated_and_garbage(void)
{
    char path[256];
    scratch_make();
    scratch_path(path, sizeof path, "RESULT.h5");
    hf_result_t r, back;
    hf_result_init(&r);
    hf_result_init(&back);
    make_result(&r);
    CU_ASSERT_EQUAL_FATAL(hf_result_write(path, &r), HF_OK);
    long size = file_size(path);
    CU_ASSERT_FATAL(size > 0);
    CU_ASSERT_FATAL(truncate(path, size / 2) == 0);
    hf_err_t err;
    long printed = stderr_bytes_during(read_and_clear, path, &err);
    CU_ASSERT_EQUAL(err, HF_ERR_CORRUPT);
    CU_ASSERT(strstr(hf_error_msg(), path) != NULL);
    CU_ASSERT(strstr(hf_error_msg(), "not a readable HDF5 file") != NULL);
    CU_ASSERT_EQUAL(printed, 0); /* HDF5's error stack is not printed */

    FILE *f = fopen(path, "w");
    CU_ASSERT_FATAL(f != NULL);
    fputs("this is not HDF5\n", f);
    fclose(f);
    /* no HDF5 signature at all: a file given by mistake, bad input (not damage) */
    CU_ASSERT_EQUAL(hf_result_read(path, &back), HF_ERR_INPUT);
    CU_ASSERT(strstr(hf_error_msg(), path) != NULL);
    CU_ASSERT(strstr(hf_error_msg(), "not an HDF5 file") != NULL);
    CU_ASSERT_EQUAL(hf_h5_signature(path), 0);
    f = fopen(path, "w");
    CU_ASSERT_FATAL(f != NULL);
    fclose(f);
    CU_ASSERT_EQUAL(hf_result_read(path, &back), HF_ERR_INPUT); /* empty */

    scratch_path(path, sizeof path, "missing.h5");
    CU_ASSERT_EQUAL(hf_result_read(path, &back), HF_ERR_IO);
    CU_ASSERT(strstr(hf_error_msg(), path) != NULL);
    CU_ASSERT_EQUAL(back.nrows, 0);
    hf_result_clear(&r);
    scratch_done();
}

/* Open a written result for editing with the raw HDF5 API. */
static hid_t open_rw(const char *path)
{
    hid_t f = H5Fopen(path, H5F_ACC_RDWR, H5P_DEFAULT);
    CU_ASSERT_FATAL(f >= 0);
    return f;
}

static void test_result_inconsistent(void)
{
    char path[256];
    scratch_make();
    scratch_path(path, sizeof path, "RESULT.h5");
    hf_result_t r, back;
    hf_result_init(&r);
    hf_result_init(&back);
    make_result(&r);

    /* n on /rows/0 no longer matches its datasets */
    CU_ASSERT_EQUAL_FATAL(hf_result_write(path, &r), HF_OK);
    hid_t f = open_rw(path), g = H5Gopen2(f, "rows/0", H5P_DEFAULT);
    CU_ASSERT_FATAL(g >= 0);
    CU_ASSERT(hf_h5_attr_write_i64(g, "n", 3) >= 0);
    H5Gclose(g);
    H5Fclose(f);
    CU_ASSERT_EQUAL(hf_result_read(path, &back), HF_ERR_CORRUPT);
    CU_ASSERT(strstr(hf_error_msg(), "/rows/0/keys") != NULL);
    CU_ASSERT(strstr(hf_error_msg(), path) == hf_error_msg());

    /* a row group missing */
    CU_ASSERT_EQUAL_FATAL(hf_result_write(path, &r), HF_OK);
    f = open_rw(path);
    CU_ASSERT(H5Ldelete(f, "rows/2", H5P_DEFAULT) >= 0);
    H5Fclose(f);
    CU_ASSERT_EQUAL(hf_result_read(path, &back), HF_ERR_CORRUPT);
    CU_ASSERT(strstr(hf_error_msg(), "/rows") != NULL);

    /* supports of the wrong size for the row */
    CU_ASSERT_EQUAL_FATAL(hf_result_write(path, &r), HF_OK);
    f = open_rw(path);
    g = H5Gopen2(f, "rows/2", H5P_DEFAULT);
    CU_ASSERT(hf_h5_attr_write_i64(g, "m", 5) >= 0);
    H5Gclose(g);
    H5Fclose(f);
    CU_ASSERT_EQUAL(hf_result_read(path, &back), HF_ERR_CORRUPT);
    CU_ASSERT(strstr(hf_error_msg(), "/rows/2") != NULL);

    /* another format */
    CU_ASSERT_EQUAL_FATAL(hf_result_write(path, &r), HF_OK);
    f = open_rw(path);
    CU_ASSERT(hf_h5_attr_write_str(f, "format", "headfuse-result-99") >= 0);
    H5Fclose(f);
    CU_ASSERT_EQUAL(hf_result_read(path, &back), HF_ERR_CORRUPT);
    CU_ASSERT(strstr(hf_error_msg(), "format") != NULL);

    /* a /table status that is not one of the three */
    CU_ASSERT_EQUAL_FATAL(hf_result_write(path, &r), HF_OK);
    f = open_rw(path);
    hid_t ds = H5Dopen2(f, "table", H5P_DEFAULT), mt = hf_h5_row_type(0);
    strcpy(r.rows[1].status, "weird");
    CU_ASSERT(H5Dwrite(ds, mt, H5S_ALL, H5S_ALL, H5P_DEFAULT, r.rows) >= 0);
    strcpy(r.rows[1].status, "open");
    H5Tclose(mt);
    H5Dclose(ds);
    H5Fclose(f);
    CU_ASSERT_EQUAL(hf_result_read(path, &back), HF_ERR_CORRUPT);
    CU_ASSERT(strstr(hf_error_msg(), "/table[1]: invalid status") != NULL);
    hf_result_clear(&r);
    scratch_done();
}

/* ---- shards ---- */

#define FP "job-fingerprint-1"

/* The record of a whole unit. */
static hf_unit_record_t unit_rec(int32_t row, int64_t m, int64_t unit, int64_t found)
{
    return (hf_unit_record_t){.row = row,
                              .rank = 3,
                              .m = m,
                              .unit = unit,
                              .lo = 0,
                              .hi = HF_CELLS_ALL,
                              .nodes = 10 * unit + 1,
                              .found = found,
                              .seconds = 0.125 * (double)unit};
}

/* Write `nunits` units of row 0, m 4; unit u has u % 3 found records. */
static void write_units(hf_shard_t *sh, long first, long nunits)
{
    char rec[128];
    for (long u = first; u < first + nunits; u++) {
        for (long j = 0; j < u % 3; j++) {
            snprintf(rec, sizeof rec, "{\"unit\": %ld, \"j\": %ld, \"keys\": [[0,1],[1,0]]}", u, j);
            CU_ASSERT_EQUAL_FATAL(hf_shard_add_found(sh, 0, 4, u, 0, rec), HF_OK);
        }
        hf_unit_record_t ur = unit_rec(0, 4, u, u % 3);
        CU_ASSERT_EQUAL_FATAL(hf_shard_finish_unit(sh, &ur), HF_OK);
    }
}

/* Check what write_units(0, nunits) produced. */
static void check_units(const hf_shard_data_t *d, long nunits)
{
    CU_ASSERT_EQUAL_FATAL(d->nunits, nunits);
    long nf = 0;
    for (long u = 0; u < nunits; u++) {
        hf_unit_record_t e = unit_rec(0, 4, u, u % 3);
        CU_ASSERT(!memcmp(&d->units[u], &e, sizeof e));
        nf += u % 3;
    }
    CU_ASSERT_EQUAL_FATAL(d->nfound, nf);
    long i = 0;
    char rec[128];
    for (long u = 0; u < nunits; u++)
        for (long j = 0; j < u % 3; j++, i++) {
            snprintf(rec, sizeof rec, "{\"unit\": %ld, \"j\": %ld, \"keys\": [[0,1],[1,0]]}", u, j);
            CU_ASSERT_STRING_EQUAL(d->found_record[i], rec);
            CU_ASSERT_EQUAL(d->found_row[i], 0);
            CU_ASSERT_EQUAL(d->found_m[i], 4);
            CU_ASSERT_EQUAL(d->found_unit[i], u);
        }
}

static void test_shard_roundtrip(void)
{
    char path[256];
    scratch_make();
    scratch_path(path, sizeof path, "shard.0.h5");
    hf_shard_t *sh;
    CU_ASSERT_EQUAL_FATAL(hf_shard_create(path, FP, NULL, &sh), HF_OK);
    hf_shard_data_t d;
    hf_shard_data_init(&d);
    /* an empty shard is readable at once */
    CU_ASSERT_EQUAL(hf_shard_read(path, FP, &d), HF_OK);
    CU_ASSERT_EQUAL(d.nunits, 0);
    CU_ASSERT_EQUAL(d.nfound, 0);
    hf_shard_data_clear(&d);

    write_units(sh, 0, 150); /* more than two chunks */
    /* a unit in flight, its found records written but never completed */
    CU_ASSERT_EQUAL(hf_shard_add_found(sh, 0, 4, 150, 0, "{\"in flight\": 1}"), HF_OK);
    CU_ASSERT_EQUAL(hf_shard_add_found(sh, 0, 4, 150, 0, "{\"in flight\": 2}"), HF_OK);
    CU_ASSERT_EQUAL(hf_shard_debug_write_found(sh), HF_OK);
    /* a buffered record of the next unit is simply lost on close */
    CU_ASSERT_EQUAL(hf_shard_add_found(sh, 0, 4, 151, 0, "{\"buffered\": 1}"), HF_OK);
    CU_ASSERT_EQUAL(hf_shard_destroy(&sh), HF_OK);
    CU_ASSERT_PTR_NULL(sh);
    CU_ASSERT_EQUAL(hf_shard_destroy(&sh), HF_OK); /* accepts NULL */

    CU_ASSERT_EQUAL_FATAL(hf_shard_read(path, FP, &d), HF_OK);
    check_units(&d, 150);
    for (long i = 0; i < d.nfound; i++)
        CU_ASSERT(strstr(d.found_record[i], "flight") == NULL);
    hf_shard_data_clear(&d);

    /* never clobber an existing shard */
    CU_ASSERT_EQUAL(hf_shard_create(path, FP, NULL, &sh), HF_ERR_IO);
    CU_ASSERT(strstr(hf_error_msg(), path) != NULL);
    CU_ASSERT_PTR_NULL(sh);
    CU_ASSERT_EQUAL_FATAL(hf_shard_read(path, FP, &d), HF_OK); /* and it is intact */
    CU_ASSERT_EQUAL(d.nunits, 150);
    hf_shard_data_clear(&d);
    scratch_done();
}

static void test_shard_mismatched_unit(void)
{
    char path[256];
    scratch_make();
    scratch_path(path, sizeof path, "shard.h5");
    hf_shard_t *sh;
    CU_ASSERT_EQUAL_FATAL(hf_shard_create(path, FP, NULL, &sh), HF_OK);
    CU_ASSERT_EQUAL(hf_shard_add_found(sh, 1, 4, 7, 0, "{}"), HF_OK);
    hf_unit_record_t u = unit_rec(1, 4, 8, 1);
    CU_ASSERT_EQUAL(hf_shard_finish_unit(sh, &u), HF_ERR_INTERNAL);
    CU_ASSERT_EQUAL(hf_shard_destroy(&sh), HF_OK);
    scratch_done();
}

static void test_shard_fingerprint(void)
{
    char path[256];
    scratch_make();
    scratch_path(path, sizeof path, "shard.1.h5");
    hf_shard_t *sh;
    CU_ASSERT_EQUAL_FATAL(hf_shard_create(path, FP, NULL, &sh), HF_OK);
    write_units(sh, 0, 3);
    CU_ASSERT_EQUAL(hf_shard_destroy(&sh), HF_OK);
    hf_shard_data_t d;
    hf_shard_data_init(&d);
    /* the attributes are fixed-length strings: no global heap in a shard */
    hid_t f = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT);
    CU_ASSERT_FATAL(f >= 0);
    const char *attrs[2] = {"format", "fingerprint"};
    for (int i = 0; i < 2; i++) {
        hid_t a = H5Aopen(f, attrs[i], H5P_DEFAULT), t = a >= 0 ? H5Aget_type(a) : -1;
        CU_ASSERT(t >= 0 && H5Tget_class(t) == H5T_STRING && H5Tis_variable_str(t) == 0);
        if (t >= 0)
            H5Tclose(t);
        if (a >= 0)
            H5Aclose(a);
    }
    H5Fclose(f);
    CU_ASSERT_EQUAL(hf_shard_read(path, "another-job", &d), HF_ERR_INPUT);
    CU_ASSERT(strstr(hf_error_msg(), path) != NULL);
    CU_ASSERT(strstr(hf_error_msg(), "written by an older headfuse") != NULL); /* no about */
    CU_ASSERT_EQUAL(d.nunits, 0);
    CU_ASSERT_PTR_NULL(d.units);
    /* a shard that says what it holds is named by it when refused */
    scratch_path(path, sizeof path, "shard.2.h5");
    CU_ASSERT_EQUAL_FATAL(hf_shard_create(path, FP, "wd:d=3 span 2, engine plain", &sh), HF_OK);
    write_units(sh, 0, 1);
    CU_ASSERT_EQUAL(hf_shard_destroy(&sh), HF_OK);
    CU_ASSERT_EQUAL(hf_shard_read(path, FP, &d), HF_OK);
    hf_shard_data_clear(&d);
    CU_ASSERT_EQUAL(hf_shard_read(path, "another-job", &d), HF_ERR_INPUT);
    CU_ASSERT(strstr(hf_error_msg(), "shard of another search: it holds 'wd:d=3 span 2, engine "
                                     "plain'") != NULL);
    /* a result file is not a shard */
    hf_result_t r;
    hf_result_init(&r);
    make_result(&r);
    scratch_path(path, sizeof path, "RESULT.h5");
    CU_ASSERT_EQUAL_FATAL(hf_result_write(path, &r), HF_OK);
    CU_ASSERT_EQUAL(hf_shard_read(path, FP, &d), HF_ERR_CORRUPT);
    CU_ASSERT(strstr(hf_error_msg(), path) != NULL);
    hf_result_clear(&r);
    scratch_done();
}

static void test_shard_killed_writer(void)
{
    char path[256];
    scratch_make();
    scratch_path(path, sizeof path, "shard.killed.h5");
    fflush(NULL);
    pid_t pid = fork();
    CU_ASSERT_FATAL(pid >= 0);
    if (pid == 0) {
        hf_shard_t *sh;
        if (hf_shard_create(path, FP, NULL, &sh) != HF_OK)
            _exit(3);
        write_units(sh, 0, 70);
        /* found records of unit 70 reach the file, its completion record never does */
        if (hf_shard_add_found(sh, 0, 4, 70, 0, "{\"in flight\": 1}") != HF_OK ||
            hf_shard_debug_write_found(sh) != HF_OK)
            _exit(4);
        hf_shard_add_found(sh, 0, 4, 71, 0, "{\"buffered\": 1}");
        kill(getpid(), SIGKILL); /* never closed, no atexit handlers */
        _exit(5);
    }
    int status;
    CU_ASSERT_FATAL(waitpid(pid, &status, 0) == pid);
    CU_ASSERT_FATAL(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
    hf_shard_data_t d;
    hf_shard_data_init(&d);
    CU_ASSERT_EQUAL_FATAL(hf_shard_read(path, FP, &d), HF_OK);
    check_units(&d, 70);
    for (long i = 0; i < d.nfound; i++) {
        CU_ASSERT(strstr(d.found_record[i], "flight") == NULL);
        CU_ASSERT(strstr(d.found_record[i], "buffered") == NULL);
    }
    hf_shard_data_clear(&d);
    scratch_done();
}

/* A shard still open in its (SWMR) writer reads as a consistent snapshot. */
static void test_shard_live(void)
{
    char path[256], c = 0;
    int ready[2], go[2];
    scratch_make();
    scratch_path(path, sizeof path, "shard.live.h5");
    CU_ASSERT_FATAL(pipe(ready) == 0 && pipe(go) == 0);
    fflush(NULL);
    pid_t pid = fork();
    CU_ASSERT_FATAL(pid >= 0);
    if (pid == 0) {
        hf_shard_t *sh;
        int ok = hf_shard_create(path, FP, NULL, &sh) == HF_OK;
        if (ok)
            write_units(sh, 0, 5);
        if (write(ready[1], &c, 1) != 1 || read(go[0], &c, 1) != 1)
            _exit(3);
        if (ok)
            write_units(sh, 5, 4);
        _exit(ok && hf_shard_destroy(&sh) == HF_OK ? 0 : 4);
    }
    CU_ASSERT_FATAL(read(ready[0], &c, 1) == 1);
    hf_shard_data_t d;
    hf_shard_data_init(&d);
    CU_ASSERT_EQUAL(hf_shard_read(path, FP, &d), HF_OK);
    check_units(&d, 5);
    hf_shard_data_clear(&d);
    CU_ASSERT_FATAL(write(go[1], &c, 1) == 1);
    int status;
    CU_ASSERT_FATAL(waitpid(pid, &status, 0) == pid);
    CU_ASSERT(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    CU_ASSERT_EQUAL_FATAL(hf_shard_read(path, FP, &d), HF_OK);
    check_units(&d, 9);
    hf_shard_data_clear(&d);
    close(ready[0]);
    close(ready[1]);
    close(go[0]);
    close(go[1]);
    scratch_done();
}

/* A full disk is met when reserving space before a unit: the unit fails naming
 * the file, and the shard stays intact and usable. (A write failing inside HDF5
 * itself would leave HDF5 1.10 unable to close the file.) */
static void test_shard_disk_full(void)
{
    char path[256];
    scratch_make();
    scratch_path(path, sizeof path, "shard.full.h5");
    hf_shard_t *sh;
    CU_ASSERT_EQUAL_FATAL(hf_shard_create(path, FP, NULL, &sh), HF_OK);
    write_units(sh, 0, 6);
    hf_knob_set(HF_KNOB_SHARD_FAIL_RESERVE, 1);
    CU_ASSERT_EQUAL(hf_shard_add_found(sh, 0, 4, 6, 0, "{\"lost\": 1}"), HF_OK);
    hf_unit_record_t u = unit_rec(0, 4, 6, 1);
    CU_ASSERT_EQUAL(hf_shard_finish_unit(sh, &u), HF_ERR_IO);
    hf_knob_unset(HF_KNOB_SHARD_FAIL_RESERVE);
    CU_ASSERT(strstr(hf_error_msg(), path) != NULL);
    CU_ASSERT(strstr(hf_error_msg(), "No space left") != NULL);
    write_units(sh, 6, 3);
    CU_ASSERT_EQUAL(hf_shard_destroy(&sh), HF_OK);
    hf_shard_data_t d;
    hf_shard_data_init(&d);
    CU_ASSERT_EQUAL_FATAL(hf_shard_read(path, FP, &d), HF_OK);
    check_units(&d, 9);
    hf_shard_data_clear(&d);
    scratch_done();
}

/* Write a closed shard with n units to path. */
static void make_shard(const char *path, long n)
{
    hf_shard_t *sh;
    CU_ASSERT_EQUAL_FATAL(hf_shard_create(path, FP, NULL, &sh), HF_OK);
    write_units(sh, 0, n);
    CU_ASSERT_EQUAL_FATAL(hf_shard_destroy(&sh), HF_OK);
}

/* Read and expect HF_ERR_CORRUPT naming the file, with nothing returned. */
static void expect_corrupt_shard(const char *path)
{
    hf_shard_data_t d;
    hf_shard_data_init(&d);
    hf_err_t err = hf_shard_read(path, FP, &d);
    CU_ASSERT_EQUAL(err, HF_ERR_CORRUPT);
    CU_ASSERT(strstr(hf_error_msg(), path) != NULL);
    CU_ASSERT_EQUAL(d.nunits, 0);
    CU_ASSERT_EQUAL(d.nfound, 0);
    if (err == HF_OK)
        hf_shard_data_clear(&d);
}

static void test_shard_truncated(void)
{
    char path[256];
    scratch_make();
    scratch_path(path, sizeof path, "shard.trunc.h5");
    make_shard(path, 100);
    long size = file_size(path);
    CU_ASSERT_FATAL(truncate(path, size / 2) == 0);
    expect_corrupt_shard(path);
    CU_ASSERT_FATAL(truncate(path, 0) == 0);
    expect_corrupt_shard(path);
    scratch_done();
}

/* File address and size of chunk `index` of dataset `name` of a shard. */
static void chunk_location(const char *path, const char *name, hsize_t index, haddr_t *addr,
                           hsize_t *size)
{
    hid_t f = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT);
    CU_ASSERT_FATAL(f >= 0);
    hid_t ds = H5Dopen2(f, name, H5P_DEFAULT), sp = H5Dget_space(ds);
    hsize_t offset[1];
    unsigned mask;
    CU_ASSERT_FATAL(H5Dget_chunk_info(ds, sp, index, offset, &mask, addr, size) >= 0);
    H5Sclose(sp);
    H5Dclose(ds);
    H5Fclose(f);
}

/* Flip `n` bytes at file offset `at`. */
static void flip_bytes(const char *path, long at, int n)
{
    FILE *f = fopen(path, "r+b");
    CU_ASSERT_FATAL(f != NULL);
    for (int i = 0; i < n; i++) {
        fseek(f, at + i, SEEK_SET);
        int c = fgetc(f);
        fseek(f, at + i, SEEK_SET);
        fputc(c ^ 0x5a, f);
    }
    fclose(f);
}

/* Offset of the first occurrence of text in the file, -1 if none. */
static long find_in_file(const char *path, const char *text)
{
    long size = file_size(path);
    char *buf = malloc((size_t)size);
    FILE *f = fopen(path, "rb");
    long at = -1;
    if (buf && f && fread(buf, 1, (size_t)size, f) == (size_t)size) {
        size_t n = strlen(text);
        for (long i = 0; i + (long)n <= size; i++)
            if (!memcmp(buf + i, text, n)) {
                at = i;
                break;
            }
    }
    if (f)
        fclose(f);
    free(buf);
    return at;
}

static void test_shard_corrupted(void)
{
    char path[256];
    haddr_t addr;
    hsize_t size;
    scratch_make();

    /* bytes changed in the middle of a /units chunk: Fletcher32 catches it */
    scratch_path(path, sizeof path, "shard.units.h5");
    make_shard(path, 100);
    chunk_location(path, "units", 1, &addr, &size);
    flip_bytes(path, (long)(addr + size / 2), 4);
    expect_corrupt_shard(path);
    CU_ASSERT(strstr(hf_error_msg(), "/units") != NULL);

    /* the same in a /found chunk */
    scratch_path(path, sizeof path, "shard.found.h5");
    make_shard(path, 100);
    chunk_location(path, "found", 0, &addr, &size);
    flip_bytes(path, (long)(addr + size / 2), 2);
    expect_corrupt_shard(path);
    CU_ASSERT(strstr(hf_error_msg(), "/found") != NULL);

    /* a record's text, in /text */
    scratch_path(path, sizeof path, "shard.text.h5");
    make_shard(path, 100);
    long at = find_in_file(path, "{\"unit\": 50, \"j\": 1");
    CU_ASSERT_FATAL(at >= 0);
    flip_bytes(path, at + 10, 1);
    expect_corrupt_shard(path);
    CU_ASSERT(strstr(hf_error_msg(), "/text") != NULL);
    scratch_done();
}

/* Grow dataset `name` of a closed shard by `by` rows without writing them, as a
 * kill between the length update and the data would leave it. */
static void grow_unwritten(const char *path, const char *name, hsize_t by)
{
    hid_t f = H5Fopen(path, H5F_ACC_RDWR, H5P_DEFAULT);
    CU_ASSERT_FATAL(f >= 0);
    hid_t ds = H5Dopen2(f, name, H5P_DEFAULT), sp = H5Dget_space(ds);
    hsize_t dims[2];
    int rank = H5Sget_simple_extent_dims(sp, dims, NULL);
    CU_ASSERT_FATAL(rank >= 1);
    dims[0] += by;
    CU_ASSERT(H5Dset_extent(ds, dims) >= 0);
    H5Sclose(sp);
    H5Dclose(ds);
    H5Fclose(f);
}

static void test_shard_tail_and_texts(void)
{
    char path[256];
    scratch_make();
    hf_shard_data_t d;
    hf_shard_data_init(&d);

    /* never-written records at the end are no records: 10 units, not 12 */
    scratch_path(path, sizeof path, "shard.tail.h5");
    make_shard(path, 10);
    grow_unwritten(path, "units", 2);
    grow_unwritten(path, "found", 3);
    grow_unwritten(path, "text", 1);
    CU_ASSERT_EQUAL_FATAL(hf_shard_read(path, FP, &d), HF_OK);
    check_units(&d, 10);
    hf_shard_data_clear(&d);

    /* ... but an unwritten record followed by a written one is damage */
    hid_t f = H5Fopen(path, H5F_ACC_RDWR, H5P_DEFAULT);
    CU_ASSERT_FATAL(f >= 0);
    hid_t ds = H5Dopen2(f, "units", H5P_DEFAULT), mt = hf_h5_unit_type(0);
    hsize_t dims = 13, start = 12, one = 1;
    CU_ASSERT(H5Dset_extent(ds, &dims) >= 0);
    hid_t fs = H5Dget_space(ds), ms = H5Screate_simple(1, &one, NULL);
    H5Sselect_hyperslab(fs, H5S_SELECT_SET, &start, NULL, &one, NULL);
    hf_unit_record_t u = unit_rec(0, 4, 12, 0);
    CU_ASSERT(H5Dwrite(ds, mt, ms, fs, H5P_DEFAULT, &u) >= 0);
    H5Sclose(ms);
    H5Sclose(fs);
    H5Tclose(mt);
    H5Dclose(ds);
    H5Fclose(f);
    expect_corrupt_shard(path);
    CU_ASSERT(strstr(hf_error_msg(), "/units[10]") != NULL);

    /* a completed unit's record text rewritten behind the shard's back (chunk
     * checksums recomputed by HDF5): the record checksum catches it */
    scratch_path(path, sizeof path, "shard.rewritten.h5");
    make_shard(path, 10);
    f = H5Fopen(path, H5F_ACC_RDWR, H5P_DEFAULT);
    CU_ASSERT_FATAL(f >= 0);
    ds = H5Dopen2(f, "text", H5P_DEFAULT);
    unsigned char block[256];
    memset(block, 'x', sizeof block);
    hsize_t bstart[2] = {0, 0}, bcount[2] = {1, 256};
    fs = H5Dget_space(ds);
    ms = H5Screate_simple(2, bcount, NULL);
    H5Sselect_hyperslab(fs, H5S_SELECT_SET, bstart, NULL, bcount, NULL);
    CU_ASSERT(H5Dwrite(ds, H5T_NATIVE_UINT8, ms, fs, H5P_DEFAULT, block) >= 0);
    H5Sclose(ms);
    H5Sclose(fs);
    H5Dclose(ds);
    H5Fclose(f);
    expect_corrupt_shard(path);
    CU_ASSERT(strstr(hf_error_msg(), "/found[0]: record text checksum mismatch") != NULL);
    scratch_done();
}

/* ---- ranges of cells ---- */

/* The record of cells [lo, hi) of unit (row 0, m, unit), from rank 2. */
static hf_unit_record_t range_rec(int64_t m, int64_t unit, int64_t lo, int64_t hi, int64_t found)
{
    return (hf_unit_record_t){.row = 0,
                              .rank = 2,
                              .m = m,
                              .unit = unit,
                              .lo = lo,
                              .hi = hi,
                              .nodes = 100 + lo,
                              .found = found,
                              .seconds = 0.5};
}

/* Finish range r with one found record per text in recs (NULL-terminated). */
static void write_range(hf_shard_t *sh, hf_unit_record_t r, const char *const *recs)
{
    for (long j = 0; recs && recs[j]; j++)
        CU_ASSERT_EQUAL_FATAL(hf_shard_add_found(sh, r.row, r.m, r.unit, r.lo, recs[j]), HF_OK);
    CU_ASSERT_EQUAL_FATAL(hf_shard_finish_unit(sh, &r), HF_OK);
}

/* Append rec to /units of a closed shard behind the writer's back. */
static void append_unit_raw(const char *path, const hf_unit_record_t *rec)
{
    hid_t f = H5Fopen(path, H5F_ACC_RDWR, H5P_DEFAULT);
    CU_ASSERT_FATAL(f >= 0);
    hid_t ds = H5Dopen2(f, "units", H5P_DEFAULT), mt = hf_h5_unit_type(0), sp = H5Dget_space(ds);
    hsize_t n, one = 1;
    CU_ASSERT_FATAL(H5Sget_simple_extent_dims(sp, &n, NULL) == 1);
    H5Sclose(sp);
    hsize_t dims = n + 1;
    CU_ASSERT_FATAL(H5Dset_extent(ds, &dims) >= 0);
    hid_t fs = H5Dget_space(ds), ms = H5Screate_simple(1, &one, NULL);
    H5Sselect_hyperslab(fs, H5S_SELECT_SET, &n, NULL, &one, NULL);
    CU_ASSERT(H5Dwrite(ds, mt, ms, fs, H5P_DEFAULT, rec) >= 0);
    H5Sclose(ms);
    H5Sclose(fs);
    H5Tclose(mt);
    H5Dclose(ds);
    H5Fclose(f);
}

/* Several ranges of one unit round-trip with their found records (found_lo), in the order
 * written; found records of a range that was never completed are dropped, even when
 * their cells lie inside a completed range; the writer refuses a range the reader would
 * refuse and records of another range. */
/* Large records (a witness of 10^5 keys and more) live in /bigtext, a few compressed rows
 * of 1 MiB instead of 256-byte chunks: sizes around the threshold and past a row read back
 * exactly, in order among small ones; a flipped byte inside one is damage, named. */
static void test_shard_big_records(void)
{
    char path[256];
    scratch_make();
    scratch_path(path, sizeof path, "shard.big.h5");
    hf_shard_t *sh;
    CU_ASSERT_EQUAL_FATAL(hf_shard_create(path, FP, NULL, &sh), HF_OK);
    const long sizes[] = {10, (64L << 10) - 1, 64L << 10, (1L << 20) - 1, 1L << 20, 3L << 20, 7};
    enum { N = sizeof sizes / sizeof *sizes };
    char *want[N];
    for (int i = 0; i < N; i++) {
        want[i] = malloc((size_t)sizes[i] + 1);
        CU_ASSERT_FATAL(want[i] != NULL);
        for (long k = 0; k < sizes[i]; k++)
            want[i][k] = (char)('a' + (k * 7 + i) % 26);
        want[i][sizes[i]] = '\0';
        CU_ASSERT_EQUAL_FATAL(hf_shard_add_found(sh, 0, 4, i / 2, 0, want[i]), HF_OK);
        if (i % 2 == 1 || i == N - 1) {
            hf_unit_record_t ur = unit_rec(0, 4, i / 2, i % 2 + 1);
            CU_ASSERT_EQUAL_FATAL(hf_shard_finish_unit(sh, &ur), HF_OK);
        }
    }
    CU_ASSERT_EQUAL_FATAL(hf_shard_destroy(&sh), HF_OK);
    hf_shard_data_t d;
    hf_shard_data_init(&d);
    CU_ASSERT_EQUAL_FATAL(hf_shard_read(path, FP, &d), HF_OK);
    CU_ASSERT_EQUAL_FATAL(d.nfound, N);
    for (int i = 0; i < N; i++) {
        CU_ASSERT_EQUAL(d.found_unit[i], i / 2);
        CU_ASSERT(strlen(d.found_record[i]) == (size_t)sizes[i] &&
                  !strcmp(d.found_record[i], want[i]));
    }
    hf_shard_data_clear(&d);
    /* the 3 MiB record compresses: the file is far smaller than the text */
    CU_ASSERT(file_size(path) < (2L << 20));
    /* damage inside /bigtext's data: the reader refuses the shard, naming it */
    hid_t f = open_rw(path);
    hid_t ds = H5Dopen2(f, "bigtext", H5P_DEFAULT);
    CU_ASSERT_FATAL(ds >= 0);
    hsize_t start[2] = {3, 12345}, count[2] = {1, 1};
    hid_t fs = H5Dget_space(ds), ms = H5Screate_simple(2, count, NULL);
    unsigned char x = '#';
    H5Sselect_hyperslab(fs, H5S_SELECT_SET, start, NULL, count, NULL);
    CU_ASSERT(H5Dwrite(ds, H5T_NATIVE_UINT8, ms, fs, H5P_DEFAULT, &x) >= 0);
    H5Sclose(ms);
    H5Sclose(fs);
    H5Dclose(ds);
    H5Fclose(f);
    expect_corrupt_shard(path);
    CU_ASSERT(strstr(hf_error_msg(), "checksum mismatch") != NULL);
    for (int i = 0; i < N; i++)
        free(want[i]);
    /* a shard of format 2 (no /bigtext; every record in /text) still reads */
    scratch_path(path, sizeof path, "shard.v2only.h5");
    make_shard(path, 7);
    f = open_rw(path);
    CU_ASSERT_FATAL(H5Ldelete(f, "bigtext", H5P_DEFAULT) >= 0);
    CU_ASSERT_FATAL(hf_h5_attr_write_fixed_str(f, "format", "headfuse-shard-2") >= 0);
    H5Fclose(f);
    CU_ASSERT_EQUAL_FATAL(hf_shard_read(path, FP, &d), HF_OK);
    check_units(&d, 7);
    hf_shard_data_clear(&d);
    scratch_done();
}

static void test_shard_ranges(void)
{
    char path[256];
    scratch_make();
    scratch_path(path, sizeof path, "shard.ranges.h5");
    hf_shard_t *sh;
    CU_ASSERT_EQUAL_FATAL(hf_shard_create(path, FP, NULL, &sh), HF_OK);
    const char *first[] = {"{\"r\": 0, \"j\": 0}", "{\"r\": 0, \"j\": 1}", NULL};
    const char *last[] = {"{\"r\": 10}", NULL}, *whole[] = {"{\"whole\": 6}", NULL};
    hf_unit_record_t want[4] = {range_rec(4, 5, 0, 3, 2), range_rec(4, 5, 3, 10, 0),
                                range_rec(4, 6, 0, HF_CELLS_ALL, 1),
                                range_rec(4, 5, 10, HF_CELLS_ALL, 1)};
    write_range(sh, want[0], first);
    write_range(sh, want[1], NULL);
    write_range(sh, want[2], whole);
    write_range(sh, want[3], last);
    /* cells 7.. of unit 5 in flight: inside [3, 10), but that range starts at 3 */
    CU_ASSERT_EQUAL(hf_shard_add_found(sh, 0, 4, 5, 7, "{\"in flight\": 7}"), HF_OK);
    CU_ASSERT_EQUAL(hf_shard_debug_write_found(sh), HF_OK);
    /* a range in flight with no completed range of its unit at all */
    CU_ASSERT_EQUAL(hf_shard_add_found(sh, 0, 4, 9, 20, "{\"in flight\": 20}"), HF_OK);
    CU_ASSERT_EQUAL(hf_shard_debug_write_found(sh), HF_OK);

    /* the writer refuses an empty or negative range, and a record of another range */
    hf_unit_record_t bad = range_rec(4, 8, 5, 5, 0);
    CU_ASSERT_EQUAL(hf_shard_finish_unit(sh, &bad), HF_ERR_INTERNAL);
    CU_ASSERT(strstr(hf_error_msg(), "invalid cell range [5, 5)") != NULL);
    bad = range_rec(4, 8, -1, 4, 0);
    CU_ASSERT_EQUAL(hf_shard_finish_unit(sh, &bad), HF_ERR_INTERNAL);
    CU_ASSERT_EQUAL(hf_shard_add_found(sh, 0, 4, 8, 0, "{\"other range\": 1}"), HF_OK);
    bad = range_rec(4, 8, 4, 9, 1);
    CU_ASSERT_EQUAL(hf_shard_finish_unit(sh, &bad), HF_ERR_INTERNAL);
    CU_ASSERT(strstr(hf_error_msg(), "cells from 0) buffered while finishing unit") != NULL);
    CU_ASSERT_EQUAL(hf_shard_destroy(&sh), HF_OK);

    hf_shard_data_t d;
    hf_shard_data_init(&d);
    CU_ASSERT_EQUAL_FATAL(hf_shard_read(path, FP, &d), HF_OK);
    CU_ASSERT_EQUAL_FATAL(d.nunits, 4);
    for (int i = 0; i < 4; i++)
        CU_ASSERT(!memcmp(&d.units[i], &want[i], sizeof want[i]));
    CU_ASSERT_EQUAL_FATAL(d.nfound, 4);
    const char *texts[4] = {first[0], first[1], whole[0], last[0]};
    int64_t units[4] = {5, 5, 6, 5}, los[4] = {0, 0, 0, 10};
    for (int i = 0; i < 4; i++) {
        CU_ASSERT_STRING_EQUAL(d.found_record[i], texts[i]);
        CU_ASSERT_EQUAL(d.found_row[i], 0);
        CU_ASSERT_EQUAL(d.found_m[i], 4);
        CU_ASSERT_EQUAL(d.found_unit[i], units[i]);
        CU_ASSERT_EQUAL(d.found_lo[i], los[i]);
    }
    hf_shard_data_clear(&d);

    /* the file says format 3 */
    hid_t f = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT);
    char *format = NULL;
    CU_ASSERT_FATAL(f >= 0);
    CU_ASSERT_EQUAL(hf_h5_attr_read_str(f, "format", path, "/", &format), HF_OK);
    CU_ASSERT_STRING_EQUAL(format, "headfuse-shard-3");
    free(format);
    H5Fclose(f);

    /* a record of an empty or a negative range written behind the writer's back is
     * damage, named by its index */
    scratch_path(path, sizeof path, "shard.badrange.h5");
    make_shard(path, 3);
    hf_unit_record_t empty = range_rec(4, 5, 4, 4, 0);
    append_unit_raw(path, &empty);
    expect_corrupt_shard(path);
    CU_ASSERT(strstr(hf_error_msg(), "/units[3]: invalid record") != NULL);
    unlink(path);
    make_shard(path, 3);
    hf_unit_record_t negative = range_rec(4, 5, -2, 4, 0);
    append_unit_raw(path, &negative);
    expect_corrupt_shard(path);
    CU_ASSERT(strstr(hf_error_msg(), "/units[3]: invalid record") != NULL);
    unlink(path);
    make_shard(path, 3);
    hf_unit_record_t reversed = range_rec(4, 5, 9, 3, 0);
    append_unit_raw(path, &reversed);
    expect_corrupt_shard(path);
    CU_ASSERT(strstr(hf_error_msg(), "/units[3]: invalid record") != NULL);
    scratch_done();
}

/* The shard fixture of format 1 (tests/fixtures/shards/README.md: written by the store
 * before cell ranges), copied to path. */
#define SHARD_V1_FIXTURE "tests/fixtures/shards/format1.h5"

static void copy_file(const char *from, const char *to)
{
    FILE *in = fopen(from, "rb"), *out = fopen(to, "wb");
    CU_ASSERT_FATAL(in != NULL && out != NULL);
    char buf[4096];
    size_t n;
    while ((n = fread(buf, 1, sizeof buf, in)) > 0)
        CU_ASSERT_FATAL(fwrite(buf, 1, n, out) == n);
    fclose(in);
    CU_ASSERT_FATAL(fclose(out) == 0);
}

/* A shard of format 1 reads as whole units: its 4 units as ranges [0, HF_CELLS_ALL),
 * its found records with lo 0, the in-flight unit's record dropped; a format neither 1
 * nor 2 is refused naming both. */
static void test_shard_format1(void)
{
    char path[256];
    scratch_make();
    scratch_path(path, sizeof path, "shard.v1.h5");
    copy_file(SHARD_V1_FIXTURE, path);
    hf_shard_data_t d;
    hf_shard_data_init(&d);
    CU_ASSERT_EQUAL_FATAL(hf_shard_read(path, FP, &d), HF_OK);
    check_units(&d, 4); /* unit_rec: a whole unit */
    for (long i = 0; i < d.nunits; i++) {
        CU_ASSERT_EQUAL(d.units[i].lo, 0);
        CU_ASSERT_EQUAL(d.units[i].hi, HF_CELLS_ALL);
    }
    for (long i = 0; i < d.nfound; i++) {
        CU_ASSERT_EQUAL(d.found_lo[i], 0);
        CU_ASSERT(strstr(d.found_record[i], "flight") == NULL);
    }
    hf_shard_data_clear(&d);
    /* its fingerprint and about are checked as in format 2 */
    CU_ASSERT_EQUAL(hf_shard_read(path, "another-job", &d), HF_ERR_INPUT);
    CU_ASSERT(strstr(hf_error_msg(), "it holds 'format-1 fixture'") != NULL);

    /* format 1 with format-2 records, or format 2 with format-1 records: damage */
    hid_t f = open_rw(path);
    CU_ASSERT_FATAL(hf_h5_attr_write_fixed_str(f, "format", "headfuse-shard-2") >= 0);
    H5Fclose(f);
    expect_corrupt_shard(path);
    CU_ASSERT(strstr(hf_error_msg(), "/units: has 7 fields, expected 9") != NULL);
    scratch_path(path, sizeof path, "shard.v2.h5");
    make_shard(path, 2);
    f = open_rw(path);
    CU_ASSERT_FATAL(hf_h5_attr_write_fixed_str(f, "format", "headfuse-shard-1") >= 0);
    H5Fclose(f);
    expect_corrupt_shard(path);
    CU_ASSERT(strstr(hf_error_msg(), "/units: has 9 fields, expected 7") != NULL);
    f = open_rw(path);
    CU_ASSERT_FATAL(hf_h5_attr_write_fixed_str(f, "format", "headfuse-shard-9") >= 0);
    H5Fclose(f);
    expect_corrupt_shard(path);
    CU_ASSERT(strstr(hf_error_msg(), "format 'headfuse-shard-9', expected 'headfuse-shard-3', "
                                     "'headfuse-shard-2' or 'headfuse-shard-1'") != NULL);
    scratch_done();
}

/* ---- the merge of a shard directory ---- */

/* One range to write: m 4, the unit, its cells and its found records' texts. */
typedef struct {
    int64_t unit, lo, hi;
    const char *recs[3]; /* NULL-terminated */
} range_spec_t;

/* A closed shard dir/name holding the n ranges, in order. */
static void make_range_shard(const char *dir, const char *name, const range_spec_t *r, int n)
{
    char path[512];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    hf_shard_t *sh;
    CU_ASSERT_EQUAL_FATAL(hf_shard_create(path, FP, NULL, &sh), HF_OK);
    for (int i = 0; i < n; i++) {
        long nrec = 0;
        while (nrec < 3 && r[i].recs[nrec])
            nrec++;
        write_range(sh, range_rec(4, r[i].unit, r[i].lo, r[i].hi, nrec), r[i].recs);
    }
    CU_ASSERT_EQUAL_FATAL(hf_shard_destroy(&sh), HF_OK);
}

static void make_dir(char *dir, size_t n, const char *name)
{
    scratch_path(dir, n, name);
    CU_ASSERT_FATAL(mkdir(dir, 0777) == 0);
}

/* The merged ranges are exactly want[0..n) (unit, lo, hi), in order. */
static void expect_ranges(const hf_shards_merged_t *g, const int64_t (*want)[3], long n)
{
    CU_ASSERT_EQUAL_FATAL(g->nunits, n);
    for (long i = 0; i < n; i++) {
        CU_ASSERT_EQUAL(g->units[i].m, 4);
        CU_ASSERT_EQUAL(g->units[i].unit, want[i][0]);
        CU_ASSERT_EQUAL(g->units[i].lo, want[i][1]);
        CU_ASSERT_EQUAL(g->units[i].hi, want[i][2]);
    }
}

/* The merged found records are exactly texts[0..n), in order, each with its unit and lo. */
static void expect_found(const hf_shards_merged_t *g, const char *const *texts,
                         const int64_t (*where)[2], long n)
{
    CU_ASSERT_EQUAL_FATAL(g->nfound, n);
    for (long i = 0; i < n; i++) {
        CU_ASSERT_STRING_EQUAL(g->found_record[i], texts[i]);
        CU_ASSERT_EQUAL(g->found_m[i], 4);
        CU_ASSERT_EQUAL(g->found_unit[i], where[i][0]);
        CU_ASSERT_EQUAL(g->found_lo[i], where[i][1]);
    }
}

/* Disjoint ranges of one unit from several shards (and from one) are all kept, each with
 * its found records. */
static void test_merge_disjoint(void)
{
    char dir[256];
    scratch_make();
    make_dir(dir, sizeof dir, "r.h5.shards");
    const range_spec_t a[] = {{5, 0, 3, {"a0", NULL}}, {6, 0, HF_CELLS_ALL, {"a6", NULL}}};
    const range_spec_t b[] = {{5, 3, 10, {"b0", "b1", NULL}}, {5, 20, 30, {NULL}}};
    const range_spec_t c[] = {{5, 10, 20, {NULL}}, {5, 30, HF_CELLS_ALL, {"c0", NULL}}};
    make_range_shard(dir, "run-1-1-r000.h5", a, 2);
    make_range_shard(dir, "run-1-1-r001.h5", b, 2);
    make_range_shard(dir, "run-1-1-r002.h5", c, 2);
    hf_shards_merged_t g;
    hf_shards_merged_init(&g);
    CU_ASSERT_EQUAL_FATAL(hf_shards_merge(dir, FP, &g), HF_OK);
    const int64_t ranges[6][3] = {{5, 0, 3},   {6, 0, HF_CELLS_ALL}, {5, 3, 10},
                                  {5, 20, 30}, {5, 10, 20},          {5, 30, HF_CELLS_ALL}};
    expect_ranges(&g, ranges, 6);
    const char *texts[5] = {"a0", "a6", "b0", "b1", "c0"};
    const int64_t where[5][2] = {{5, 0}, {6, 0}, {5, 3}, {5, 3}, {5, 30}};
    expect_found(&g, texts, where, 5);
    hf_shards_merged_clear(&g);
    scratch_done();
}

/* Set path's modification time to t seconds (plus a quarter). */
static void set_mtime(const char *dir, const char *name, long long t)
{
    char path[512];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    struct timespec ts[2] = {{(time_t)t, 250000000L}, {(time_t)t, 250000000L}};
    CU_ASSERT_EQUAL(utimensat(AT_FDCWD, path, ts, 0), 0);
}

/* The runs' seconds of a resumed row (README, "seconds"): each run from the stamp in its
 * shards' names to the last write of its shards, the largest over its ranks; runs added. */
static void test_merge_runs_seconds(void)
{
    char dir[256];
    scratch_make();
    make_dir(dir, sizeof dir, "r.h5.shards");
    const range_spec_t a[] = {{5, 0, 3, {NULL}}};
    const range_spec_t b[] = {{5, 3, 10, {NULL}}};
    const range_spec_t c[] = {{5, 10, HF_CELLS_ALL, {NULL}}};
    make_range_shard(dir, "run-1000-7-r000.h5", a, 1); /* run 1: 2 ranks, 10.25 s */
    make_range_shard(dir, "run-1000-7-r001.h5", b, 1);
    make_range_shard(dir, "run-2000-9-r000.h5", c, 1); /* run 2: 1 rank, 3.25 s */
    set_mtime(dir, "run-1000-7-r000.h5", 1004);
    set_mtime(dir, "run-1000-7-r001.h5", 1010);
    set_mtime(dir, "run-2000-9-r000.h5", 2003);
    hf_shards_merged_t g;
    hf_shards_merged_init(&g);
    CU_ASSERT_EQUAL_FATAL(hf_shards_merge(dir, FP, &g), HF_OK);
    CU_ASSERT_DOUBLE_EQUAL(g.runs_seconds, 13.5, 1e-6);
    hf_shards_merged_clear(&g);
    scratch_done();
}

/* A range that overlaps one accepted before - in an earlier shard or earlier in its own
 * shard, exactly or in part - is dropped with its found records, while a later disjoint
 * range of the same shard is kept; a found record of an accepted range is kept only from
 * the shard its range was accepted from. */
static void test_merge_overlap(void)
{
    char dir[256];
    scratch_make();
    make_dir(dir, sizeof dir, "r.h5.shards");
    /* in a: [1, 2) lies inside [0, 5), accepted just before it */
    const range_spec_t a[] = {{5, 0, 5, {"a0", NULL}}, {5, 1, 2, {"a-inside", NULL}}};
    /* in b: overlaps at both ends, an exact duplicate, then disjoint ranges */
    const range_spec_t b[] = {{5, 3, 8, {"b-overlap", NULL}},
                              {5, 0, 5, {"b-duplicate", NULL}},
                              {5, 5, 8, {"b5", NULL}},
                              {5, 8, 9, {"b8", NULL}},
                              {5, 7, HF_CELLS_ALL, {"b-tail", NULL}},
                              {7, 2, 4, {"b7", NULL}}};
    /* in c: reaches from an accepted range into a gap */
    const range_spec_t c[] = {{5, 8, 12, {"c-overlap", NULL}}, {5, 9, 12, {"c9", NULL}}};
    make_range_shard(dir, "run-1-1-r000.h5", a, 2);
    make_range_shard(dir, "run-1-1-r001.h5", b, 6);
    make_range_shard(dir, "run-1-1-r002.h5", c, 2);
    hf_shards_merged_t g;
    hf_shards_merged_init(&g);
    CU_ASSERT_EQUAL_FATAL(hf_shards_merge(dir, FP, &g), HF_OK);
    const int64_t ranges[5][3] = {{5, 0, 5}, {5, 5, 8}, {5, 8, 9}, {7, 2, 4}, {5, 9, 12}};
    expect_ranges(&g, ranges, 5);
    CU_ASSERT_EQUAL(g.units[1].rank, 2);
    const char *texts[5] = {"a0", "b5", "b8", "b7", "c9"};
    const int64_t where[5][2] = {{5, 0}, {5, 5}, {5, 8}, {7, 2}, {5, 9}};
    expect_found(&g, texts, where, 5);
    hf_shards_merged_clear(&g);

    /* every allocation of the merge failing in turn: HF_ERR_NOMEM and nothing returned
     * (valgrind checks nothing leaks), until it has all it needs */
    hf_err_t err = HF_ERR_NOMEM;
    long k;
    for (k = 1; k < 2000 && err == HF_ERR_NOMEM; k++) {
        hf_fail_after(k);
        err = hf_shards_merge(dir, FP, &g);
        hf_fail_after(0);
        if (err == HF_OK)
            expect_ranges(&g, ranges, 5);
        else
            CU_ASSERT(g.nunits == 0 && g.nfound == 0 && !g.units && !g.found_lo);
        hf_shards_merged_clear(&g);
    }
    CU_ASSERT_EQUAL(err, HF_OK);
    CU_ASSERT(k > 10);
    scratch_done();
}

/* A whole-unit record overlaps every range of its unit: the format-1 shard's whole units,
 * merged first, beat later ranges of the same units, and a whole unit after a range of
 * it is dropped; the format-1 shard's found records come with lo 0. */
static void test_merge_whole_unit(void)
{
    char dir[256], path[512];
    scratch_make();
    make_dir(dir, sizeof dir, "r.h5.shards");
    snprintf(path, sizeof path, "%s/run-1-1-r000.h5", dir);
    copy_file(SHARD_V1_FIXTURE, path); /* whole units 0..3 of m 4; found in 1 and 2 */
    const range_spec_t b[] = {
        {2, 0, 3, {"late2", NULL}}, {3, 5, HF_CELLS_ALL, {"late3", NULL}}, {9, 4, 6, {"b9", NULL}}};
    const range_spec_t c[] = {{9, 0, HF_CELLS_ALL, {"c9-whole", NULL}}, {9, 1, 4, {"c9", NULL}}};
    make_range_shard(dir, "run-2-1-r000.h5", b, 3);
    make_range_shard(dir, "run-3-1-r000.h5", c, 2);
    hf_shards_merged_t g;
    hf_shards_merged_init(&g);
    CU_ASSERT_EQUAL_FATAL(hf_shards_merge(dir, FP, &g), HF_OK);
    const int64_t ranges[6][3] = {{0, 0, HF_CELLS_ALL},
                                  {1, 0, HF_CELLS_ALL},
                                  {2, 0, HF_CELLS_ALL},
                                  {3, 0, HF_CELLS_ALL},
                                  {9, 4, 6},
                                  {9, 1, 4}};
    expect_ranges(&g, ranges, 6);
    CU_ASSERT_EQUAL(g.units[0].rank, 3); /* the fixture's, not a later shard's */
    const char *texts[5] = {"{\"unit\": 1, \"j\": 0, \"keys\": [[0,1],[1,0]]}",
                            "{\"unit\": 2, \"j\": 0, \"keys\": [[0,1],[1,0]]}",
                            "{\"unit\": 2, \"j\": 1, \"keys\": [[0,1],[1,0]]}", "b9", "c9"};
    const int64_t where[5][2] = {{1, 0}, {2, 0}, {2, 0}, {9, 4}, {9, 1}};
    expect_found(&g, texts, where, 5);
    hf_shards_merged_clear(&g);
    scratch_done();
}

/* Many units each split in ranges over many shards (more units than the first size of
 * the merge's table), against the rule computed directly: every cell of each unit is
 * accepted at most once, each range kept iff its cells were all free, overlaps dropped. */
static void test_merge_many(void)
{
    enum { SHARDS = 8, UNITS = 1200, CELLS = 8, EVERY = 40 };
    char dir[256];
    scratch_make();
    make_dir(dir, sizeof dir, "r.h5.shards");
    /* shard s holds, for each unit, the range [s, s + 1 + s % 3) clipped to the cells
     * (overlapping the ranges of earlier shards where s % 3 > 0); every EVERY-th unit
     * with a found record (a found record costs a flush: keep the test fast) */
    static unsigned char owner[UNITS][CELLS];
    memset(owner, 0xff, sizeof owner);
    long accepted = 0, accepted_found = 0;
    for (int s = 0; s < SHARDS; s++) {
        char path[512];
        snprintf(path, sizeof path, "%s/run-%d-1-r000.h5", dir, s);
        hf_shard_t *sh;
        CU_ASSERT_EQUAL_FATAL(hf_shard_create(path, FP, NULL, &sh), HF_OK);
        int64_t lo = s, hi = s + 1 + s % 3 < CELLS ? s + 1 + s % 3 : CELLS;
        for (int64_t u = 0; u < UNITS; u++) {
            char rec[32];
            snprintf(rec, sizeof rec, "%d/%lld", s, (long long)u);
            const char *recs[2] = {u % EVERY ? NULL : rec, NULL};
            write_range(sh, range_rec(4, u, lo, hi, u % EVERY == 0), recs);
            int free_cells = 1;
            for (int64_t k = lo; k < hi; k++)
                free_cells &= owner[u][k] == 0xff;
            for (int64_t k = lo; free_cells && k < hi; k++)
                owner[u][k] = (unsigned char)s;
            accepted += free_cells;
            accepted_found += free_cells && u % EVERY == 0;
        }
        CU_ASSERT_EQUAL_FATAL(hf_shard_destroy(&sh), HF_OK);
    }
    hf_shards_merged_t g;
    hf_shards_merged_init(&g);
    CU_ASSERT_EQUAL_FATAL(hf_shards_merge(dir, FP, &g), HF_OK);
    CU_ASSERT_EQUAL(g.nunits, accepted);
    CU_ASSERT_EQUAL(g.nfound, accepted_found);
    CU_ASSERT(accepted > UNITS && accepted < SHARDS * UNITS); /* some kept, some dropped */
    long cells = 0;
    for (long i = 0; i < g.nunits; i++) {
        const hf_unit_record_t *u = &g.units[i];
        for (int64_t k = u->lo; k < u->hi; k++, cells++)
            CU_ASSERT_EQUAL(owner[u->unit][k], u->lo); /* shard s starts at cell s */
    }
    long owned = 0;
    for (long u = 0; u < UNITS; u++)
        for (int k = 0; k < CELLS; k++)
            owned += owner[u][k] != 0xff;
    CU_ASSERT_EQUAL(cells, owned); /* no cell twice */
    for (long i = 0; i < g.nfound; i++) {
        char want[32];
        snprintf(want, sizeof want, "%lld/%lld", (long long)g.found_lo[i],
                 (long long)g.found_unit[i]);
        CU_ASSERT_STRING_EQUAL(g.found_record[i], want);
    }
    hf_shards_merged_clear(&g);
    scratch_done();
}

/* A string attribute of the given character set, variable- or fixed-length. */
static void write_str_attr(hid_t obj, const char *name, const char *value, H5T_cset_t cset,
                           int fixed)
{
    hid_t t = H5Tcopy(H5T_C_S1), s = H5Screate(H5S_SCALAR);
    CU_ASSERT_FATAL(t >= 0 && s >= 0);
    CU_ASSERT_FATAL(H5Tset_size(t, fixed ? strlen(value) + 1 : H5T_VARIABLE) >= 0);
    CU_ASSERT_FATAL(H5Tset_cset(t, cset) >= 0);
    hid_t a = H5Acreate2(obj, name, t, s, H5P_DEFAULT, H5P_DEFAULT);
    CU_ASSERT_FATAL(a >= 0);
    CU_ASSERT_FATAL(H5Awrite(a, t, fixed ? (const void *)value : (const void *)&value) >= 0);
    H5Aclose(a);
    H5Sclose(s);
    H5Tclose(t);
}

/* String attributes written by other tools (ASCII or UTF-8, fixed or variable length)
 * read back: HDF5 1.10 converts strings only between equal character sets, so the
 * reader must read in the attribute's own set (found while building the shard fuzz
 * harness: a shard with ASCII attributes was refused as "attribute 'format'
 * unreadable"). */
static void test_string_attribute_charsets(void)
{
    char path[256];
    scratch_make();
    scratch_path(path, sizeof path, "attrs.h5");
    hid_t f = H5Fcreate(path, H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
    CU_ASSERT_FATAL(f >= 0);
    const char *names[4] = {"ascii_var", "utf8_var", "ascii_fixed", "utf8_fixed"};
    for (int i = 0; i < 4; i++)
        write_str_attr(f, names[i], "headfuse-shard-1", i % 2 ? H5T_CSET_UTF8 : H5T_CSET_ASCII,
                       i >= 2);
    for (int i = 0; i < 4; i++) {
        char *v = NULL;
        CU_ASSERT_EQUAL(hf_h5_attr_read_str(f, names[i], path, "/", &v), HF_OK);
        CU_ASSERT(v && !strcmp(v, "headfuse-shard-1"));
        free(v);
    }
    H5Fclose(f);
    scratch_done();
}

/* ---- RESULT.h5 strings: fixed-length now, variable-length in older files ---- */

/* Strings found in a file: how many, and how many of them variable-length. */
typedef struct {
    int strings, variable;
} str_count_t;

static void count_type(hid_t t, str_count_t *c)
{
    H5T_class_t cls = H5Tget_class(t);
    if (cls == H5T_STRING) {
        c->strings++;
        c->variable += H5Tis_variable_str(t) != 0;
    } else if (cls == H5T_COMPOUND) {
        for (int i = 0; i < H5Tget_nmembers(t); i++) {
            hid_t m = H5Tget_member_type(t, (unsigned)i);
            count_type(m, c);
            H5Tclose(m);
        }
    } else if (cls == H5T_VLEN || cls == H5T_ARRAY) {
        c->variable += cls == H5T_VLEN;
        hid_t b = H5Tget_super(t);
        count_type(b, c);
        H5Tclose(b);
    }
}

static herr_t count_attr(hid_t loc, const char *name, const H5A_info_t *info, void *data)
{
    (void)info;
    hid_t a = H5Aopen(loc, name, H5P_DEFAULT), t = H5Aget_type(a);
    CU_ASSERT_FATAL(a >= 0 && t >= 0);
    count_type(t, data);
    H5Tclose(t);
    H5Aclose(a);
    return 0;
}

static herr_t count_object(hid_t root, const char *name, const H5L_info_t *info, void *data)
{
    (void)info;
    hid_t o = H5Oopen(root, name, H5P_DEFAULT);
    CU_ASSERT_FATAL(o >= 0);
    CU_ASSERT(H5Aiterate2(o, H5_INDEX_NAME, H5_ITER_NATIVE, NULL, count_attr, data) >= 0);
    if (H5Iget_type(o) == H5I_DATASET) {
        hid_t t = H5Dget_type(o);
        count_type(t, data);
        H5Tclose(t);
    }
    H5Oclose(o);
    return 0;
}

/* Every string type of every attribute and dataset of the file. */
static str_count_t count_strings(const char *path)
{
    str_count_t c = {0, 0};
    hid_t f = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT);
    CU_ASSERT_FATAL(f >= 0);
    CU_ASSERT(H5Aiterate2(f, H5_INDEX_NAME, H5_ITER_NATIVE, NULL, count_attr, &c) >= 0);
    CU_ASSERT(H5Lvisit(f, H5_INDEX_NAME, H5_ITER_NATIVE, count_object, &c) >= 0);
    H5Fclose(f);
    return c;
}

/* Size of the fixed-length string type of dataset path:name, 0 if variable-length. */
static size_t dataset_str_size(const char *path, const char *name)
{
    hid_t f = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT), ds = H5Dopen2(f, name, H5P_DEFAULT);
    CU_ASSERT_FATAL(f >= 0 && ds >= 0);
    hid_t t = H5Dget_type(ds);
    size_t n = H5Tis_variable_str(t) ? 0 : H5Tget_size(t);
    H5Tclose(t);
    H5Dclose(ds);
    H5Fclose(f);
    return n;
}

/* The class and element size of dataset path:name. */
static H5T_class_t dataset_class(const char *path, const char *name)
{
    hid_t f = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT), ds = H5Dopen2(f, name, H5P_DEFAULT);
    CU_ASSERT_FATAL(f >= 0 && ds >= 0);
    hid_t t = H5Dget_type(ds);
    H5T_class_t c = H5Tget_class(t);
    H5Tclose(t);
    H5Dclose(ds);
    H5Fclose(f);
    return c;
}

static size_t dataset_el_size(const char *path, const char *name)
{
    hid_t f = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT), ds = H5Dopen2(f, name, H5P_DEFAULT);
    CU_ASSERT_FATAL(f >= 0 && ds >= 0);
    hid_t t = H5Dget_type(ds);
    size_t n = H5Tget_size(t);
    H5Tclose(t);
    H5Dclose(ds);
    H5Fclose(f);
    return n;
}

/* A written RESULT.h5 has no variable-length string anywhere, hence no global heap
 * (whose damage crashes HDF5 1.10.8: 148 of 177 fuzz findings), and reads back. */
static void test_result_fixed_strings(void)
{
    char path[256];
    scratch_make();
    scratch_path(path, sizeof path, "RESULT.h5");
    hf_result_t r, back;
    hf_result_init(&r);
    hf_result_init(&back);
    make_result(&r);
    free(r.command_line);
    r.command_line = strdup("headfuse search d\xc3\xa9j\xc3\xa0/T.json"); /* UTF-8 */
    CU_ASSERT_EQUAL_FATAL(hf_result_write(path, &r), HF_OK);
    str_count_t c = count_strings(path);
    /* 8 root attributes, /table's 7 string fields, 3 target_json, and the two integer
     * datasets of /rows/2 whose numbers pass 64 bits (decimal strings) */
    CU_ASSERT_EQUAL(c.strings, 8 + 7 + 3 + 2);
    CU_ASSERT_EQUAL(c.variable, 0);
    CU_ASSERT(find_in_file(path, "GCOL") < 0); /* a global heap collection's signature */
    /* integers where they fit, keys of the narrowest type; strings sized by the longest
     * number + NUL (1, 17636684144620811271604938270: the weights 1 and x/7 of /rows/2,
     * x = 123456789012345678901234567890, which 7 divides) */
    CU_ASSERT_EQUAL(dataset_class(path, "rows/0/weights"), H5T_INTEGER);
    CU_ASSERT_EQUAL(dataset_class(path, "rows/0/weighted_values"), H5T_INTEGER);
    CU_ASSERT_EQUAL(dataset_class(path, "rows/0/keys"), H5T_INTEGER);
    CU_ASSERT_EQUAL(dataset_el_size(path, "rows/0/keys"), 1);
    CU_ASSERT_EQUAL(dataset_str_size(path, "rows/2/weights"), 30);
    CU_ASSERT_EQUAL(dataset_str_size(path, "rows/2/weighted_values"), 30);
    /* the non-ASCII attribute is marked UTF-8, the others ASCII */
    hid_t f = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT);
    hid_t a = H5Aopen(f, "command_line", H5P_DEFAULT), t = H5Aget_type(a);
    CU_ASSERT(H5Tget_cset(t) == H5T_CSET_UTF8);
    H5Tclose(t);
    H5Aclose(a);
    a = H5Aopen(f, "host", H5P_DEFAULT), t = H5Aget_type(a);
    CU_ASSERT(H5Tget_cset(t) == H5T_CSET_ASCII);
    H5Tclose(t);
    H5Aclose(a);
    H5Fclose(f);
    CU_ASSERT_EQUAL_FATAL(hf_result_read(path, &back), HF_OK);
    assert_results_equal(&r, &back);
    hf_result_clear(&back);

    /* a target_json too long for an object header of the oldest format (64 kB) is
     * written variable-length: the one string that may still be */
    size_t big = HF_H5_FIXED_ATTR_MAX + 100;
    char *json = malloc(big + 1);
    CU_ASSERT_FATAL(json != NULL);
    memset(json, ' ', big);
    memcpy(json, "{\"name\": \"big\"}", 15);
    json[big] = '\0';
    free(r.target_json[1]);
    r.target_json[1] = json;
    CU_ASSERT_EQUAL_FATAL(hf_result_write(path, &r), HF_OK);
    c = count_strings(path);
    CU_ASSERT_EQUAL(c.variable, 1);
    CU_ASSERT_EQUAL_FATAL(hf_result_read(path, &back), HF_OK);
    assert_results_equal(&r, &back);
    hf_result_clear(&back);
    hf_result_clear(&r);
    scratch_done();
}

/* Replace dataset g/name by one of strings of type t (written from buf, if any). */
static void replace_str_dataset(hid_t g, const char *name, hid_t t, int rank, const hsize_t *dims,
                                const void *buf)
{
    CU_ASSERT_FATAL(H5Ldelete(g, name, H5P_DEFAULT) >= 0);
    hid_t s = H5Screate_simple(rank, dims, NULL);
    hid_t ds = H5Dcreate2(g, name, t, s, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    CU_ASSERT_FATAL(s >= 0 && ds >= 0);
    hsize_t count = 1;
    for (int i = 0; i < rank; i++)
        count *= dims[i];
    if (buf && count)
        CU_ASSERT_FATAL(H5Dwrite(ds, t, H5S_ALL, H5S_ALL, H5P_DEFAULT, buf) >= 0);
    H5Dclose(ds);
    H5Sclose(s);
}

/* The witnesses of s as the rational strings of formats 1 to 3: weights c, values u / c
 * (malloc'd arrays of malloc'd strings; free with free_strs). */
static char **old_strings(const hf_supports_t *s, int values)
{
    long m = s->m > 0 ? s->m : 0, cnt = s->n * m * (values ? s->dv : 1);
    char **out = calloc((size_t)(cnt ? cnt : 1), sizeof *out);
    fmpq_t q;
    fmpq_init(q);
    for (long i = 0; i < cnt; i++) {
        if (values)
            fmpq_set_fmpz_frac(q, s->wvalues + i, s->weights + i / s->dv);
        else
            fmpq_set_fmpz_frac(q, s->weights + i, (const fmpz[]){1});
        out[i] = hf_rational_str(q);
    }
    fmpq_clear(q);
    return out;
}

static void free_strs(char **s, const hf_supports_t *sup, int values)
{
    long m = sup->m > 0 ? sup->m : 0, cnt = sup->n * m * (values ? sup->dv : 1);
    for (long i = 0; i < cnt; i++)
        free(s[i]);
    free(s);
}

/* Rewrite a RESULT.h5 of r in the layout written before the strings became
 * fixed-length and the witnesses integers: every string attribute and the weights and
 * values datasets (rationals) variable-length UTF-8 (as hf_h5_attr_write_str and
 * hf_h5_vstr_type write them), no weighted_values. */
static void make_old_layout(const char *path, const hf_result_t *r)
{
    hid_t f = open_rw(path), vstr = hf_h5_vstr_type();
    CU_ASSERT_FATAL(vstr >= 0);
    const char *root[7][2] = {
        {"format", "headfuse-result-1"},   {"version", r->version}, {"git_commit", r->git_commit},
        {"command_line", r->command_line}, {"host", r->host},       {"start_time", r->start_time},
        {"end_time", r->end_time}};
    for (int i = 0; i < 7; i++)
        CU_ASSERT_FATAL(hf_h5_attr_write_str(f, root[i][0], root[i][1]) >= 0);
    for (long i = 0; i < r->nrows; i++) {
        char name[32];
        snprintf(name, sizeof name, "rows/%ld", i);
        hid_t g = H5Gopen2(f, name, H5P_DEFAULT);
        CU_ASSERT_FATAL(g >= 0);
        CU_ASSERT_FATAL(hf_h5_attr_write_str(g, "target_json", r->target_json[i]) >= 0);
        const hf_supports_t *s = &r->supports[i];
        hsize_t m = s->m > 0 ? (hsize_t)s->m : 0;
        hsize_t wd[2] = {(hsize_t)s->n, m}, vd[3] = {(hsize_t)s->n, m, (hsize_t)s->dv};
        char **ws = old_strings(s, 0), **vs = old_strings(s, 1);
        replace_str_dataset(g, "weights", vstr, 2, wd, ws);
        CU_ASSERT_FATAL(H5Ldelete(g, "weighted_values", H5P_DEFAULT) >= 0);
        hid_t sp = H5Screate_simple(3, vd, NULL);
        hid_t ds = H5Dcreate2(g, "values", vstr, sp, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
        CU_ASSERT_FATAL(sp >= 0 && ds >= 0);
        if (s->n * m > 0)
            CU_ASSERT_FATAL(H5Dwrite(ds, vstr, H5S_ALL, H5S_ALL, H5P_DEFAULT, vs) >= 0);
        H5Dclose(ds);
        H5Sclose(sp);
        free_strs(ws, s, 0);
        free_strs(vs, s, 1);
        H5Gclose(g);
    }
    H5Tclose(vstr);
    H5Fclose(f);
}

/* A file of the old layout (variable-length strings) reads exactly as the new one. */
static void test_result_old_layout(void)
{
    char path[256];
    scratch_make();
    scratch_path(path, sizeof path, "RESULT.h5");
    hf_result_t r, back;
    hf_result_init(&r);
    hf_result_init(&back);
    make_result(&r);
    CU_ASSERT_EQUAL_FATAL(hf_result_write(path, &r), HF_OK);
    make_old_layout(path, &r);
    str_count_t c = count_strings(path);
    CU_ASSERT_EQUAL(c.strings, 8 + 7 + 3 * 3);
    CU_ASSERT_EQUAL(c.variable, 7 + 3 * 3); /* all but /table's fields and job_text */
    CU_ASSERT(find_in_file(path, "GCOL") >= 0);
    CU_ASSERT_EQUAL_FATAL(hf_result_read(path, &back), HF_OK);
    assert_results_equal(&r, &back);
    hf_result_clear(&back);
    hf_result_clear(&r);
    scratch_done();
}

/* A file of format 1 (written before the rows recorded max_atoms and engine and before
 * the status "infeasible" and the job text existed) reads with engine "unknown",
 * max_atoms -1, no job text, and its "exhaustive" rows without a support as
 * "infeasible"; a new file has format 2 and keeps what was written. */
static void test_result_format1(void)
{
    char path[256];
    scratch_make();
    scratch_path(path, sizeof path, "RESULT.h5");
    hf_result_t r, back;
    hf_result_init(&r);
    hf_result_init(&back);
    make_result(&r);
    strcpy(r.rows[1].status, "infeasible"); /* m_star -1: every size up to UB decided */
    r.rows[1].max_atoms = 0;
    CU_ASSERT_EQUAL_FATAL(hf_result_write(path, &r), HF_OK);
    CU_ASSERT_EQUAL_FATAL(hf_result_read(path, &back), HF_OK);
    assert_results_equal(&r, &back);
    hf_result_clear(&back);
    hid_t f = open_rw(path), all = hf_h5_row_type(0),
          v1 = hf_h5_row_type_older(1, HF_H5_ROW_V1_FIELDS);
    char *format = NULL;
    CU_ASSERT_FATAL(f >= 0 && all >= 0 && v1 >= 0);
    CU_ASSERT_EQUAL(hf_h5_attr_read_str(f, "format", path, "/", &format), HF_OK);
    CU_ASSERT_STRING_EQUAL(format, "headfuse-result-4");
    free(format);

    /* rewrite as format 1: the 13-field /table, "exhaustive" for the row without a
     * support, no job_text */
    strcpy(r.rows[1].status, "exhaustive");
    CU_ASSERT_FATAL(H5Ldelete(f, "table", H5P_DEFAULT) >= 0);
    hsize_t n = (hsize_t)r.nrows;
    hid_t s = H5Screate_simple(1, &n, NULL);
    hid_t ds = H5Dcreate2(f, "table", v1, s, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    CU_ASSERT_FATAL(s >= 0 && ds >= 0);
    CU_ASSERT_FATAL(H5Dwrite(ds, all, H5S_ALL, H5S_ALL, H5P_DEFAULT, r.rows) >= 0);
    CU_ASSERT_EQUAL(H5Tget_nmembers(v1), 13);
    H5Dclose(ds);
    H5Sclose(s);
    CU_ASSERT_FATAL(H5Adelete(f, "job_text") >= 0);
    CU_ASSERT_FATAL(hf_h5_attr_write_fixed_str(f, "format", "headfuse-result-1") >= 0);
    H5Tclose(v1);
    H5Tclose(all);
    H5Fclose(f);

    CU_ASSERT_EQUAL_FATAL(hf_result_read(path, &back), HF_OK);
    CU_ASSERT_EQUAL_FATAL(back.nrows, 3);
    for (long i = 0; i < 3; i++) {
        CU_ASSERT_STRING_EQUAL(back.rows[i].engine, "unknown");
        CU_ASSERT_STRING_EQUAL(back.rows[i].lb_rule, "unknown");
        CU_ASSERT_EQUAL(back.rows[i].max_atoms, -1);
        CU_ASSERT_EQUAL(back.rows[i].m_star, r.rows[i].m_star);
        CU_ASSERT_STRING_EQUAL(back.rows[i].name, r.rows[i].name);
        CU_ASSERT_EQUAL(back.rows[i].seconds, r.rows[i].seconds);
    }
    CU_ASSERT_STRING_EQUAL(back.rows[0].status, "exhaustive");
    CU_ASSERT_STRING_EQUAL(back.rows[1].status, "infeasible");
    CU_ASSERT_STRING_EQUAL(back.rows[2].status, "certified");
    CU_ASSERT_PTR_NULL(back.job_text);
    hf_result_clear(&back);

    /* a later format is a newer headfuse's; another name is no result file; both are
     * refused, naming the formats this one reads */
    f = open_rw(path);
    CU_ASSERT_FATAL(hf_h5_attr_write_fixed_str(f, "format", "headfuse-result-9") >= 0);
    H5Fclose(f);
    CU_ASSERT_EQUAL(hf_result_read(path, &back), HF_ERR_CORRUPT);
    CU_ASSERT(strstr(hf_error_msg(), "written by a newer headfuse (format 'headfuse-result-9')") !=
              NULL);
    CU_ASSERT(strstr(hf_error_msg(), "'headfuse-result-4', 'headfuse-result-3', "
                                     "'headfuse-result-2' and 'headfuse-result-1'") != NULL);
    f = open_rw(path);
    CU_ASSERT_FATAL(hf_h5_attr_write_fixed_str(f, "format", "headfuse-result-x") >= 0);
    H5Fclose(f);
    CU_ASSERT_EQUAL(hf_result_read(path, &back), HF_ERR_CORRUPT);
    CU_ASSERT(strstr(hf_error_msg(), "not a headfuse result file (format 'headfuse-result-x'") !=
              NULL);

    /* a job text too long for a fixed-length attribute (64 kB) round-trips */
    size_t big = HF_H5_FIXED_ATTR_MAX + 10;
    free(r.job_text);
    r.job_text = malloc(big + 1);
    CU_ASSERT_FATAL(r.job_text != NULL);
    memset(r.job_text, '#', big);
    r.job_text[big] = '\0';
    strcpy(r.rows[1].status, "infeasible");
    CU_ASSERT_EQUAL_FATAL(hf_result_write(path, &r), HF_OK);
    CU_ASSERT_EQUAL_FATAL(hf_result_read(path, &back), HF_OK);
    assert_results_equal(&r, &back);
    hf_result_clear(&back);
    hf_result_clear(&r);
    scratch_done();
}

/* Rewrite /table of the file at path in the layout of the first nfields members, and
 * the format attribute. */
static void rewrite_table(const char *path, const hf_result_t *r, unsigned nfields,
                          const char *format)
{
    hid_t f = open_rw(path), all = hf_h5_row_type(0), older = hf_h5_row_type_older(1, nfields);
    CU_ASSERT_FATAL(f >= 0 && all >= 0 && older >= 0);
    CU_ASSERT_EQUAL(H5Tget_nmembers(older), (int)nfields);
    CU_ASSERT_FATAL(H5Ldelete(f, "table", H5P_DEFAULT) >= 0);
    hsize_t n = (hsize_t)r->nrows;
    hid_t s = H5Screate_simple(1, &n, NULL);
    hid_t ds = H5Dcreate2(f, "table", older, s, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    CU_ASSERT_FATAL(s >= 0 && ds >= 0);
    CU_ASSERT_FATAL(H5Dwrite(ds, all, H5S_ALL, H5S_ALL, H5P_DEFAULT, r->rows) >= 0);
    H5Dclose(ds);
    H5Sclose(s);
    CU_ASSERT_FATAL(hf_h5_attr_write_fixed_str(f, "format", format) >= 0);
    H5Tclose(older);
    H5Tclose(all);
    H5Fclose(f);
}

/* m* beyond 64 bits (wd:d=63, wd:d=64 and larger, certified): its decimal round-trips
 * with m_star -1; a row filled field by field is written with m_star's decimal; a
 * decimal that disagrees with m_star is refused by the writer and by the reader; a file
 * of format 2 (no m_star_dec) reads with m_star's decimal. */
static void test_result_big_m_star(void)
{
    char path[256];
    scratch_make();
    scratch_path(path, sizeof path, "RESULT.h5");
    const char *big[3] = {"9223372036854775808", "18446744073709551616",
                          "1000000000000000000000000000000000000000000000000000000000000000000"
                          "000000000000000000000000000000000"};
    hf_result_t r, back;
    hf_result_init(&back);
    make_result(&r);
    CU_ASSERT_EQUAL(hf_row_set_m_star(&r.rows[1], "-1"), HF_OK);
    CU_ASSERT_EQUAL(r.rows[1].m_star, -1);
    CU_ASSERT_EQUAL(hf_row_set_m_star(&r.rows[0], "3"), HF_OK);
    CU_ASSERT_EQUAL(r.rows[0].m_star, 3);
    CU_ASSERT_EQUAL(hf_row_set_m_star(&r.rows[0], "9223372036854775807"), HF_OK);
    CU_ASSERT_EQUAL(r.rows[0].m_star, INT64_MAX); /* the largest that fits */
    CU_ASSERT_EQUAL(hf_row_set_m_star(&r.rows[0], "3"), HF_OK);
    CU_ASSERT_EQUAL(hf_row_set_m_star(&r.rows[0], "03"), HF_ERR_INTERNAL);
    CU_ASSERT_EQUAL(hf_row_set_m_star(&r.rows[0], "1e9"), HF_ERR_INTERNAL);
    for (int i = 0; i < 3; i++) {
        hf_row_t w = make_row(i == 0   ? "wd:d=63"
                              : i == 1 ? "wd:d=64"
                                       : "huge",
                              63 + (i > 0), 1 + (i == 0), -1, big[i], big[i], "certified");
        CU_ASSERT_EQUAL_FATAL(hf_row_set_m_star(&w, big[i]), HF_OK);
        CU_ASSERT_EQUAL(w.m_star, -1);
        CU_ASSERT_FATAL(hf_result_add_row(&r, &w, NULL, "{}") == HF_OK);
    }
    /* a row filled field by field: the writer takes m_star's decimal */
    r.rows[2].m_star_dec[0] = '\0';
    CU_ASSERT_EQUAL_FATAL(hf_result_write(path, &r), HF_OK);
    CU_ASSERT_EQUAL_FATAL(hf_result_read(path, &back), HF_OK);
    assert_results_equal(&r, &back);
    char buf[HF_BIGINT_LEN];
    CU_ASSERT_STRING_EQUAL(hf_row_m_star(&back.rows[0], buf), "3");
    CU_ASSERT_STRING_EQUAL(back.rows[0].m_star_dec, "3");
    CU_ASSERT_STRING_EQUAL(back.rows[1].m_star_dec, "-1");
    CU_ASSERT_STRING_EQUAL(back.rows[2].m_star_dec, "2"); /* filled in by the writer */
    snprintf(r.rows[2].m_star_dec, sizeof r.rows[2].m_star_dec, "2");
    for (int i = 0; i < 3; i++) {
        CU_ASSERT_EQUAL(back.rows[3 + i].m_star, -1);
        CU_ASSERT_STRING_EQUAL(hf_row_m_star(&back.rows[3 + i], buf), big[i]);
    }
    hf_result_clear(&back);

    /* the two fields must agree */
    snprintf(r.rows[0].m_star_dec, sizeof r.rows[0].m_star_dec, "4");
    CU_ASSERT_EQUAL(hf_result_write(path, &r), HF_ERR_INTERNAL);
    CU_ASSERT(strstr(hf_error_msg(), "m_star_dec (differs from m_star)") != NULL);
    r.rows[3].m_star = 5; /* 2^63 does not fit: m_star must be -1 */
    snprintf(r.rows[0].m_star_dec, sizeof r.rows[0].m_star_dec, "3");
    CU_ASSERT_EQUAL(hf_result_write(path, &r), HF_ERR_INTERNAL);
    r.rows[3].m_star = -1;
    snprintf(r.rows[3].m_star_dec, sizeof r.rows[3].m_star_dec, "12x");
    CU_ASSERT_EQUAL(hf_result_write(path, &r), HF_ERR_INTERNAL);
    CU_ASSERT(strstr(hf_error_msg(), "invalid m_star_dec") != NULL);
    snprintf(r.rows[3].m_star_dec, sizeof r.rows[3].m_star_dec, "%s", big[0]);

    /* a damaged file: the reader says which row and field */
    CU_ASSERT_EQUAL_FATAL(hf_result_write(path, &r), HF_OK);
    hf_row_t saved = r.rows[4];
    r.rows[4].m_star = 7;
    rewrite_table(path, &r, HF_H5_ROW_V2_FIELDS + 1, "headfuse-result-3");
    r.rows[4] = saved;
    CU_ASSERT_EQUAL(hf_result_read(path, &back), HF_ERR_CORRUPT);
    CU_ASSERT(strstr(hf_error_msg(), "/table[4]: invalid m_star_dec (differs from m_star)") !=
              NULL);
    /* format 3 means the 17-field table */
    rewrite_table(path, &r, HF_H5_ROW_V2_FIELDS, "headfuse-result-3");
    CU_ASSERT_EQUAL(hf_result_read(path, &back), HF_ERR_CORRUPT);
    CU_ASSERT(strstr(hf_error_msg(), "has 16 fields, expected 17") != NULL);

    /* format 2: the 16-field table; m* is the int64 (-1 for the big rows: unknown) */
    rewrite_table(path, &r, HF_H5_ROW_V2_FIELDS, "headfuse-result-2");
    CU_ASSERT_EQUAL_FATAL(hf_result_read(path, &back), HF_OK);
    CU_ASSERT_EQUAL_FATAL(back.nrows, 6);
    for (long i = 0; i < back.nrows; i++) {
        CU_ASSERT_EQUAL(back.rows[i].m_star, r.rows[i].m_star);
        CU_ASSERT_STRING_EQUAL(back.rows[i].engine, r.rows[i].engine); /* format 2 had it */
    }
    CU_ASSERT_STRING_EQUAL(back.rows[0].m_star_dec, "3");
    CU_ASSERT_STRING_EQUAL(back.rows[4].m_star_dec, "-1");
    hf_result_clear(&back);
    hf_result_clear(&r);
    scratch_done();
}

/* /units records ranges of cells: they round-trip; a file written before (no lo, hi)
 * reads as whole units; an empty or negative range is refused by the writer and the
 * reader. */
static void test_result_unit_ranges(void)
{
    char path[256];
    scratch_make();
    scratch_path(path, sizeof path, "RESULT.h5");
    hf_result_t r, back;
    hf_result_init(&r);
    hf_result_init(&back);
    make_result(&r);
    CU_ASSERT_EQUAL(r.units[1].lo, 2); /* make_result has one range of cells */
    CU_ASSERT_EQUAL_FATAL(hf_result_write(path, &r), HF_OK);
    CU_ASSERT_EQUAL_FATAL(hf_result_read(path, &back), HF_OK);
    assert_results_equal(&r, &back);
    hf_result_clear(&back);

    /* /units as files written before cell ranges have it: 7 fields */
    hid_t f = open_rw(path), all = hf_h5_unit_type(0), v1 = hf_h5_unit_type_v1(1);
    CU_ASSERT_FATAL(all >= 0 && v1 >= 0);
    CU_ASSERT_EQUAL(H5Tget_nmembers(v1), 7);
    CU_ASSERT(H5Tget_member_index(v1, "lo") < 0 && H5Tget_member_index(v1, "hi") < 0);
    CU_ASSERT_FATAL(H5Ldelete(f, "units", H5P_DEFAULT) >= 0);
    hsize_t n = (hsize_t)r.nunits;
    hid_t s = H5Screate_simple(1, &n, NULL);
    hid_t ds = H5Dcreate2(f, "units", v1, s, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    CU_ASSERT_FATAL(s >= 0 && ds >= 0);
    CU_ASSERT_FATAL(H5Dwrite(ds, all, H5S_ALL, H5S_ALL, H5P_DEFAULT, r.units) >= 0);
    H5Dclose(ds);
    H5Sclose(s);
    H5Tclose(v1);
    H5Fclose(f);
    CU_ASSERT_EQUAL_FATAL(hf_result_read(path, &back), HF_OK);
    CU_ASSERT_EQUAL_FATAL(back.nunits, r.nunits);
    for (long i = 0; i < r.nunits; i++) {
        hf_unit_record_t want = r.units[i];
        want.lo = 0;
        want.hi = HF_CELLS_ALL;
        CU_ASSERT(!memcmp(&back.units[i], &want, sizeof want));
    }
    hf_result_clear(&back);

    /* an empty range: the writer refuses it, and so does the reader */
    r.units[1].hi = r.units[1].lo;
    CU_ASSERT_EQUAL(hf_result_write(path, &r), HF_ERR_INTERNAL);
    CU_ASSERT(strstr(hf_error_msg(), "unit record 1: invalid cell range") != NULL);
    hid_t ft = hf_h5_unit_type(1);
    f = open_rw(path);
    CU_ASSERT_FATAL(ft >= 0 && H5Ldelete(f, "units", H5P_DEFAULT) >= 0);
    CU_ASSERT_FATAL(hf_h5_dataset_write(f, "units", ft, all, 1, &n, r.units, 0) >= 0);
    H5Fclose(f);
    H5Tclose(ft);
    CU_ASSERT_EQUAL(hf_result_read(path, &back), HF_ERR_CORRUPT);
    CU_ASSERT(strstr(hf_error_msg(), "/units[1]: invalid cell range") != NULL);
    r.units[1].lo = -1;
    r.units[1].hi = 4;
    CU_ASSERT_EQUAL(hf_result_write(path, &r), HF_ERR_INTERNAL);
    H5Tclose(all);
    hf_result_clear(&r);
    scratch_done();
}

/* A fixed-length string type of n bytes with the given padding. */
static hid_t str_type(size_t n, H5T_str_t pad)
{
    hid_t t = hf_h5_fixed_str_type(n);
    CU_ASSERT_FATAL(t >= 0 && H5Tset_strpad(t, pad) >= 0);
    return t;
}

/* Fixed-length strings as other writers pad them (h5py: NUL-padded, possibly
 * filling the whole size without a NUL; space-padded) read back; absurd sizes are
 * refused before allocating, with the file and dataset named. The integers of /rows/2 pass
 * 64 bits, so format 4 writes them as decimal strings. */
static void test_result_string_variants(void)
{
    char path[256];
    scratch_make();
    scratch_path(path, sizeof path, "RESULT.h5");
    hf_result_t r, back;
    hf_result_init(&r);
    hf_result_init(&back);
    make_result(&r);
    const char *longest = "17636684144620811271604938270"; /* /rows/2 weight 1 */
    size_t n = strlen(longest);
    hsize_t wd[2] = {1, 2}, vd[3] = {1, 2, 1};
    for (int pad = 0; pad < 2; pad++) {
        /* the longest fills its n bytes: no NUL (NULLPAD) or no space (SPACEPAD) */
        char buf[2][64];
        memset(buf, pad ? ' ' : '\0', sizeof buf);
        buf[0][0] = '1';
        memcpy(buf[1], longest, n);
        /* a packed block of two n-byte strings */
        char packed[128];
        memcpy(packed, buf[0], n);
        memcpy(packed + n, buf[1], n);
        CU_ASSERT_EQUAL_FATAL(hf_result_write(path, &r), HF_OK);
        hid_t f = open_rw(path), g = H5Gopen2(f, "rows/2", H5P_DEFAULT);
        hid_t t = str_type(n, pad ? H5T_STR_SPACEPAD : H5T_STR_NULLPAD);
        replace_str_dataset(g, "weights", t, 2, wd, packed);
        H5Tclose(t);
        H5Gclose(g);
        H5Fclose(f);
        CU_ASSERT_EQUAL_FATAL(hf_result_read(path, &back), HF_OK);
        assert_results_equal(&r, &back);
        hf_result_clear(&back);
    }

    /* a NUL-terminated string cut short by its writer is damage, found by syntax */
    CU_ASSERT_EQUAL_FATAL(hf_result_write(path, &r), HF_OK);
    hid_t f = open_rw(path), g = H5Gopen2(f, "rows/2", H5P_DEFAULT);
    hid_t t = str_type(2, H5T_STR_NULLTERM);
    char cut[2][2] = {"1", "-"};
    replace_str_dataset(g, "weights", t, 2, wd, cut);
    H5Tclose(t);
    H5Gclose(g);
    H5Fclose(f);
    CU_ASSERT_EQUAL(hf_result_read(path, &back), HF_ERR_CORRUPT);
    CU_ASSERT(strstr(hf_error_msg(), path) == hf_error_msg());
    CU_ASSERT(strstr(hf_error_msg(), "/rows/2/weights: element 1 is not an integer") != NULL);

    /* a rational is no integer of format 4 */
    CU_ASSERT_EQUAL_FATAL(hf_result_write(path, &r), HF_OK);
    f = open_rw(path);
    g = H5Gopen2(f, "rows/2", H5P_DEFAULT);
    t = str_type(4, H5T_STR_NULLTERM);
    char frac[2][4] = {"1", "1/2"};
    replace_str_dataset(g, "weights", t, 2, wd, frac);
    H5Tclose(t);
    H5Gclose(g);
    H5Fclose(f);
    CU_ASSERT_EQUAL(hf_result_read(path, &back), HF_ERR_CORRUPT);
    CU_ASSERT(strstr(hf_error_msg(), "/rows/2/weights: element 1 is not an integer") != NULL);

    /* in an older file's rationals, "1/0" is refused as the target parser refuses it */
    CU_ASSERT_EQUAL_FATAL(hf_result_write(path, &r), HF_OK);
    make_old_layout(path, &r);
    f = open_rw(path);
    g = H5Gopen2(f, "rows/0", H5P_DEFAULT);
    t = str_type(4, H5T_STR_NULLTERM);
    char zero[6][4] = {"1", "1/0", "1", "1", "1", "1"};
    hsize_t d0[2] = {2, 3};
    replace_str_dataset(g, "weights", t, 2, d0, zero);
    H5Tclose(t);
    H5Gclose(g);
    H5Fclose(f);
    CU_ASSERT_EQUAL(hf_result_read(path, &back), HF_ERR_CORRUPT);
    CU_ASSERT(strstr(hf_error_msg(), "/rows/0/weights: element 1 is not a rational") != NULL);

    /* sizes never trusted: above 16 MiB a string, or more data than the file has
     * (declared only: nothing is written, the reader must refuse before reading) */
    size_t sizes[2] = {((size_t)1 << 24) + 1, (size_t)1 << 20};
    const char *why[2] = {"fixed-length strings of 16777217 bytes", "cannot be in a file of"};
    for (int i = 0; i < 2; i++) {
        CU_ASSERT_EQUAL_FATAL(hf_result_write(path, &r), HF_OK);
        f = open_rw(path);
        g = H5Gopen2(f, "rows/2", H5P_DEFAULT);
        t = str_type(sizes[i], H5T_STR_NULLTERM);
        replace_str_dataset(g, "weighted_values", t, 3, vd, NULL);
        H5Tclose(t);
        H5Gclose(g);
        H5Fclose(f);
        CU_ASSERT(file_size(path) < (long)sizes[i]);
        CU_ASSERT_EQUAL(hf_result_read(path, &back), HF_ERR_CORRUPT);
        CU_ASSERT(strstr(hf_error_msg(), path) == hf_error_msg());
        CU_ASSERT(strstr(hf_error_msg(), "/rows/2/weighted_values") != NULL);
        CU_ASSERT(strstr(hf_error_msg(), why[i]) != NULL);
        if (!strstr(hf_error_msg(), why[i]))
            fprintf(stderr, "[%s] ", hf_error_msg());
    }
    hf_result_clear(&r);
    scratch_done();
}

/* Every allocation made to fail in turn: each call fails cleanly with
 * HF_ERR_NOMEM (valgrind checks nothing leaks) until enough succeed. */
static void test_allocation_failures(void)
{
    char path[256], shard[256];
    scratch_make();
    scratch_path(path, sizeof path, "RESULT.h5");
    scratch_path(shard, sizeof shard, "shard.h5");
    hf_result_t r, back;
    hf_result_init(&r);
    hf_result_init(&back);
    make_result(&r);
    hf_err_t err = HF_ERR_NOMEM;
    long k;
    for (k = 1; k < 1000 && err == HF_ERR_NOMEM; k++) {
        hf_fail_after(k);
        err = hf_result_write(path, &r);
    }
    hf_fail_after(0);
    CU_ASSERT_EQUAL(err, HF_OK);
    CU_ASSERT(k > 1);
    err = HF_ERR_NOMEM;
    for (k = 1; k < 1000 && err == HF_ERR_NOMEM; k++) {
        hf_fail_after(k);
        err = hf_result_read(path, &back);
        CU_ASSERT(err == HF_OK || back.nrows == 0);
        if (err == HF_OK)
            assert_results_equal(&r, &back);
        hf_result_clear(&back);
    }
    hf_fail_after(0);
    CU_ASSERT_EQUAL(err, HF_OK);
    CU_ASSERT(k > 10);
    make_shard(shard, 10);
    err = HF_ERR_NOMEM;
    for (k = 1; k < 1000 && err == HF_ERR_NOMEM; k++) {
        hf_shard_data_t d;
        hf_shard_data_init(&d);
        hf_fail_after(k);
        err = hf_shard_read(shard, FP, &d);
        if (err == HF_OK)
            check_units(&d, 10);
        hf_shard_data_clear(&d);
    }
    CU_ASSERT_EQUAL(err, HF_OK);
    hf_fail_after(0);
    hf_result_clear(&r);
    scratch_done();
}

/* ---- write fault injection: every write call made to fail in turn ---- */

/* Open file descriptors of this process (to show a failed write leaks none). */
static int open_fds(void)
{
    DIR *d = opendir("/proc/self/fd");
    int n = 0;
    if (!d)
        return -1;
    while (readdir(d))
        n++;
    closedir(d);
    return n;
}

#define SWEEP_UNITS 6

/* The shard scenario of the sweep: create, write SWEEP_UNITS units (unit u with u % 3
 * found records), close. ok[u] says whether unit u's finish call succeeded. Returns
 * the number of calls that failed; each failure must name the file. */
static int shard_scenario(const char *path, int *created, int ok[SWEEP_UNITS])
{
    hf_shard_t *sh;
    int failures = 0;
    char rec[128];
    for (int u = 0; u < SWEEP_UNITS; u++)
        ok[u] = 0;
    *created = hf_shard_create(path, FP, NULL, &sh) == HF_OK;
    if (!*created) {
        CU_ASSERT(strstr(hf_error_msg(), path) == hf_error_msg());
        CU_ASSERT_PTR_NULL(sh);
        return 1;
    }
    for (int u = 0; u < SWEEP_UNITS; u++) {
        for (int j = 0; j < u % 3; j++) {
            snprintf(rec, sizeof rec, "{\"unit\": %d, \"j\": %d, \"keys\": [[0,1],[1,0]]}", u, j);
            CU_ASSERT_EQUAL(hf_shard_add_found(sh, 0, 4, u, 0, rec), HF_OK);
        }
        hf_unit_record_t ur = unit_rec(0, 4, u, u % 3);
        hf_err_t err = hf_shard_finish_unit(sh, &ur);
        ok[u] = err == HF_OK;
        if (!ok[u]) {
            failures++;
            CU_ASSERT_EQUAL(err, HF_ERR_IO);
            CU_ASSERT(strstr(hf_error_msg(), path) == hf_error_msg());
        }
    }
    if (hf_shard_destroy(&sh) != HF_OK) {
        failures++;
        CU_ASSERT(strstr(hf_error_msg(), path) == hf_error_msg());
        CU_ASSERT(strstr(hf_error_msg(), "closing shard") != NULL);
    }
    return failures;
}

/* What a shard holds after a fault: every unit whose finish call succeeded, at most
 * the one unit whose write was failing besides, nothing else, and every present
 * unit with exactly its found records. */
static void check_shard_after_fault(const char *path, const int ok[SWEEP_UNITS], long n)
{
    hf_shard_data_t d;
    hf_shard_data_init(&d);
    hf_err_t err = hf_shard_read(path, FP, &d);
    CU_ASSERT_EQUAL(err, HF_OK);
    if (err != HF_OK) {
        fprintf(stderr, "\n  N=%ld: %s\n", n, hf_error_msg());
        return;
    }
    int present[SWEEP_UNITS] = {0}, extra = 0;
    for (long i = 0; i < d.nunits; i++) {
        long u = (long)d.units[i].unit;
        CU_ASSERT_FATAL(u >= 0 && u < SWEEP_UNITS);
        hf_unit_record_t e = unit_rec(0, 4, u, u % 3);
        CU_ASSERT(!memcmp(&d.units[i], &e, sizeof e));
        CU_ASSERT(!present[u]);
        present[u] = 1;
        extra += !ok[u];
    }
    for (int u = 0; u < SWEEP_UNITS; u++)
        CU_ASSERT(!ok[u] || present[u]);
    CU_ASSERT(extra <= 1);
    char rec[128];
    for (int u = 0; u < SWEEP_UNITS; u++) {
        int j = 0;
        for (long i = 0; i < d.nfound; i++) {
            if (d.found_unit[i] != u)
                continue;
            CU_ASSERT(present[u]);
            snprintf(rec, sizeof rec, "{\"unit\": %d, \"j\": %d, \"keys\": [[0,1],[1,0]]}", u, j);
            CU_ASSERT_STRING_EQUAL(d.found_record[i], rec);
            j++;
        }
        CU_ASSERT_EQUAL(j, present[u] ? u % 3 : 0);
    }
    hf_shard_data_clear(&d);
}

/* Shards: fail each write call of a shard's life in turn. The call fails with a
 * message naming the shard; nothing stays open; the shard is gone (creation failed)
 * or readable, with every unit finished before the fault intact. */
static void test_fault_shard_sweep(void)
{
    char path[256];
    int ok[SWEEP_UNITS], created;
    scratch_make();
    scratch_path(path, sizeof path, "shard.sweep.h5");
    long before = hf_io_write_calls();
    CU_ASSERT_EQUAL_FATAL(shard_scenario(path, &created, ok), 0);
    long calls = hf_io_write_calls() - before;
    check_shard_after_fault(path, ok, 0);
    CU_ASSERT(calls > 20);
    int fds = open_fds();
    long kinds[3] = {0, 0, 0}; /* creation failed / a unit failed / only the close failed */
    for (long n = 1; n <= calls; n++) {
        unlink(path);
        hf_io_fail_after(n);
        int failures = shard_scenario(path, &created, ok);
        hf_io_fail_after(0);
        CU_ASSERT(failures >= 1);
        CU_ASSERT_EQUAL(H5Fget_obj_count(H5F_OBJ_ALL, H5F_OBJ_ALL), 0);
        CU_ASSERT_EQUAL(open_fds(), fds);
        if (!created) {
            CU_ASSERT(!file_exists(path));
            kinds[0]++;
            continue;
        }
        int all_ok = 1;
        for (int u = 0; u < SWEEP_UNITS; u++)
            all_ok &= ok[u];
        kinds[all_ok ? 2 : 1]++;
        check_shard_after_fault(path, ok, n);
    }
    /* every phase was hit */
    CU_ASSERT(kinds[0] > 0 && kinds[1] > 0 && kinds[2] > 0);
    if (getenv("HF_FAULT_VERBOSE"))
        fprintf(stderr, "[shard: %ld write calls: %ld in creation, %ld in units, %ld in close] ",
                calls, kinds[0], kinds[1], kinds[2]);
    scratch_done();
}

/* Results: fail each write call of hf_result_write in turn, over an existing good
 * file and where there is none. The write fails naming the file; no PATH.tmp is
 * left; the old file is intact and the new path stays absent. */
static void test_fault_result_sweep(void)
{
    char path[256], fresh[256], tmp[300], tmp2[300];
    scratch_make();
    scratch_path(path, sizeof path, "RESULT.h5");
    scratch_path(fresh, sizeof fresh, "NEW.h5");
    snprintf(tmp, sizeof tmp, "%s.tmp", path);
    snprintf(tmp2, sizeof tmp2, "%s.tmp", fresh);
    hf_result_t good, next, back;
    hf_result_init(&good);
    hf_result_init(&next);
    hf_result_init(&back);
    make_result(&good);
    make_result(&next);
    next.rows[0].nodes = 99999;
    next.ranks = 8;
    CU_ASSERT_EQUAL_FATAL(hf_result_write(path, &good), HF_OK);
    long before = hf_io_write_calls();
    CU_ASSERT_EQUAL_FATAL(hf_result_write(fresh, &next), HF_OK);
    long calls = hf_io_write_calls() - before;
    CU_ASSERT(calls > 50);
    unlink(fresh);
    int fds = open_fds();
    for (long n = 1; n <= calls; n++) {
        const char *where[2] = {path, fresh};
        for (int k = 0; k < 2; k++) {
            hf_io_fail_after(n);
            hf_err_t err = hf_result_write(where[k], &next);
            hf_io_fail_after(0);
            CU_ASSERT_EQUAL(err, HF_ERR_IO);
            CU_ASSERT(strstr(hf_error_msg(), where[k]) == hf_error_msg());
        }
        CU_ASSERT_EQUAL(H5Fget_obj_count(H5F_OBJ_ALL, H5F_OBJ_ALL), 0);
        CU_ASSERT_EQUAL(open_fds(), fds);
        CU_ASSERT(!file_exists(tmp));
        CU_ASSERT(!file_exists(tmp2));
        CU_ASSERT(!file_exists(fresh));
        CU_ASSERT_EQUAL(hf_result_read(path, &back), HF_OK);
        if (back.nrows)
            assert_results_equal(&good, &back);
        hf_result_clear(&back);
    }
    /* and with no fault left the new version replaces the old one */
    CU_ASSERT_EQUAL(hf_result_write(path, &next), HF_OK);
    CU_ASSERT_EQUAL_FATAL(hf_result_read(path, &back), HF_OK);
    assert_results_equal(&next, &back);
    hf_result_clear(&back);
    if (getenv("HF_FAULT_VERBOSE"))
        fprintf(stderr, "[result: %ld write calls] ", calls);
    hf_result_clear(&next);
    hf_result_clear(&good);
    scratch_done();
}

int hf_register_tests(void)
{
    static const hf_unit_case_t result_cases[] = {
        {"round trip of three rows, units and provenance", test_result_roundtrip},
        {"empty result, NULL provenance", test_result_empty_and_null_provenance},
        {"writer rejects invalid rows", test_result_write_rejects_invalid},
        {"unwritable path: error names it, no tmp left", test_result_unwritable},
        {"truncated, garbage and missing files", test_result_truncated_and_garbage},
        {"inconsistent contents are reported", test_result_inconsistent},
        {"allocation failures", test_allocation_failures},
        {"string attributes in ASCII and UTF-8", test_string_attribute_charsets},
        {"no variable-length string in a new file", test_result_fixed_strings},
        {"old layout (variable-length strings) reads the same", test_result_old_layout},
        {"format 1 (no engine, max_atoms, job text) still reads", test_result_format1},
        {"m* beyond 64 bits round-trips; format 2 reads", test_result_big_m_star},
        {"unit ranges round-trip; units without lo, hi read as whole", test_result_unit_ranges},
        {"padded strings read; absurd string sizes refused", test_result_string_variants},
        {NULL, NULL},
    };
    static const hf_unit_case_t shard_cases[] = {
        {"round trip; in-flight records dropped", test_shard_roundtrip},
        {"found record of another unit", test_shard_mismatched_unit},
        {"fingerprint mismatch", test_shard_fingerprint},
        {"killed writer, file never closed", test_shard_killed_writer},
        {"live shard read while its writer runs", test_shard_live},
        {"disk full under a shard", test_shard_disk_full},
        {"unwritten tail records and bad record texts", test_shard_tail_and_texts},
        {"truncated shard", test_shard_truncated},
        {"corrupted shard", test_shard_corrupted},
        {"large records in /bigtext", test_shard_big_records},
        {"ranges of cells of one unit; found records of unfinished ranges dropped",
         test_shard_ranges},
        {"format 1 (whole units) still reads", test_shard_format1},
        {NULL, NULL},
    };
    static const hf_unit_case_t merge_cases[] = {
        {"disjoint ranges of a unit are all kept", test_merge_disjoint},
        {"the seconds of the runs that wrote the shards", test_merge_runs_seconds},
        {"overlapping ranges dropped with their found records", test_merge_overlap},
        {"a whole unit beats later ranges of it (format-1 shard)", test_merge_whole_unit},
        {"many units split over shards", test_merge_many},
        {NULL, NULL},
    };
    static const hf_unit_case_t fault_cases[] = {
        {"every shard write call failing in turn", test_fault_shard_sweep},
        {"every result write call failing in turn", test_fault_result_sweep},
        {NULL, NULL},
    };
    if (hf_unit_suite("store.result", result_cases) || hf_unit_suite("store.shard", shard_cases) ||
        hf_unit_suite("store.merge", merge_cases) || hf_unit_suite("store.faults", fault_cases))
        return -1;
    return 0;
}
