/* RESULT.h5 read: every format this headfuse has written (1 to 4), each field checked
 * (result.c) and every size bounded by the file's own before anything is allocated.
 * Format: docs/hdf5-format.md. */
#include <ctype.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "store/store_impl.h"

/* Product of dims with an overflow guard; 0 if implausibly large. */
static int dims_count(const hsize_t *dims, int rank, size_t *count)
{
    size_t c = 1;
    for (int i = 0; i < rank; i++) {
        if (dims[i] && c > ((size_t)1 << 40) / dims[i])
            return 0;
        c *= dims[i];
    }
    *count = c;
    return 1;
}

/* A result file is written in full, so the data of every dataset is in the file: `count`
 * elements of at least `elsize` bytes each cannot take more than the file's size. Checked
 * before allocating, so that memory stays in proportion to the file (a 10 kB file whose
 * row claimed n = 2^30 supports made the reader ask for 512 GB; found with the fuzz
 * harness). */
static hf_err_t check_fits(hid_t ds, size_t count, size_t elsize, const char *path,
                           const char *where)
{
    hsize_t fsize = 0;
    hid_t f = H5Iget_file_id(ds);
    herr_t rc = f >= 0 ? H5Fget_filesize(f, &fsize) : -1;
    if (f >= 0)
        H5Fclose(f); /* only the reference H5Iget_file_id added */
    if (rc < 0)
        return hf_h5_fail(HF_ERR_CORRUPT, path, where);
    if (elsize == 0)
        elsize = 1;
    /* a compressed dataset (docs/hdf5-format.md, "Conventions") can hold up to about 1032
     * times the file's bytes (deflate's best); a damaged extent still cannot claim more */
    hid_t dcpl = H5Dget_create_plist(ds);
    int filtered = dcpl >= 0 && H5Pget_nfilters(dcpl) > 0;
    if (dcpl >= 0)
        H5Pclose(dcpl);
    if (filtered)
        fsize = fsize > ((hsize_t)1 << 50) ? ((hsize_t)1 << 60) : fsize * 1100;
    if (count > fsize / elsize)
        return hf_error(HF_ERR_CORRUPT,
                        "%s: %s: %zu elements of %zu bytes cannot be in a file of %llu bytes", path,
                        where, count, elsize, (unsigned long long)fsize);
    return HF_OK;
}

/* The optional attribute group_note of /rows/<i> into row->group_note (files written
 * before it existed have none: ""); printable text that fits, else corrupt. */
static hf_err_t read_group_note(hid_t g, const char *path, const char *where, hf_row_t *row)
{
    row->group_note[0] = '\0';
    if (H5Aexists(g, "group_note") <= 0)
        return HF_OK;
    char *note = NULL;
    HF_TRY(hf_h5_attr_read_str(g, "group_note", path, where, &note));
    int ok = strlen(note) < sizeof row->group_note;
    for (const char *p = note; ok && *p; p++)
        ok = *p >= ' ' && *p <= '~';
    if (ok)
        snprintf(row->group_note, sizeof row->group_note, "%s", note);
    free(note);
    return ok ? HF_OK : hf_error(HF_ERR_CORRUPT, "%s: %s: invalid group_note", path, where);
}

/* Read /rows/<i> into r->supports[i] and r->target_json[i]. Its witnesses are integers
 * (weights, weighted_values: format 4), or rational strings (weights, values: a file of
 * formats 1 to 3). */
static hf_err_t read_row_group(hid_t rows, long i, const char *path, hf_result_t *r)
{
    hf_err_t err = HF_OK;
    char name[32], where[64];
    snprintf(name, sizeof name, "%ld", i);
    snprintf(where, sizeof where, "/rows/%ld", i);
    htri_t ex = H5Lexists(rows, name, H5P_DEFAULT);
    if (ex <= 0)
        return hf_error(HF_ERR_CORRUPT, "%s: %s: missing", path, where);
    hid_t g = H5Gopen2(rows, name, H5P_DEFAULT);
    if (g < 0)
        return hf_h5_fail(HF_ERR_CORRUPT, path, where);
    hf_supports_t *s = &r->supports[i];
    int64_t m, d, dv, n;
    HF_CHECK(err, hf_h5_attr_read_str(g, "target_json", path, where, &r->target_json[i]), done);
    HF_CHECK(err, hf_h5_attr_read_i64(g, "m", path, where, &m), done);
    HF_CHECK(err, hf_h5_attr_read_i64(g, "d", path, where, &d), done);
    HF_CHECK(err, hf_h5_attr_read_i64(g, "dv", path, where, &dv), done);
    HF_CHECK(err, hf_h5_attr_read_i64(g, "n", path, where, &n), done);
    HF_CHECK(err, read_group_note(g, path, where, &r->rows[i]), done);
    if (d < 1 || d > HF_D_MAX || dv < 1 || dv > HF_DV_MAX || m < -1 || m > (1L << 40) || n < 0 ||
        n > (1L << 40)) {
        err = hf_error(HF_ERR_CORRUPT,
                       "%s: %s: attributes out of range (m=%" PRId64 ", d=%" PRId64 ", dv=%" PRId64
                       ", n=%" PRId64 ")",
                       path, where, m, d, dv, n);
        goto done;
    }
    hf_supports_init(s, (long)m, (int)d, (int)dv);
    const char *bad;
    {
        hf_supports_t shape = *s;
        shape.n = (long)n;
        bad = hf_result_supports_bad(&shape, &r->rows[i]);
    }
    if (bad) {
        err = hf_error(HF_ERR_CORRUPT,
                       "%s: %s: %s (m=%" PRId64 ", d=%" PRId64 ", n=%" PRId64
                       "; /table row: m_star=%" PRId64 ", d=%d)",
                       path, where, bad, m, d, n, r->rows[i].m_star, (int)r->rows[i].d);
        goto done;
    }
    s->n = (long)n;
    err = hf_supports_read_group(g, path, where, H5Lexists(g, "weighted_values", H5P_DEFAULT) <= 0,
                                 s);
done:
    H5Gclose(g);
    return err;
}

static hf_err_t read_provenance(hid_t file, const char *path, hf_result_t *r)
{
    struct {
        const char *name;
        char **dst;
    } s[] = {{"version", &r->version},           {"git_commit", &r->git_commit},
             {"command_line", &r->command_line}, {"host", &r->host},
             {"start_time", &r->start_time},     {"end_time", &r->end_time}};
    for (size_t i = 0; i < sizeof s / sizeof *s; i++)
        HF_TRY(hf_h5_attr_read_str(file, s[i].name, path, "/", s[i].dst));
    /* job_text came with format 2: optional */
    htri_t has_job = H5Aexists(file, "job_text");
    if (has_job < 0)
        return hf_h5_fail(HF_ERR_CORRUPT, path, "/: unreadable attributes");
    if (has_job > 0)
        HF_TRY(hf_h5_attr_read_str(file, "job_text", path, "/", &r->job_text));
    int64_t ranks;
    HF_TRY(hf_h5_attr_read_i64(file, "ranks", path, "/", &ranks));
    if (ranks < 0 || ranks > INT32_MAX)
        return hf_error(HF_ERR_CORRUPT, "%s: /: attribute 'ranks' out of range", path);
    r->ranks = (int32_t)ranks;
    return HF_OK;
}

/* Open a 1-D compound dataset, check its fields and read it whole. older[0..nolder): the
 * memory types of older layouts of the same records, with fewer fields, each used when the
 * file has exactly its number of fields; *was_older says which was read: 0 the current
 * layout, i + 1 older[i]. */
static hf_err_t read_compound(hid_t file, const char *name, hid_t mtype, const hid_t *older,
                              int nolder, size_t elsize, const char *path, void **out, long *n,
                              int *was_older)
{
    hf_err_t err = HF_OK;
    char where[32];
    hsize_t dims[1];
    size_t count;
    snprintf(where, sizeof where, "/%s", name);
    *out = NULL;
    hid_t ds = H5Dopen2(file, name, H5P_DEFAULT), ft = H5I_INVALID_HID;
    if (ds < 0)
        return hf_error(HF_ERR_CORRUPT, "%s: %s: missing or unreadable", path, where);
    if ((ft = H5Dget_type(ds)) < 0) {
        err = hf_h5_fail(HF_ERR_CORRUPT, path, where);
        goto done;
    }
    *was_older = 0;
    for (int i = 0; i < nolder && !*was_older; i++)
        if (H5Tget_class(ft) == H5T_COMPOUND && H5Tget_nmembers(ft) == H5Tget_nmembers(older[i])) {
            mtype = older[i];
            *was_older = i + 1;
        }
    HF_CHECK(err, hf_h5_check_compound(ft, mtype, path, where), done);
    HF_CHECK(err, hf_h5_dataset_dims(ds, 1, path, where, dims), done);
    if (!dims_count(dims, 1, &count) || count > (1u << 30)) {
        err = hf_error(HF_ERR_CORRUPT, "%s: %s: implausible size", path, where);
        goto done;
    }
    HF_CHECK(err, check_fits(ds, count, H5Tget_size(ft), path, where), done);
    void *buf = hf_calloc(count, elsize);
    if (!buf) {
        err = HF_ERR_NOMEM;
        goto done;
    }
    if (count && H5Dread(ds, mtype, H5S_ALL, H5S_ALL, H5P_DEFAULT, buf) < 0) {
        free(buf);
        err = hf_h5_fail(HF_ERR_CORRUPT, path, where);
        goto done;
    }
    *out = buf;
    *n = (long)count;
done:
    if (ft >= 0)
        H5Tclose(ft);
    H5Dclose(ds);
    return err;
}

/* The format of an open result file: *format 4 (this one), 3 (the same table, witnesses as
 * rational strings), 2 or 1 (older tables too); any other is HF_ERR_CORRUPT, saying so when
 * a newer headfuse wrote it. */
static hf_err_t read_format(hid_t file, const char *path, int *format)
{
    char *name = NULL;
    hf_err_t err = HF_OK;
    if (H5Aexists(file, "format") <= 0)
        return hf_error(HF_ERR_CORRUPT, "%s: not a headfuse result file (no format attribute)",
                        path);
    HF_TRY(hf_h5_attr_read_str(file, "format", path, "/", &name));
    *format = !strcmp(name, RESULT_FORMAT)     ? 4
              : !strcmp(name, RESULT_FORMAT_3) ? 3
              : !strcmp(name, RESULT_FORMAT_2) ? 2
              : !strcmp(name, RESULT_FORMAT_1) ? 1
                                               : 0;
    if (!*format) {
        /* "headfuse-result-N" of a later N: a newer headfuse wrote it */
        const char *tail = name + strlen(RESULT_FORMAT_PREFIX);
        char *end = NULL;
        long v = strncmp(name, RESULT_FORMAT_PREFIX, strlen(RESULT_FORMAT_PREFIX))
                     ? 0
                     : strtol(tail, &end, 10);
        if (v > 4 && end && !*end && isdigit((unsigned char)*tail))
            err = hf_error(HF_ERR_CORRUPT,
                           "%s: written by a newer headfuse (format '%s'); this headfuse reads "
                           "'%s', '%s', '%s' and '%s': read it with the headfuse that wrote it",
                           path, name, RESULT_FORMAT, RESULT_FORMAT_3, RESULT_FORMAT_2,
                           RESULT_FORMAT_1);
        else
            err = hf_error(HF_ERR_CORRUPT,
                           "%s: not a headfuse result file (format '%s', expected '%s', '%s', "
                           "'%s' or '%s')",
                           path, name, RESULT_FORMAT, RESULT_FORMAT_3, RESULT_FORMAT_2,
                           RESULT_FORMAT_1);
    }
    free(name);
    return err;
}

/* Row i of /table as read (older: 0, or 1 and 2 for the rows of formats 2 and 1) made a row
 * of this format; the name of an invalid field, or NULL. */
static const char *row_upgrade(hf_row_t *w, int older)
{
    if (older == 2) {
        /* the rows of a format-1 file do not say how they were searched */
        w->max_atoms = -1;
        snprintf(w->engine, sizeof w->engine, "unknown");
        snprintf(w->lb_rule, sizeof w->lb_rule, "unknown");
    }
    /* before format 3, m* was the int64 alone */
    if (older)
        snprintf(w->m_star_dec, sizeof w->m_star_dec, "%" PRId64,
                 w->m_star < 0 ? (int64_t)-1 : w->m_star);
    /* never trust a terminator from the file */
    w->name[HF_NAME_LEN - 1] = w->lb[HF_BIGINT_LEN - 1] = w->ub[HF_BIGINT_LEN - 1] = '\0';
    w->status[HF_STATUS_LEN - 1] = w->engine[HF_ENGINE_LEN - 1] = '\0';
    w->lb_rule[HF_RULE_LEN - 1] = w->m_star_dec[HF_BIGINT_LEN - 1] = '\0';
    /* before "infeasible" existed, a row without a support in its span said "exhaustive"
     * with m_star -1 */
    if (!strcmp(w->status, "exhaustive") && !strcmp(w->m_star_dec, "-1"))
        snprintf(w->status, sizeof w->status, "infeasible");
    return hf_result_row_bad(w);
}

/* /table into r->rows (rows of format 3 and later, or of formats 2 and 1 in a file of those:
 * `current` 0), each checked, and room for their supports and targets: r->nrows set. */
static hf_err_t read_table(hid_t file, const char *path, int current, hf_result_t *r)
{
    hf_err_t err = HF_OK;
    hid_t rowm = H5I_INVALID_HID;
    hid_t rowm_old[2] = {H5I_INVALID_HID, H5I_INVALID_HID}; /* formats 2 and 1 */
    void *buf = NULL;
    long n = 0;
    int older = 0;
    if ((rowm = hf_h5_row_type(0)) < 0 ||
        (rowm_old[0] = hf_h5_row_type_older(0, HF_H5_ROW_V2_FIELDS)) < 0 ||
        (rowm_old[1] = hf_h5_row_type_older(0, HF_H5_ROW_V1_FIELDS)) < 0) {
        err = hf_h5_fail(HF_ERR_INTERNAL, path, "building datatypes");
        goto done;
    }
    HF_CHECK(err,
             read_compound(file, "table", rowm, rowm_old, current ? 0 : 2, sizeof(hf_row_t), path,
                           &buf, &n, &older),
             done);
    r->rows = buf;
    for (long i = 0; i < n; i++) {
        const char *bad = row_upgrade(&r->rows[i], older);
        if (bad) {
            err = hf_error(HF_ERR_CORRUPT, "%s: /table[%ld]: invalid %s", path, i, bad);
            goto done;
        }
    }
    r->supports = hf_calloc((size_t)n, sizeof *r->supports);
    r->target_json = hf_calloc((size_t)n, sizeof *r->target_json);
    if (!r->supports || !r->target_json) {
        err = HF_ERR_NOMEM;
        goto done;
    }
    r->nrows = r->caprows = n; /* from here hf_result_clear frees what was read */
done:
    for (int i = 0; i < 2; i++)
        if (rowm_old[i] >= 0)
            H5Tclose(rowm_old[i]);
    if (rowm >= 0)
        H5Tclose(rowm);
    return err;
}

/* The groups /rows/<i>, one a row of /table: the supports and target of each. */
static hf_err_t read_rows(hid_t file, const char *path, hf_result_t *r)
{
    hf_err_t err = HF_OK;
    hid_t rows = H5Gopen2(file, "rows", H5P_DEFAULT);
    if (rows < 0)
        return hf_error(HF_ERR_CORRUPT, "%s: /rows: missing or unreadable", path);
    H5G_info_t info;
    if (H5Gget_info(rows, &info) < 0)
        err = hf_h5_fail(HF_ERR_CORRUPT, path, "/rows");
    else if ((long)info.nlinks != r->nrows)
        err = hf_error(HF_ERR_CORRUPT, "%s: /rows: has %llu entries but /table has %ld rows", path,
                       (unsigned long long)info.nlinks, r->nrows);
    for (long i = 0; err == HF_OK && i < r->nrows; i++)
        err = read_row_group(rows, i, path, r);
    H5Gclose(rows);
    return err;
}

/* /units into r->units, each checked; /units without lo and hi: a file written before cell
 * ranges, of whole units. */
static hf_err_t read_units(hid_t file, const char *path, hf_result_t *r)
{
    hid_t mt[2] = {hf_h5_unit_type(0), hf_h5_unit_type_v1(0)}; /* this format's, the first */
    void *buf = NULL;
    int v1_units = 0;
    hf_err_t err = mt[0] < 0 || mt[1] < 0
                       ? hf_h5_fail(HF_ERR_INTERNAL, path, "building datatypes")
                       : read_compound(file, "units", mt[0], &mt[1], 1, sizeof(hf_unit_record_t),
                                       path, &buf, &r->nunits, &v1_units);
    for (int i = 0; i < 2; i++)
        if (mt[i] >= 0)
            H5Tclose(mt[i]);
    HF_TRY(err);
    r->units = buf;
    for (long i = 0; i < r->nunits; i++) {
        if (v1_units) {
            r->units[i].lo = 0;
            r->units[i].hi = HF_CELLS_ALL;
        }
        const char *bad = hf_result_unit_bad(&r->units[i], r->nrows);
        if (bad)
            return hf_error(HF_ERR_CORRUPT, "%s: /units[%ld]: %s", path, i, bad);
    }
    return HF_OK;
}

/* The file into r, uninitialised: initialised here (clear it even on error). */
static hf_err_t result_read(const char *path, hf_result_t *r)
{
    hf_h5_quiet_t q;
    hf_err_t err = HF_OK;
    hid_t file = H5I_INVALID_HID;
    int format = 0;
    hf_result_init(r);
    hf_h5_quiet_begin(&q);
    HF_CHECK(err, hf_h5_open_read(path, "result", 0, &file), done);
    HF_CHECK(err, read_format(file, path, &format), done);
    HF_CHECK(err, read_provenance(file, path, r), done);
    /* a file of format 3 or 4 has the rows of format 3; formats 1 and 2 one of the older */
    HF_CHECK(err, read_table(file, path, format >= 3, r), done);
    HF_CHECK(err, read_rows(file, path, r), done);
    err = read_units(file, path, r);
done:
    if (file >= 0)
        H5Fclose(file);
    if (err != HF_OK)
        hf_result_clear(r);
    hf_h5_quiet_end(&q);
    return err;
}

static hf_err_t probe_result(const char *path, const void *arg)
{
    (void)arg;
    hf_result_t r;
    hf_err_t err = result_read(path, &r);
    hf_result_clear(&r);
    return err;
}

hf_err_t hf_result_read(const char *path, hf_result_t *r)
{
    /* a file given by mistake (a JSON target, a plot) is bad input, not a damaged result */
    if (hf_h5_signature(path) == 0)
        return hf_error(HF_ERR_INPUT,
                        "%s: not an HDF5 file (a result file is the RESULT.h5 that headfuse "
                        "search or run writes)",
                        path);
    hf_err_t err = hf_h5_read_guard(path, "result file", probe_result, NULL, NULL);
    if (err != HF_OK)
        return err;
    hf_result_t nr; /* read aside: r keeps its value on failure */
    err = result_read(path, &nr);
    if (err == HF_OK) {
        hf_result_clear(r);
        *r = nr;
    } else {
        hf_result_clear(&nr);
    }
    return err;
}
