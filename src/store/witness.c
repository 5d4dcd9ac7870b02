/* The supports of a large row written by every process at once (headfuse/store.h,
 * hf_witness_*): one file opened through MPI-IO (parallel HDF5), its datasets keys, weights
 * and weighted_values (a row group's, docs/hdf5-format.md) created by all, and each process
 * writing the atoms its slices hold as hyperslabs, in collective rounds, so that no process
 * ever holds a whole witness (docs/cluster.md, "Memory per rank"). RESULT.h5 then copies the
 * datasets in (supports.c).
 *
 * Every HDF5 call here is collective. A failure of one process must not leave the others in
 * a collective call: each step agrees on the processes' status first (headfuse/agree.h), and
 * the fault hook of a write is turned into that status before the call, never into a skipped
 * collective call. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "headfuse/agree.h"
#include "headfuse/stop.h"
#include "store/store_impl.h"

struct hf_witness_s {
    MPI_Comm comm;
    int rank;
    char *path, *tmp;
    hid_t file, g, ds[3], dxpl;
    long n, m;
    int d, dv;
    hf_witness_types_t ty;
    int broken; /* a collective step failed: nothing more is written */
};

static const char *const names[3] = {"keys", "weights", "weighted_values"};

/* The status of this process for a call about to be made collectively: the fault hook's
 * failure counts as this process's own error (docs/reliability.md, "Fault injection"). */
static hf_err_t fault_status(hf_witness_t *w, const char *call, hf_err_t st)
{
    if (st == HF_OK && hf_h5_fault(call))
        st = hf_h5_fail(HF_ERR_IO, w->path, call);
    return st;
}

static hid_t witness_dtype(const hf_witness_types_t *ty, int k)
{
    if (k == 0)
        return H5Tcopy(ty->keys_u8 ? H5T_STD_U8LE : H5T_STD_I64LE);
    size_t size = k == 1 ? ty->wsize : ty->usize;
    return size ? hf_h5_fixed_str_type(size) : H5Tcopy(H5T_STD_I64LE);
}

hf_err_t hf_witness_create(MPI_Comm comm, const char *path, long n, long m, int d, int dv,
                           const hf_witness_types_t *ty, hf_witness_t **out)
{
    hf_h5_quiet_t q;
    *out = NULL;
    hf_witness_t *w = hf_calloc(1, sizeof *w);
    hf_err_t st = HF_OK;
    if (w) {
        w->comm = comm;
        MPI_Comm_rank(comm, &w->rank);
        w->file = w->g = w->dxpl = H5I_INVALID_HID;
        for (int k = 0; k < 3; k++)
            w->ds[k] = H5I_INVALID_HID;
        w->n = n;
        w->m = m;
        w->d = d;
        w->dv = dv;
        w->ty = *ty;
        w->path = hf_strdup(path);
        w->tmp = hf_malloc(strlen(path) + 5);
        if (w->tmp)
            sprintf(w->tmp, "%s.tmp", path);
    }
    if (!w || !w->path || !w->tmp)
        st = HF_ERR_NOMEM;
    if ((st = hf_agree_all(comm, st)) != HF_OK) {
        hf_witness_close(&w, st);
        return st;
    }
    hf_h5_quiet_begin(&q);
    hid_t fapl = H5Pcreate(H5P_FILE_ACCESS);
    st = fapl >= 0 && H5Pset_fapl_mpio(fapl, comm, MPI_INFO_NULL) >= 0 &&
                 H5Pset_libver_bounds(fapl, H5F_LIBVER_EARLIEST, H5F_LIBVER_V18) >= 0
             ? HF_OK
             : hf_h5_fail(HF_ERR_INTERNAL, path, "setting up MPI-IO");
    st = hf_agree_all(comm, fault_status(w, "H5Fcreate", st));
    if (st == HF_OK && (w->file = H5Fcreate(w->tmp, H5F_ACC_TRUNC, H5P_DEFAULT, fapl)) < 0)
        st = hf_h5_fail(HF_ERR_IO, path, "creating the file of a large row's supports");
    if (fapl >= 0)
        H5Pclose(fapl);
    st = hf_agree_all(comm, fault_status(w, "H5Gcreate2", st));
    if (st == HF_OK &&
        ((w->g = H5Gcreate2(w->file, "supports", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT)) < 0 ||
         hf_h5_attr_write_i64(w->g, "n", n) < 0 || hf_h5_attr_write_i64(w->g, "m", m) < 0 ||
         hf_h5_attr_write_i32(w->g, "d", d) < 0 || hf_h5_attr_write_i32(w->g, "dv", dv) < 0))
        st = hf_h5_fail(HF_ERR_IO, path, "creating /supports");
    hsize_t dims[3][3] = {{(hsize_t)n, (hsize_t)m, (hsize_t)d},
                          {(hsize_t)n, (hsize_t)m, 0},
                          {(hsize_t)n, (hsize_t)m, (hsize_t)dv}};
    int rank[3] = {3, 2, 3};
    for (int k = 0; k < 3; k++) {
        st = hf_agree_all(comm, fault_status(w, "H5Dcreate2", st));
        if (st != HF_OK)
            break;
        hid_t t = witness_dtype(ty, k), sp = H5Screate_simple(rank[k], dims[k], NULL);
        hid_t dcpl = t >= 0 ? hf_h5_dcpl(H5Tget_size(t), rank[k], dims[k]) : H5I_INVALID_HID;
        if (t < 0 || sp < 0 || dcpl == H5I_INVALID_HID ||
            (w->ds[k] = H5Dcreate2(w->g, names[k], t, sp, H5P_DEFAULT, dcpl, H5P_DEFAULT)) < 0)
            st = hf_h5_fail(HF_ERR_IO, path, names[k]);
        if (dcpl >= 0 && dcpl != H5P_DEFAULT)
            H5Pclose(dcpl);
        if (sp >= 0)
            H5Sclose(sp);
        if (t >= 0)
            H5Tclose(t);
    }
    if (st == HF_OK && ((w->dxpl = H5Pcreate(H5P_DATASET_XFER)) < 0 ||
                        H5Pset_dxpl_mpio(w->dxpl, H5FD_MPIO_COLLECTIVE) < 0))
        st = hf_h5_fail(HF_ERR_INTERNAL, path, "setting up collective writes");
    st = hf_agree_all(comm, st);
    hf_h5_quiet_end(&q);
    if (st != HF_OK) {
        hf_witness_close(&w, st);
        return st;
    }
    *out = w;
    return HF_OK;
}

typedef struct {
    const long *j, *a;
} runs_t;

static int cmp_run(const void *ctx, long x, long y)
{
    const runs_t *r = ctx;
    if (r->j[x] != r->j[y])
        return r->j[x] < r->j[y] ? -1 : 1;
    return (r->a[x] > r->a[y]) - (r->a[x] < r->a[y]);
}

/* One element of dataset k (keys: a coordinate; else an integer) from the caller's arrays
 * into the block, in the dataset's element type. */
static hf_err_t pack_one(const hf_witness_t *w, int k, const int64_t *keys, const fmpz *x,
                         long from, char *to, size_t size)
{
    if (k == 0) {
        if (w->ty.keys_u8)
            *(uint8_t *)to = (uint8_t)keys[from];
        else
            memcpy(to, keys + from, 8);
        return HF_OK;
    }
    if (!(k == 1 ? w->ty.wsize : w->ty.usize)) {
        if (!fmpz_fits_si(x + from))
            return hf_error(HF_ERR_INTERNAL, "%s: an integer of %s does not fit int64", w->path,
                            names[k]);
        int64_t v = fmpz_get_si(x + from);
        memcpy(to, &v, 8);
        return HF_OK;
    }
    return hf_supports_decimals(x + from, 1, size, to);
}

/* This process's atoms of the block in memory, in the datasets' element types, and in the
 * order of their places in the file: HDF5 fills a union of hyperslabs in the file's order,
 * whatever the order the runs were added in (a process's runs come slice by slice). */
static hf_err_t pack_block(const hf_witness_t *w, long nruns, const long *run_j, const long *run_a,
                           const long *run_cnt, long atoms, const int64_t *keys, const fmpz *c,
                           const fmpz *u, void *buf[3])
{
    long d = w->d, dv = w->dv, cnt[3] = {atoms * d, atoms, atoms * dv}, per[3] = {d, 1, dv};
    size_t size[3] = {w->ty.keys_u8 ? 1 : 8, w->ty.wsize ? w->ty.wsize : 8,
                      w->ty.usize ? w->ty.usize : 8};
    long *ord = hf_malloc((size_t)(nruns ? nruns : 1) * sizeof *ord);
    long *start = hf_malloc((size_t)(nruns ? nruns : 1) * sizeof *start);
    hf_err_t e = ord && start ? HF_OK : HF_ERR_NOMEM;
    for (int k = 0; e == HF_OK && k < 3; k++)
        if (!(buf[k] = hf_malloc((size_t)(cnt[k] ? cnt[k] : 1) * size[k])))
            e = HF_ERR_NOMEM;
    for (long i = 0, at = 0; e == HF_OK && i < nruns; i++) {
        ord[i] = i;
        start[i] = at;
        at += run_cnt[i];
    }
    runs_t rs = {run_j, run_a};
    if (e == HF_OK)
        e = hf_sort(ord, nruns, cmp_run, &rs);
    const fmpz *x[3] = {NULL, c, u};
    for (int k = 0; e == HF_OK && k < 3; k++) {
        char *to = buf[k];
        for (long i = 0; e == HF_OK && i < nruns; i++) {
            long r = ord[i];
            for (long q = start[r] * per[k]; e == HF_OK && q < (start[r] + run_cnt[r]) * per[k];
                 q++, to += size[k])
                e = pack_one(w, k, keys, x[k], q, to, size[k]);
        }
    }
    free(start);
    free(ord);
    return e;
}

hf_err_t hf_witness_write(hf_witness_t *w, hf_err_t status, long nruns, const long *run_j,
                          const long *run_a, const long *run_cnt, const int64_t *keys,
                          const fmpz *c, const fmpz *u)
{
    hf_h5_quiet_t q;
    void *buf[3] = {NULL, NULL, NULL};
    long atoms = 0;
    for (long i = 0; i < nruns; i++)
        atoms += run_cnt[i];
    hf_err_t st = status;
    if (st == HF_OK)
        st = hf_stop_check(HF_STOP_WRITE);
    if (st == HF_OK)
        st = pack_block(w, nruns, run_j, run_a, run_cnt, atoms, keys, c, u, buf);
    hf_h5_quiet_begin(&q);
    for (int k = 0; k < 3; k++) {
        st = hf_agree_all(w->comm, fault_status(w, "H5Dwrite", st));
        if (st != HF_OK)
            break;
        long inner = k == 0 ? w->d : k == 1 ? 1 : w->dv;
        int rank = k == 1 ? 2 : 3;
        /* the memory space shaped as the file's rows, (1, atoms, inner): with one run in the
         * block HDF5 then copies rows whole, not element by element (ten times faster) */
        hsize_t mdims[3] = {1, (hsize_t)(atoms ? atoms : 1), (hsize_t)inner};
        hid_t fs = H5Dget_space(w->ds[k]), ms = H5Screate_simple(rank, mdims, NULL);
        hid_t mt = k == 0 ? (w->ty.keys_u8 ? H5T_NATIVE_UINT8 : H5T_NATIVE_INT64) : H5I_INVALID_HID;
        hid_t owned = k ? witness_dtype(&w->ty, k) : H5I_INVALID_HID;
        if (k)
            mt = (k == 1 ? w->ty.wsize : w->ty.usize) ? owned : H5T_NATIVE_INT64;
        int ok = fs >= 0 && ms >= 0 && H5Sselect_none(fs) >= 0;
        if (!atoms && ok)
            ok = H5Sselect_none(ms) >= 0;
        /* the first run SET (a regular hyperslab: the fast case), any further OR'd */
        for (long i = 0, first = 1; ok && i < nruns; i++) {
            hsize_t off[3] = {(hsize_t)run_j[i], (hsize_t)run_a[i], 0};
            hsize_t cnt[3] = {1, (hsize_t)run_cnt[i], (hsize_t)inner};
            if (run_cnt[i] == 0)
                continue;
            ok = H5Sselect_hyperslab(fs, first ? H5S_SELECT_SET : H5S_SELECT_OR, off, NULL, cnt,
                                     NULL) >= 0;
            first = 0;
        }
        /* collective: every process calls it, with an empty selection if it has nothing */
        if (!ok || H5Dwrite(w->ds[k], mt, ms, fs, w->dxpl, buf[k]) < 0)
            st = hf_h5_fail(HF_ERR_IO, w->path, names[k]);
        if (owned >= 0)
            H5Tclose(owned);
        if (ms >= 0)
            H5Sclose(ms);
        if (fs >= 0)
            H5Sclose(fs);
    }
    st = hf_agree_all(w->comm, st);
    hf_h5_quiet_end(&q);
    if (st != HF_OK)
        w->broken = 1;
    for (int k = 0; k < 3; k++)
        free(buf[k]);
    return st;
}

hf_err_t hf_witness_close(hf_witness_t **wp, hf_err_t status)
{
    hf_witness_t *w = wp ? *wp : NULL;
    if (!w)
        return status;
    hf_h5_quiet_t q;
    hf_h5_quiet_begin(&q);
    hf_err_t st = status;
    for (int k = 0; k < 3; k++)
        if (w->ds[k] >= 0 && H5Dclose(w->ds[k]) < 0 && st == HF_OK)
            st = hf_h5_fail(HF_ERR_IO, w->path, names[k]);
    if (w->g >= 0)
        H5Gclose(w->g);
    if (w->dxpl >= 0)
        H5Pclose(w->dxpl);
    int stuck = 0;
    if (w->file >= 0 && H5Fclose(w->file) < 0) {
        if (st == HF_OK)
            st = hf_h5_fail(HF_ERR_IO, w->path, "closing the file");
        stuck = H5Iis_valid(w->file) > 0;
    }
    st = hf_agree_all(w->comm, st);
    /* rank 0 puts the finished file in place (every process has closed it) */
    if (w->rank == 0 && st == HF_OK && w->tmp)
        st = hf_io_commit(w->tmp, w->path);
    st = hf_agree_root(w->comm, st);
    if (w->rank == 0 && st != HF_OK && w->tmp)
        unlink(w->tmp);
    hf_h5_quiet_end(&q);
    if (stuck)
        hf_h5_abandon(); /* the last HDF5 call of a failing process */
    free(w->tmp);
    free(w->path);
    free(w);
    *wp = NULL;
    return st;
}
