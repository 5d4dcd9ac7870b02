/* The minimal supports of a row with their exact witnesses (headfuse/store.h): the value in
 * memory, its datasets in a row group (format 4, docs/hdf5-format.md, "/rows/<i>"), the
 * supports of older files converted, supports held in a file and read in pieces.
 *
 * A head does not change when all its weights are multiplied by one positive number, so a
 * witness is kept as integers: each atom's weight c and its value times its weight u = c v,
 * the pair (c, u) of a support scaled to the primitive integer vector (no common factor,
 * c > 0). The value is u / c. Integers that fit 64 bits are stored as int64 and the rest as
 * decimal strings (a whole dataset one way or the other); a witness of 10^7 keys is then
 * 16 bytes a key on disk before compression, not two strings. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <flint/fmpz_vec.h>

#include "headfuse/control.h"
#include "headfuse/stop.h"
#include "store/store_impl.h"

/* Largest decimal string of a weight (format 4) or a rational (older formats), NUL
 * included: a larger fixed-length size in a file is damage. */
#define SUPPORTS_STR_MAX ((size_t)1 << 24)

/* ------------------------------------------------------------------ the value */

/* n, or 1 for an empty array (allocations of 0 bytes may return NULL). */
static inline long one_or(long n)
{
    return n ? n : 1;
}

void hf_supports_init(hf_supports_t *s, long m, int d, int dv)
{
    memset(s, 0, sizeof *s);
    s->m = m;
    s->d = d;
    s->dv = dv;
}

static long supports_atoms(const hf_supports_t *s)
{
    return s->n * (s->m > 0 ? s->m : 0);
}

void hf_supports_clear(hf_supports_t *s)
{
    if (s->weights)
        _fmpz_vec_clear(s->weights, s->cap * (s->m > 0 ? s->m : 0));
    if (s->wvalues)
        _fmpz_vec_clear(s->wvalues, s->cap * (s->m > 0 ? s->m : 0) * s->dv);
    free(s->keys);
    free(s->file);
    free(s->group);
    hf_supports_init(s, 0, s->d, s->dv);
}

/* Room for `need` supports (fmpz arrays are moved by swapping, never copied). */
static hf_err_t supports_room(hf_supports_t *s, long need)
{
    if (need <= s->cap)
        return HF_OK;
    long cap = s->cap ? 2 * s->cap : 1, m = s->m > 0 ? s->m : 0;
    while (cap < need)
        cap *= 2;
    int64_t *k = hf_realloc(s->keys, (size_t)one_or(cap * m * s->d) * sizeof *k);
    if (!k)
        return HF_ERR_NOMEM;
    s->keys = k;
    fmpz *w = _fmpz_vec_init(cap * m), *u = _fmpz_vec_init(cap * m * s->dv);
    for (long i = 0; i < s->n * m; i++)
        fmpz_swap(w + i, s->weights + i);
    for (long i = 0; i < s->n * m * s->dv; i++)
        fmpz_swap(u + i, s->wvalues + i);
    if (s->weights)
        _fmpz_vec_clear(s->weights, s->cap * m);
    if (s->wvalues)
        _fmpz_vec_clear(s->wvalues, s->cap * m * s->dv);
    s->weights = w;
    s->wvalues = u;
    s->cap = cap;
    return HF_OK;
}

hf_err_t hf_supports_push_ints(hf_supports_t *s, const int64_t *keys, const fmpz *c, const fmpz *u)
{
    if (s->m < 0 || s->d < 1 || s->dv < 1 || s->file)
        return hf_error(HF_ERR_INTERNAL, "supports: cannot push with m=%ld, d=%d, dv=%d%s", s->m,
                        s->d, s->dv, s->file ? " (held in a file)" : "");
    long m = s->m, d = s->d, dv = s->dv;
    HF_TRY(supports_room(s, s->n + 1));
    if (m * d > 0)
        memcpy(s->keys + s->n * m * d, keys, (size_t)(m * d) * sizeof *keys);
    _fmpz_vec_set(s->weights + s->n * m, c, m);
    _fmpz_vec_set(s->wvalues + s->n * m * dv, u, m * dv);
    s->n++;
    return HF_OK;
}

void hf_supports_scale(fmpz *c, long m, fmpz *u, long mu)
{
    fmpz_t g, h;
    fmpz_init(g);
    fmpz_init(h);
    _fmpz_vec_content(g, c, m);
    _fmpz_vec_content(h, u, mu);
    fmpz_gcd(g, g, h);
    if (!fmpz_is_zero(g) && !fmpz_is_one(g)) {
        _fmpz_vec_scalar_divexact_fmpz(c, c, m, g);
        _fmpz_vec_scalar_divexact_fmpz(u, u, mu, g);
    }
    fmpz_clear(h);
    fmpz_clear(g);
}

/* The integers of a head: c_i = L w_i, u_ij = L w_i v_ij with L the lcm of all their
 * denominators, then the pair made primitive. */
static void head_ints(const hf_head_t *h, fmpz *c, fmpz *u)
{
    long m = h->natoms;
    int dv = h->dv;
    fmpz_t L, t;
    fmpq_t cv;
    fmpz_init(L);
    fmpz_init(t);
    fmpq_init(cv);
    fmpz_one(L);
    for (long i = 0; i < m; i++) {
        fmpz_lcm(L, L, fmpq_denref(h->weights + i));
        for (int j = 0; j < dv; j++) {
            fmpq_mul(cv, h->weights + i, h->values + i * dv + j);
            fmpz_lcm(L, L, fmpq_denref(cv));
        }
    }
    for (long i = 0; i < m; i++) {
        fmpz_divexact(t, L, fmpq_denref(h->weights + i));
        fmpz_mul(c + i, t, fmpq_numref(h->weights + i));
        for (int j = 0; j < dv; j++) {
            fmpq_mul(cv, h->weights + i, h->values + i * dv + j);
            fmpz_divexact(t, L, fmpq_denref(cv));
            fmpz_mul(u + i * dv + j, t, fmpq_numref(cv));
        }
    }
    hf_supports_scale(c, m, u, m * dv);
    fmpq_clear(cv);
    fmpz_clear(t);
    fmpz_clear(L);
}

hf_err_t hf_supports_push_head(hf_supports_t *s, const hf_head_t *h)
{
    long m = h->natoms;
    if (m != s->m || h->d != s->d || h->dv != s->dv)
        return hf_error(HF_ERR_INTERNAL,
                        "supports: a head of %ld atoms (d=%d, dv=%d) in rows of %ld", m, h->d,
                        h->dv, s->m);
    fmpz *c = _fmpz_vec_init(m ? m : 1), *u = _fmpz_vec_init(one_or(m * h->dv));
    head_ints(h, c, u);
    hf_err_t e = hf_supports_push_ints(s, h->keys, c, u);
    _fmpz_vec_clear(u, one_or(m * h->dv));
    _fmpz_vec_clear(c, m ? m : 1);
    return e;
}

/* Atoms [0, m) of a support, as integers, into a head: weight c, value u / c. */
static hf_err_t ints_head(long m, int d, int dv, const int64_t *keys, const fmpz *c, const fmpz *u,
                          hf_head_t *h, const char **why)
{
    *why = NULL;
    HF_TRY(hf_head_resize(h, m));
    memcpy(h->keys, keys, (size_t)(m * d) * sizeof *keys);
    for (long a = 0; a < m; a++) {
        if (fmpz_sgn(c + a) <= 0) {
            *why = "a weight is not positive";
            return HF_OK;
        }
        fmpz_set(fmpq_numref(h->weights + a), c + a);
        fmpz_one(fmpq_denref(h->weights + a));
        for (int j = 0; j < dv; j++)
            fmpq_set_fmpz_frac(h->values + a * dv + j, u + a * dv + j, c + a);
    }
    return HF_OK;
}

hf_err_t hf_supports_head(const hf_supports_t *s, long j, hf_head_t *h, const char **why)
{
    *why = NULL;
    long m = s->m > 0 ? s->m : 0;
    if (!s->file)
        return ints_head(m, s->d, s->dv, s->keys + j * m * s->d, s->weights + j * m,
                         s->wvalues + j * m * s->dv, h, why);
    hf_supports_reader_t *rd = NULL;
    int64_t *keys = hf_malloc((size_t)one_or(m * s->d) * sizeof *keys);
    fmpz *c = _fmpz_vec_init(m ? m : 1), *u = _fmpz_vec_init(one_or(m * s->dv));
    hf_err_t e = keys ? hf_supports_open(s, &rd) : HF_ERR_NOMEM;
    if (e == HF_OK)
        e = hf_supports_read(rd, j, 0, m, keys, c, u);
    if (e == HF_OK)
        e = ints_head(m, s->d, s->dv, keys, c, u, h, why);
    hf_supports_close(&rd);
    _fmpz_vec_clear(u, one_or(m * s->dv));
    _fmpz_vec_clear(c, m ? m : 1);
    free(keys);
    return e;
}

hf_err_t hf_supports_copy(hf_supports_t *dst, const hf_supports_t *src)
{
    hf_supports_t t;
    hf_supports_init(&t, src->m, src->d, src->dv);
    hf_err_t e = HF_OK;
    if (src->file) {
        t.n = src->n;
        t.file = hf_strdup(src->file);
        t.group = hf_strdup(src->group);
        e = t.file && t.group ? HF_OK : HF_ERR_NOMEM;
    } else {
        long m = src->m > 0 ? src->m : 0;
        for (long i = 0; i < src->n && e == HF_OK; i++)
            e = hf_supports_push_ints(&t, src->keys + i * m * src->d, src->weights + i * m,
                                      src->wvalues + i * m * src->dv);
    }
    if (e != HF_OK) {
        hf_supports_clear(&t);
        return e;
    }
    hf_supports_clear(dst);
    *dst = t;
    return HF_OK;
}

hf_err_t hf_supports_in_file(hf_supports_t *s, long n, const char *file, const char *group)
{
    char *f = hf_strdup(file), *g = hf_strdup(group);
    if (!f || !g) {
        free(f);
        free(g);
        return HF_ERR_NOMEM;
    }
    long m = s->m;
    int d = s->d, dv = s->dv;
    hf_supports_clear(s);
    hf_supports_init(s, m, d, dv);
    s->n = n;
    s->file = f;
    s->group = g;
    return HF_OK;
}

/* ------------------------------------------------------------------ writing a row's datasets */

/* The narrowest of the two key types that holds every key: unsigned bytes (every key of a
 * search in its span box) or int64. */
static hid_t keys_file_type(const int64_t *keys, size_t count)
{
    for (size_t i = 0; i < count; i++)
        if (keys[i] < 0 || keys[i] > 255)
            return H5T_STD_I64LE;
    return H5T_STD_U8LE;
}

int hf_supports_fits_i64(const fmpz *x, long n)
{
    for (long i = 0; i < n; i++)
        if (!fmpz_fits_si(x + i))
            return 0;
    return 1;
}

size_t hf_supports_decimal_size(const fmpz *x, long n)
{
    size_t w = 1;
    for (long i = 0; i < n; i++) {
        size_t l = fmpz_sizeinbase(x + i, 10) + (fmpz_sgn(x + i) < 0);
        w = l > w ? l : w;
    }
    return w + 1;
}

/* n integers as fixed-length decimal strings of `size` bytes each (NUL-padded). */
hf_err_t hf_supports_decimals(const fmpz *x, long n, size_t size, char *out)
{
    memset(out, 0, (size_t)n * size);
    for (long i = 0; i < n; i++) {
        char *t = fmpz_get_str(NULL, 10, x + i);
        if (!t)
            return HF_ERR_NOMEM;
        size_t l = strlen(t);
        if (l >= size) {
            flint_free(t);
            return hf_error(HF_ERR_INTERNAL, "supports: an integer of %zu digits in %zu bytes", l,
                            size);
        }
        memcpy(out + (size_t)i * size, t, l);
        flint_free(t);
    }
    return HF_OK;
}

/* n integers as a dataset: int64 when all fit, else fixed-length decimal strings. */
static hf_err_t write_ints(hid_t g, const char *name, int rank, const hsize_t *dims, const fmpz *x,
                           long n)
{
    if (hf_supports_fits_i64(x, n)) {
        int64_t *b = hf_malloc((size_t)(n ? n : 1) * sizeof *b);
        if (!b)
            return HF_ERR_NOMEM;
        for (long i = 0; i < n; i++)
            b[i] = fmpz_get_si(x + i);
        herr_t rc = hf_h5_dataset_write(g, name, H5T_STD_I64LE, H5T_NATIVE_INT64, rank, dims, b, 1);
        free(b);
        return rc < 0 ? HF_ERR_IO : HF_OK;
    }
    size_t size = hf_supports_decimal_size(x, n);
    char *b = hf_malloc((size_t)n * size);
    if (!b)
        return HF_ERR_NOMEM;
    hf_err_t e = hf_supports_decimals(x, n, size, b);
    hid_t t = e == HF_OK ? hf_h5_fixed_str_type(size) : H5I_INVALID_HID;
    herr_t rc = t < 0 ? -1 : hf_h5_dataset_write(g, name, t, t, rank, dims, b, 1);
    if (t >= 0)
        H5Tclose(t);
    free(b);
    return e != HF_OK ? e : rc < 0 ? HF_ERR_IO : HF_OK;
}

/* The supports' datasets copied from the file that holds them (H5Ocopy moves the chunks as
 * they are: a large row's witness is never held in memory). */
static hf_err_t copy_datasets(hid_t g, const hf_supports_t *s, char *what, size_t nwhat)
{
    static const char *const names[3] = {"keys", "weights", "weighted_values"};
    hid_t src = H5I_INVALID_HID, sg = H5I_INVALID_HID;
    hf_err_t e = hf_h5_open_read(s->file, "supports file", 0, &src);
    if (e != HF_OK)
        return e;
    if ((sg = H5Gopen2(src, s->group, H5P_DEFAULT)) < 0) {
        e = hf_error(HF_ERR_IO, "%s: %s: missing or unreadable", s->file, s->group);
        goto done;
    }
    for (int i = 0; i < 3; i++) {
        snprintf(what, nwhat, "copying %s from %s", names[i], s->file);
        if (HF_H5W(H5Ocopy(sg, names[i], g, names[i], H5P_DEFAULT, H5P_DEFAULT)) < 0) {
            e = HF_ERR_IO;
            goto done;
        }
    }
done:
    if (sg >= 0)
        H5Gclose(sg);
    H5Fclose(src);
    return e;
}

hf_err_t hf_supports_write_group(hid_t g, const hf_supports_t *s, char *what, size_t nwhat)
{
    if (s->file)
        return copy_datasets(g, s, what, nwhat);
    hsize_t m = s->m > 0 ? (hsize_t)s->m : 0, n = (hsize_t)s->n;
    hsize_t kd[3] = {n, m, (hsize_t)s->d}, vd[3] = {n, m, (hsize_t)s->dv};
    long atoms = supports_atoms(s);
    snprintf(what, nwhat, "writing keys");
    hid_t kt = keys_file_type(s->keys, (size_t)(atoms * s->d));
    if (hf_h5_dataset_write(g, "keys", kt, H5T_NATIVE_INT64, 3, kd, s->keys, 1) < 0)
        return HF_ERR_IO;
    snprintf(what, nwhat, "writing weights");
    HF_TRY(write_ints(g, "weights", 2, kd, s->weights, atoms));
    snprintf(what, nwhat, "writing weighted_values");
    return write_ints(g, "weighted_values", 3, vd, s->wvalues, atoms * s->dv);
}

/* ------------------------------------------------------------------ reading */

/* One dataset of integers as stored: int64-readable integers, or decimal strings
 * (format 4), or rationals (formats 1 to 3: weights and values). */
typedef struct {
    hid_t ds, ftype, mtype;
    int str;     /* strings: fixed size bytes each (0: variable-length) */
    size_t size; /* fixed-length strings' size */
    H5T_str_t pad;
    char where[160]; /* the dataset, for messages */
} col_t;

static void col_close(col_t *c)
{
    if (c->mtype >= 0)
        H5Tclose(c->mtype);
    if (c->ftype >= 0)
        H5Tclose(c->ftype);
    if (c->ds >= 0)
        H5Dclose(c->ds);
    c->ds = c->ftype = c->mtype = H5I_INVALID_HID;
}

/* Open dataset `name` of g with the expected dims; strings_only: the rationals of an older
 * format. */
static hf_err_t col_open(hid_t g, const char *name, int rank, const hsize_t *expect,
                         const char *path, const char *where, int strings_only, col_t *c)
{
    hsize_t dims[3];
    c->ds = c->ftype = c->mtype = H5I_INVALID_HID;
    c->str = 0;
    snprintf(c->where, sizeof c->where, "%s", where);
    if ((c->ds = H5Dopen2(g, name, H5P_DEFAULT)) < 0)
        return hf_error(HF_ERR_CORRUPT, "%s: %s: missing or unreadable", path, where);
    hf_err_t e = HF_OK;
    H5T_class_t cls = (c->ftype = H5Dget_type(c->ds)) < 0 ? H5T_NO_CLASS : H5Tget_class(c->ftype);
    if (cls == H5T_STRING) {
        htri_t var = H5Tis_variable_str(c->ftype);
        c->str = 1;
        if (var < 0) {
            e = hf_error(HF_ERR_CORRUPT, "%s: %s: not strings", path, where);
        } else if (var) {
            c->size = 0;
            c->mtype = hf_h5_str_mem_type(c->ftype);
        } else {
            /* never trust the size: it decides the allocations */
            c->size = H5Tget_size(c->ftype);
            c->pad = H5Tget_strpad(c->ftype);
            H5T_cset_t cset = H5Tget_cset(c->ftype);
            if (c->size == 0 || c->size > SUPPORTS_STR_MAX)
                e = hf_error(HF_ERR_CORRUPT,
                             "%s: %s: fixed-length strings of %zu bytes (1 to %zu accepted)", path,
                             where, c->size, SUPPORTS_STR_MAX);
            else if ((c->pad != H5T_STR_NULLTERM && c->pad != H5T_STR_NULLPAD &&
                      c->pad != H5T_STR_SPACEPAD) ||
                     (cset != H5T_CSET_ASCII && cset != H5T_CSET_UTF8))
                e = hf_error(HF_ERR_CORRUPT,
                             "%s: %s: strings of an unknown padding or character set", path, where);
            else
                c->mtype = H5Tcopy(c->ftype); /* the bytes as stored */
        }
    } else if (cls == H5T_INTEGER && !strings_only && H5Tget_size(c->ftype) <= 8 &&
               !(H5Tget_sign(c->ftype) == H5T_SGN_NONE && H5Tget_size(c->ftype) == 8)) {
        c->mtype = H5Tcopy(H5T_NATIVE_INT64);
    } else {
        e = hf_error(HF_ERR_CORRUPT, "%s: %s: %s", path, where,
                     strings_only ? "not strings" : "not integers of at most 64 bits or strings");
    }
    if (e == HF_OK && c->mtype < 0)
        e = hf_h5_fail(HF_ERR_INTERNAL, path, where);
    if (e == HF_OK)
        e = hf_h5_dataset_dims(c->ds, rank, path, where, dims);
    for (int i = 0; e == HF_OK && i < rank; i++)
        if (dims[i] != expect[i])
            e = hf_error(HF_ERR_CORRUPT,
                         "%s: %s: dimension %d is %llu, expected %llu from the group's attributes",
                         path, where, i, (unsigned long long)dims[i],
                         (unsigned long long)expect[i]);
    if (e != HF_OK)
        col_close(c);
    return e;
}

/* Element i of a string block as read: a pointer and its length. */
static const char *str_element(const col_t *c, const void *buf, size_t i, size_t *len)
{
    if (!c->size) {
        const char *p = ((char *const *)buf)[i];
        *len = p ? strlen(p) : 0;
        return p;
    }
    const char *p = (const char *)buf + i * c->size, *nul = memchr(p, '\0', c->size);
    size_t n = nul ? (size_t)(nul - p) : c->size;
    if (c->pad == H5T_STR_SPACEPAD)
        while (n > 0 && p[n - 1] == ' ')
            n--;
    *len = n;
    return p;
}

/* A decimal integer of len bytes into x; 0 when it is not one. */
static int parse_decimal(const char *p, size_t len, fmpz_t x)
{
    char buf[64], *s = len < sizeof buf ? buf : hf_malloc(len + 1);
    if (!s)
        return 0;
    memcpy(s, p, len);
    s[len] = '\0';
    const char *digits = s + (s[0] == '-');
    int ok =
        *digits && strspn(digits, "0123456789") == strlen(digits) && fmpz_set_str(x, s, 10) == 0;
    if (s != buf)
        free(s);
    return ok;
}

/* Elements [start, start + count) of the dataset (flattened) into buf, as read (int64, or
 * strings); *ms the memory space (the caller reclaims variable-length strings with it). */
static hf_err_t col_read_raw(const col_t *c, hsize_t start, hsize_t count, const char *path,
                             const char *where, void *buf, hid_t *msp)
{
    hf_err_t e = HF_OK;
    hid_t fs = H5Dget_space(c->ds), ms = H5Screate_simple(1, &count, NULL);
    int rank = fs >= 0 ? H5Sget_simple_extent_ndims(fs) : -1;
    hsize_t dims[3], off[3], cnt[3];
    *msp = ms;
    if (fs < 0 || ms < 0 || rank < 1 || rank > 3) {
        e = hf_h5_fail(HF_ERR_CORRUPT, path, where);
        goto done;
    }
    H5Sget_simple_extent_dims(fs, dims, NULL);
    /* the flattened range as a union of hyperslabs: a partial row of the last dimension,
     * a block of whole rows (within one support, for three dimensions), a partial row; a
     * support's atoms are contiguous in every layout read here. (One hyperslab per row
     * made HDF5's selection most of the time of a sliced verify.) */
    hsize_t inner = dims[rank - 1], mid = rank == 3 ? dims[1] : 1, end = start + count;
    int blocks = 0;
    H5Sselect_none(fs);
    for (hsize_t i = start; i < end;) {
        hsize_t last = i % inner, row = i / inner, take = inner - last, rows = 1;
        if (take > end - i)
            take = end - i;
        if (last == 0 && end - i >= inner) { /* whole rows */
            rows = (end - i) / inner;
            if (rank == 3 && rows > mid - row % mid)
                rows = mid - row % mid;
            take = rows * inner;
        }
        if (rank == 3) {
            off[0] = row / mid;
            off[1] = row % mid;
            off[2] = last;
            cnt[0] = 1;
            cnt[1] = rows;
            cnt[2] = rows > 1 ? inner : take;
        } else if (rank == 2) {
            off[0] = row;
            off[1] = last;
            cnt[0] = rows;
            cnt[1] = rows > 1 ? inner : take;
        } else {
            off[0] = i;
            cnt[0] = take;
        }
        /* SET for the first: a selection of one hyperslab stays regular, which HDF5 maps
         * to the chunks far faster than a union */
        if (H5Sselect_hyperslab(fs, i == start ? H5S_SELECT_SET : H5S_SELECT_OR, off, NULL, cnt,
                                NULL) < 0) {
            e = hf_h5_fail(HF_ERR_INTERNAL, path, where);
            goto done;
        }
        i += take;
        blocks++;
    }
    /* one block: a memory space of its own shape, so that HDF5 maps it to the chunks as a
     * block instead of element by element (its map when the two shapes differ) */
    if (blocks == 1 && rank > 1) {
        hid_t ms2 = H5Screate_simple(rank, cnt, NULL);
        if (ms2 < 0) {
            e = hf_h5_fail(HF_ERR_INTERNAL, path, where);
            goto done;
        }
        H5Sclose(ms);
        *msp = ms = ms2;
    }
    if (H5Dread(c->ds, c->mtype, ms, fs, H5P_DEFAULT, buf) < 0)
        e = hf_h5_fail(HF_ERR_CORRUPT, path, where);
done:
    if (fs >= 0)
        H5Sclose(fs);
    return e;
}

/* Elements [start, start + count) of the dataset (flattened) into x, as integers; with
 * rational strings (an older format) the rationals into q instead. */
static hf_err_t col_read(const col_t *c, hsize_t start, hsize_t count, const char *path,
                         const char *where, fmpz *x, fmpq *q)
{
    if (!count)
        return HF_OK;
    size_t el = c->str ? (c->size ? c->size : sizeof(char *)) : sizeof(int64_t);
    void *buf = hf_calloc((size_t)count, el);
    hid_t ms = H5I_INVALID_HID;
    hf_err_t e = buf ? col_read_raw(c, start, count, path, where, buf, &ms) : HF_ERR_NOMEM;
    for (hsize_t i = 0; i < count && e == HF_OK; i++) {
        if (!c->str) {
            fmpz_set_si(x + i, ((const int64_t *)buf)[i]);
            continue;
        }
        size_t len;
        const char *p = str_element(c, buf, (size_t)i, &len);
        if (q) {
            char *t = p ? hf_malloc(len + 1) : NULL;
            if (t) {
                memcpy(t, p, len);
                t[len] = '\0';
            }
            hf_err_t pe = t ? hf_rational_parse(q + i, t) : p ? HF_ERR_NOMEM : HF_ERR_INPUT;
            free(t);
            if (pe == HF_ERR_NOMEM)
                e = pe;
            else if (pe != HF_OK)
                e = hf_error(HF_ERR_CORRUPT, "%s: %s: element %llu is not a rational '[-]p[/q]'",
                             path, where, (unsigned long long)(start + i));
        } else if (!p || !parse_decimal(p, len, x + i)) {
            e = hf_error(HF_ERR_CORRUPT, "%s: %s: element %llu is not an integer", path, where,
                         (unsigned long long)(start + i));
        }
    }
    if (buf && ms >= 0 && c->str && !c->size)
        H5Dvlen_reclaim(c->mtype, ms, H5P_DEFAULT, buf);
    if (ms >= 0)
        H5Sclose(ms);
    free(buf);
    return e;
}

/* A result file is written in full: `count` elements of at least `elsize` bytes cannot take
 * more than the file's size (a compressed dataset up to 1100 times it). Checked before a
 * support is loaded, so that memory stays in proportion to the file. */
static hf_err_t col_check_fits(const col_t *c, size_t count, const char *path, const char *where)
{
    hsize_t fsize = 0;
    hid_t f = H5Iget_file_id(c->ds);
    herr_t rc = f >= 0 ? H5Fget_filesize(f, &fsize) : -1;
    if (f >= 0)
        H5Fclose(f);
    if (rc < 0)
        return hf_h5_fail(HF_ERR_CORRUPT, path, where);
    size_t el = c->str ? (c->size ? c->size : 8) : H5Tget_size(c->ftype);
    hid_t dcpl = H5Dget_create_plist(c->ds);
    int filtered = dcpl >= 0 && H5Pget_nfilters(dcpl) > 0;
    if (dcpl >= 0)
        H5Pclose(dcpl);
    if (filtered)
        fsize = fsize > ((hsize_t)1 << 50) ? ((hsize_t)1 << 60) : fsize * 1100;
    if (el && count > fsize / el)
        return hf_error(HF_ERR_CORRUPT,
                        "%s: %s: %zu elements of %zu bytes cannot be in a file of %llu bytes", path,
                        where, count, el, (unsigned long long)fsize);
    return HF_OK;
}

/* The three datasets of a row group. */
struct hf_supports_reader_s {
    hid_t file, g;
    col_t keys, w, u;
    int old; /* rationals: weights and values (formats 1 to 3) */
    long n, m;
    int d, dv;
    const char *path;
    char where[96];
};

void hf_supports_close(hf_supports_reader_t **rp)
{
    hf_supports_reader_t *r = rp ? *rp : NULL;
    if (!r)
        return;
    col_close(&r->keys);
    col_close(&r->w);
    col_close(&r->u);
    if (r->g >= 0)
        H5Gclose(r->g);
    if (r->file >= 0)
        H5Fclose(r->file);
    free(r);
    *rp = NULL;
}

/* Open the datasets of group g. g, and file when file >= 0, are the reader's from here,
 * closed with it, and closed here on every failure. */
static hf_err_t reader_open_group(hid_t file, hid_t g, long n, long m, int d, int dv, int old,
                                  const char *path, const char *where, hf_supports_reader_t **out)
{
    hf_supports_reader_t *r = hf_calloc(1, sizeof *r);
    if (!r) {
        H5Oclose(g);
        if (file >= 0)
            H5Fclose(file);
        return HF_ERR_NOMEM;
    }
    r->file = file;
    r->g = g;
    r->keys.ds = r->w.ds = r->u.ds = H5I_INVALID_HID;
    r->keys.ftype = r->w.ftype = r->u.ftype = H5I_INVALID_HID;
    r->keys.mtype = r->w.mtype = r->u.mtype = H5I_INVALID_HID;
    r->old = old;
    r->n = n;
    r->m = m;
    r->d = d;
    r->dv = dv;
    r->path = path;
    snprintf(r->where, sizeof r->where, "%s", where);
    hsize_t mm = m > 0 ? (hsize_t)m : 0;
    hsize_t kd[3] = {(hsize_t)n, mm, (hsize_t)d}, vd[3] = {(hsize_t)n, mm, (hsize_t)dv};
    char w2[160];
    snprintf(w2, sizeof w2, "%s/keys", where);
    hf_err_t e = col_open(g, "keys", 3, kd, path, w2, 0, &r->keys);
    if (e == HF_OK && r->keys.str)
        e = hf_error(HF_ERR_CORRUPT, "%s: %s: not integers", path, w2);
    snprintf(w2, sizeof w2, "%s/weights", where);
    if (e == HF_OK)
        e = col_open(g, "weights", 2, kd, path, w2, old, &r->w);
    snprintf(w2, sizeof w2, "%s/%s", where, old ? "values" : "weighted_values");
    if (e == HF_OK)
        e = col_open(g, old ? "values" : "weighted_values", 3, vd, path, w2, old, &r->u);
    if (e != HF_OK) {
        hf_supports_close(&r);
        return e;
    }
    *out = r;
    return HF_OK;
}

hf_err_t hf_supports_open(const hf_supports_t *s, hf_supports_reader_t **out)
{
    *out = NULL;
    if (!s->file)
        return hf_error(HF_ERR_INTERNAL, "supports: not held in a file");
    hid_t file = H5I_INVALID_HID;
    HF_TRY(hf_h5_open_read(s->file, "supports file", 0, &file));
    hid_t g = H5Gopen2(file, s->group, H5P_DEFAULT);
    if (g < 0) {
        H5Fclose(file);
        return hf_error(HF_ERR_CORRUPT, "%s: %s: missing or unreadable", s->file, s->group);
    }
    int old = H5Lexists(g, "weighted_values", H5P_DEFAULT) <= 0;
    hf_err_t e = reader_open_group(file, g, s->n, s->m, s->d, s->dv, old, s->file, s->group, out);
    return e;
}

/* Atoms [a0, a0 + cnt) of support j of an older file: rationals turned into integers. Each
 * support's scale is its own, so the whole support is read to scale it. */
static hf_err_t read_old(hf_supports_reader_t *r, long j, long a0, long cnt, fmpz *c, fmpz *u)
{
    long m = r->m, dv = r->dv;
    hf_head_t h;
    hf_head_init(&h, r->d, (int)dv);
    hf_err_t e = hf_head_resize(&h, m);
    if (e == HF_OK)
        e = col_read(&r->w, (hsize_t)(j * m), (hsize_t)m, r->path, r->w.where, NULL, h.weights);
    if (e == HF_OK)
        e = col_read(&r->u, (hsize_t)(j * m * dv), (hsize_t)(m * dv), r->path, r->u.where, NULL,
                     h.values);
    fmpz *cc = _fmpz_vec_init(m ? m : 1), *uu = _fmpz_vec_init(one_or(m * dv));
    if (e == HF_OK) {
        /* a zero denominator is a bad witness, not damage: verify says so */
        int bad = 0;
        for (long a = 0; a < m && !bad; a++) {
            bad = fmpz_is_zero(fmpq_denref(h.weights + a));
            for (long x = 0; x < dv && !bad; x++)
                bad = fmpz_is_zero(fmpq_denref(h.values + a * dv + x));
        }
        if (bad) {
            _fmpz_vec_zero(cc, m);
        } else {
            head_ints(&h, cc, uu);
        }
        _fmpz_vec_set(c, cc + a0, cnt);
        _fmpz_vec_set(u, uu + a0 * dv, cnt * dv);
    }
    _fmpz_vec_clear(uu, one_or(m * dv));
    _fmpz_vec_clear(cc, m ? m : 1);
    hf_head_clear(&h);
    return e;
}

hf_err_t hf_supports_read(hf_supports_reader_t *r, long j, long a0, long cnt, int64_t *keys,
                          fmpz *c, fmpz *u)
{
    long m = r->m, d = r->d, dv = r->dv;
    if (j < 0 || j >= r->n || a0 < 0 || cnt < 0 || a0 + cnt > m)
        return hf_error(HF_ERR_INTERNAL, "supports: atoms %ld..%ld of support %ld out of range", a0,
                        a0 + cnt, j);
    hsize_t n = (hsize_t)(cnt * d), start = (hsize_t)((j * m + a0) * d);
    if (keys && n) {
        hid_t ms = H5I_INVALID_HID;
        hf_err_t e = col_read_raw(&r->keys, start, n, r->path, r->keys.where, keys, &ms);
        if (ms >= 0)
            H5Sclose(ms);
        for (hsize_t i = 0; e == HF_OK && i < n; i++)
            if (keys[i] < -HF_KEY_MAX || keys[i] > HF_KEY_MAX)
                e = hf_error(HF_ERR_CORRUPT, "%s: %s: element %llu out of range", r->path,
                             r->keys.where, (unsigned long long)(start + i));
        HF_TRY(e);
    }
    if (r->old)
        return read_old(r, j, a0, cnt, c, u);
    HF_TRY(col_read(&r->w, (hsize_t)(j * m + a0), (hsize_t)cnt, r->path, r->w.where, c, NULL));
    return col_read(&r->u, (hsize_t)((j * m + a0) * dv), (hsize_t)(cnt * dv), r->path, r->u.where,
                    u, NULL);
}

hf_err_t hf_supports_read_group(hid_t g, const char *path, const char *where, int old,
                                hf_supports_t *s)
{
    long m = s->m > 0 ? s->m : 0, n = s->n, atoms = n * m;
    if (atoms > hf_knob(HF_KNOB_SUPPORTS_HOLD_MAX, HF_SUPPORTS_HOLD_MAX)) {
        /* too large to hold: read in pieces from the file when wanted (check the datasets'
         * shapes now) */
        hf_supports_reader_t *r = NULL;
        hid_t g2 = H5Oopen(g, ".", H5P_DEFAULT);
        if (g2 < 0)
            return hf_h5_fail(HF_ERR_CORRUPT, path, where);
        hf_err_t e =
            reader_open_group(H5I_INVALID_HID, g2, n, m, s->d, s->dv, old, path, where, &r);
        hf_supports_close(&r);
        return e == HF_OK ? hf_supports_in_file(s, n, path, where) : e;
    }
    hf_supports_reader_t *r = NULL;
    hid_t g2 = H5Oopen(g, ".", H5P_DEFAULT);
    if (g2 < 0)
        return hf_h5_fail(HF_ERR_CORRUPT, path, where);
    HF_TRY(reader_open_group(H5I_INVALID_HID, g2, n, m, s->d, s->dv, old, path, where, &r));
    hf_err_t e = col_check_fits(&r->keys, (size_t)(atoms * s->d), path, r->keys.where);
    if (e == HF_OK)
        e = col_check_fits(&r->w, (size_t)atoms, path, r->w.where);
    if (e == HF_OK)
        e = col_check_fits(&r->u, (size_t)(atoms * s->dv), path, r->u.where);
    hf_supports_t t;
    hf_supports_init(&t, s->m, s->d, s->dv);
    if (e == HF_OK)
        e = supports_room(&t, n);
    for (long j = 0; j < n && e == HF_OK; j++) {
        e = hf_supports_read(r, j, 0, m, t.keys + j * m * s->d, t.weights + j * m,
                             t.wvalues + j * m * s->dv);
        if (e == HF_OK)
            t.n++;
    }
    hf_supports_close(&r);
    if (e != HF_OK) {
        hf_supports_clear(&t);
        return e;
    }
    hf_supports_clear(s);
    *s = t;
    return HF_OK;
}
