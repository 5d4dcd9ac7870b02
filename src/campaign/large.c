/* A large row's minimal supports (docs/search.md, "Large rows"), from the found records of
 * the shards to their file: the records (multipliers R) read once by rank 0 and sent to
 * every rank, sorted canonically by the search, and each support's keys, weights and
 * weighted values streamed from every rank's slices of P/Q into one file (hf_witness_*),
 * never held whole by any rank (docs/cluster.md, "Memory per rank").
 *
 * Two passes over the slices. The first counts each rank's keys per run (a run: the keys of
 * one slice that share their leading coordinates, hf_search_large_run_divisor), takes the
 * content of (c, u) and the largest |c| and |u|, so that the ranks agree on every key's
 * place in the sorted support, on the one factor that makes (c, u) primitive, and on the
 * datasets' types (docs/hdf5-format.md). The second writes, in collective rounds of at most
 * LARGE_BLOCK atoms a rank. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <flint/fmpz_vec.h>

#include "headfuse/agree.h"
#include "campaign/campaign_impl.h"

/* Atoms a rank writes in one collective round: about 16 MiB of keys, weights and values in
 * 14 variables. */
#define LARGE_BLOCK (1L << 17)

/* ------------------------------------------------------------------ the records */

/* Rank 0's records sent to every rank, decoded into n multipliers of nr integers each. */
static hf_err_t share_records(MPI_Comm comm, char *const *records, long nrec, long nr, fmpz **R,
                              long *n)
{
    int rank;
    MPI_Comm_rank(comm, &rank);
    long head[2] = {nrec, 0};
    if (rank == 0)
        for (long i = 0; i < nrec; i++)
            head[1] += (long)strlen(records[i]) + 1;
    MPI_Bcast(head, 2, MPI_LONG, 0, comm);
    char *all = hf_malloc((size_t)(head[1] ? head[1] : 1));
    hf_err_t e = hf_agree_all(comm, all ? HF_OK : HF_ERR_NOMEM);
    if (e == HF_OK && rank == 0) {
        long at = 0;
        for (long i = 0; i < nrec; i++) {
            size_t l = strlen(records[i]) + 1;
            memcpy(all + at, records[i], l);
            at += (long)l;
        }
    }
    /* a record is a few numbers: the texts of every support fit one broadcast */
    if (e == HF_OK)
        MPI_Bcast(all, (int)head[1], MPI_CHAR, 0, comm);
    *n = head[0];
    *R = e == HF_OK ? _fmpz_vec_init(head[0] * nr > 0 ? head[0] * nr : 1) : NULL;
    const char *p = all;
    for (long i = 0; e == HF_OK && i < head[0]; i++) {
        e = hf_found_decode_r(p, nr, *R + i * nr);
        p += strlen(p) + 1;
    }
    free(all);
    return hf_agree_all(comm, e);
}

/* The supports in the order of their sorted key lists (the search compares them by their
 * classes: the same on every rank); the same support twice is damage. */
static hf_err_t sort_supports(const hf_search_t *s, const fmpz *R, long n, long nr, long *ord)
{
    for (long i = 0; i < n; i++)
        ord[i] = i;
    for (long i = 1; i < n; i++) /* insertion sort: a row has a few minimal supports */
        for (long k = i; k > 0; k--) {
            int c = 0;
            HF_TRY(hf_search_large_cmp(s, R + ord[k - 1] * nr, R + ord[k] * nr, &c));
            if (c == 0)
                return hf_error(HF_ERR_CORRUPT, "the same support was recorded twice");
            if (c < 0)
                break;
            long t = ord[k];
            ord[k] = ord[k - 1];
            ord[k - 1] = t;
        }
    return HF_OK;
}

/* ------------------------------------------------------------------ pass 1: the figures */

/* One run of keys of one support on this rank: its key (point / D) and how many. */
typedef struct {
    uint64_t key;
    long count, offset; /* offset: its first key's place in the support (after the exchange) */
} run_t;

typedef struct {
    uint64_t div;
    int dv;
    run_t *run;
    long nrun, cap;
    fmpz_t g, cmax, umax; /* content of (c, u); largest |c| and |u| */
    int uneg;             /* some u < 0 */
} stats_t;

static hf_err_t stats_emit(void *ctx, uint64_t point, const int64_t *x, const fmpz_t c,
                           const fmpz *u)
{
    stats_t *S = ctx;
    (void)x;
    uint64_t key = point / S->div;
    if (!S->nrun || S->run[S->nrun - 1].key != key) {
        HF_TRY(HF_GROW(&S->run, &S->cap, S->nrun + 1));
        S->run[S->nrun++] = (run_t){key, 0, 0};
    }
    S->run[S->nrun - 1].count++;
    fmpz_gcd(S->g, S->g, c);
    if (fmpz_cmpabs(c, S->cmax) > 0)
        fmpz_abs(S->cmax, c);
    for (int j = 0; j < S->dv; j++) {
        fmpz_gcd(S->g, S->g, u + j);
        if (fmpz_cmpabs(u + j, S->umax) > 0)
            fmpz_abs(S->umax, u + j);
        S->uneg |= fmpz_sgn(u + j) < 0;
    }
    return HF_OK;
}

/* An integer as text in a buffer of bytes for the exchange. */
static hf_err_t put_text(char **buf, long *len, long *cap, const fmpz_t x)
{
    char *t = fmpz_get_str(NULL, 10, x);
    long l = (long)strlen(t) + 1;
    hf_err_t e = HF_GROW(buf, cap, *len + l);
    if (e == HF_OK) {
        memcpy(*buf + *len, t, (size_t)l);
        *len += l;
    }
    flint_free(t);
    return e;
}

/* Every rank's figures of support j to every rank: the runs get their offsets, and g, the
 * largest |c| and |u| and any negative u become the support's. The runs of all ranks, in
 * increasing key, are the support's keys in order (search.h). */
static hf_err_t exchange_stats(MPI_Comm comm, stats_t *S, long m, hf_err_t e)
{
    int rank, size;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    char *buf = NULL;
    long len = 0, cap = 0;
    /* text: g, cmax, umax, uneg, nrun, then (key count) pairs */
    char tail[64];
    if (e == HF_OK)
        e = put_text(&buf, &len, &cap, S->g);
    if (e == HF_OK)
        e = put_text(&buf, &len, &cap, S->cmax);
    if (e == HF_OK)
        e = put_text(&buf, &len, &cap, S->umax);
    snprintf(tail, sizeof tail, "%d %ld", S->uneg, S->nrun);
    long tl = (long)strlen(tail) + 1;
    if (e == HF_OK && (e = HF_GROW(&buf, &cap, len + tl + S->nrun * 40)) == HF_OK) {
        memcpy(buf + len, tail, (size_t)tl);
        len += tl;
        for (long i = 0; i < S->nrun; i++)
            len += sprintf(buf + len, "%llu %ld", (unsigned long long)S->run[i].key,
                           S->run[i].count) +
                   1;
    }
    int mine = (int)len, *counts = hf_malloc((size_t)size * sizeof *counts),
        *displs = hf_malloc((size_t)size * sizeof *displs);
    if (e == HF_OK && (!counts || !displs))
        e = HF_ERR_NOMEM;
    e = hf_agree_all(comm, e);
    char *all = NULL;
    if (e == HF_OK) {
        MPI_Allgather(&mine, 1, MPI_INT, counts, 1, MPI_INT, comm);
        long total = 0;
        for (int r = 0; r < size; r++) {
            displs[r] = (int)total;
            total += counts[r];
        }
        all = hf_malloc((size_t)(total ? total : 1));
        e = hf_agree_all(comm, all ? HF_OK : HF_ERR_NOMEM);
        if (e == HF_OK)
            MPI_Allgatherv(buf, mine, MPI_CHAR, all, counts, displs, MPI_CHAR, comm);
    }
    /* every rank's runs with their keys: each of this rank's runs is placed after the runs
     * of smaller keys, whoever holds them (a rank's own runs come slice by slice, not in
     * key order) */
    fmpz_t x;
    fmpz_init(x);
    long seen = 0;
    for (long k = 0; k < S->nrun; k++)
        S->run[k].offset = 0;
    for (int r = 0; e == HF_OK && r < size; r++) {
        const char *p = all + displs[r];
        fmpz_set_str(x, p, 10);
        fmpz_gcd(S->g, S->g, x);
        p += strlen(p) + 1;
        fmpz_set_str(x, p, 10);
        if (fmpz_cmp(x, S->cmax) > 0)
            fmpz_set(S->cmax, x);
        p += strlen(p) + 1;
        fmpz_set_str(x, p, 10);
        if (fmpz_cmp(x, S->umax) > 0)
            fmpz_set(S->umax, x);
        p += strlen(p) + 1;
        int uneg;
        long nrun;
        sscanf(p, "%d %ld", &uneg, &nrun);
        S->uneg |= uneg;
        p += strlen(p) + 1;
        for (long i = 0; i < nrun; i++) {
            unsigned long long key;
            long count;
            sscanf(p, "%llu %ld", &key, &count);
            p += strlen(p) + 1;
            seen += count;
            for (long k = 0; k < S->nrun; k++)
                if (S->run[k].key > key)
                    S->run[k].offset += count;
        }
    }
    if (e == HF_OK && seen != m)
        e = hf_error(HF_ERR_INTERNAL, "large row: the slices hold %ld keys of a support of %ld",
                     seen, m);
    fmpz_clear(x);
    free(all);
    free(counts);
    free(displs);
    free(buf);
    return hf_agree_all(comm, e);
}

/* ------------------------------------------------------------------ pass 2: the writes */

typedef struct {
    hf_witness_t *w;
    const hf_search_t *s;
    int d, dv;
    long j; /* the support */
    const stats_t *S;
    long run, inrun; /* this rank's current run of the support and the key's place in it */
    fmpz_t g;        /* the support's content */
    /* the block of this round */
    long nruns, atoms, rounds;
    hf_err_t agreed; /* a round failed (every rank knows it) */
    long *rj, *ra, *rc;
    int64_t *keys;
    fmpz *c, *u;
} writer_t;

static hf_err_t writer_flush(writer_t *W, hf_err_t st)
{
    st = hf_witness_write(W->w, st, W->nruns, W->rj, W->ra, W->rc, W->keys, W->c, W->u);
    W->rounds++;
    W->nruns = W->atoms = 0;
    if (st != HF_OK)
        W->agreed = st;
    return st;
}

static hf_err_t write_emit(void *ctx, uint64_t point, const int64_t *x, const fmpz_t c,
                           const fmpz *u)
{
    writer_t *W = ctx;
    const stats_t *S = W->S;
    uint64_t key = point / S->div;
    while (W->run < S->nrun && S->run[W->run].key != key) {
        W->run++;
        W->inrun = 0;
    }
    if (W->run == S->nrun)
        return hf_error(HF_ERR_INTERNAL, "large row: a key outside the runs counted");
    long place = S->run[W->run].offset + W->inrun++;
    /* one run per block (a regular hyperslab, the file's fast case): a key that does not
     * continue the block's run starts the next round */
    if (W->nruns && (W->rj[0] != W->j || W->ra[0] + W->rc[0] != place))
        HF_TRY(writer_flush(W, HF_OK));
    if (!W->nruns) {
        W->rj[W->nruns] = W->j;
        W->ra[W->nruns] = place;
        W->rc[W->nruns] = 0;
        W->nruns++;
    }
    W->rc[W->nruns - 1]++;
    memcpy(W->keys + W->atoms * W->d, x, (size_t)W->d * sizeof *x);
    fmpz_divexact(W->c + W->atoms, c, W->g);
    for (int i = 0; i < W->dv; i++)
        fmpz_divexact(W->u + W->atoms * W->dv + i, u + i, W->g);
    W->atoms++;
    return W->atoms == LARGE_BLOCK ? writer_flush(W, HF_OK) : HF_OK;
}

/* The type of one dataset's integers: int64 when the largest |x| / g fits, else decimal
 * strings as long as it and a sign if some is negative (the same on every rank). */
static size_t ints_size(const fmpz_t xmax, const fmpz_t g, int neg)
{
    fmpz_t t;
    fmpz_init(t);
    fmpz_divexact(t, xmax, g);
    size_t size = fmpz_fits_si(t) ? 0 : fmpz_sizeinbase(t, 10) + (neg ? 1 : 0) + 1;
    fmpz_clear(t);
    return size;
}

hf_err_t hf_campaign_large_supports(MPI_Comm comm, const hf_search_t *s, char *const *records,
                                    long nrec, long m, const char *path, hf_supports_t *sup)
{
    int d = sup->d, dv = sup->dv;
    long nr = hf_search_large_unknowns(s), n = 0;
    fmpz *R = NULL;
    hf_err_t e = share_records(comm, records, nrec, nr, &R, &n);
    if (e != HF_OK)
        return e;
    long *ord = hf_malloc((size_t)(n ? n : 1) * sizeof *ord);
    stats_t *S = hf_calloc((size_t)(n ? n : 1), sizeof *S);
    e = ord && S ? sort_supports(s, R, n, nr, ord) : HF_ERR_NOMEM;
    e = hf_agree_all(comm, e);
    /* pass 1: every support's figures, agreed */
    fmpz_t cmax, umax, gone;
    fmpz_init(cmax);
    fmpz_init(umax);
    fmpz_init(gone);
    int uneg = 0;
    long mine = 0;
    for (long j = 0; S && j < n; j++) {
        S[j].div = hf_search_large_run_divisor(s);
        S[j].dv = dv;
        fmpz_init(S[j].g);
        fmpz_init(S[j].cmax);
        fmpz_init(S[j].umax);
    }
    for (long j = 0; e == HF_OK && j < n; j++) {
        e = hf_search_large_emit(s, R + ord[j] * nr, stats_emit, S + j);
        e = exchange_stats(comm, S + j, m, e);
        if (e != HF_OK)
            break;
        /* the datasets' types over every support: c / g and u / g of each */
        fmpz_t t;
        fmpz_init(t);
        fmpz_divexact(t, S[j].cmax, S[j].g);
        if (fmpz_cmp(t, cmax) > 0)
            fmpz_set(cmax, t);
        fmpz_divexact(t, S[j].umax, S[j].g);
        if (fmpz_cmp(t, umax) > 0)
            fmpz_set(umax, t);
        fmpz_clear(t);
        uneg |= S[j].uneg;
        /* the rounds of this rank: one run a round, at most LARGE_BLOCK keys each */
        for (long i = 0; i < S[j].nrun; i++)
            mine += (S[j].run[i].count + LARGE_BLOCK - 1) / LARGE_BLOCK;
    }
    fmpz_one(gone);
    hf_witness_types_t ty = {.keys_u8 = 1,
                             .wsize = ints_size(cmax, gone, 0),
                             .usize = ints_size(umax, gone, uneg)};
    hf_witness_t *w = NULL;
    if (e == HF_OK)
        e = hf_witness_create(comm, path, n, m, d, dv, &ty, &w);
    /* pass 2: the writes, in as many rounds on every rank */
    writer_t W = {.w = w, .s = s, .d = d, .dv = dv};
    fmpz_init(W.g);
    long rounds = mine;
    if (e == HF_OK) {
        MPI_Allreduce(MPI_IN_PLACE, &rounds, 1, MPI_LONG, MPI_MAX, comm);
        W.rj = hf_malloc(LARGE_BLOCK * sizeof *W.rj);
        W.ra = hf_malloc(LARGE_BLOCK * sizeof *W.ra);
        W.rc = hf_malloc(LARGE_BLOCK * sizeof *W.rc);
        W.keys = hf_malloc((size_t)LARGE_BLOCK * (size_t)d * sizeof *W.keys);
        W.c = _fmpz_vec_init(LARGE_BLOCK);
        W.u = _fmpz_vec_init(LARGE_BLOCK * dv);
    }
    hf_err_t own = e == HF_OK && (!W.rj || !W.ra || !W.rc || !W.keys) ? HF_ERR_NOMEM : HF_OK;
    for (long j = 0; e == HF_OK && own == HF_OK && j < n; j++) {
        W.j = j;
        W.S = S + j;
        W.run = W.inrun = 0;
        fmpz_set(W.g, S[j].g);
        own = hf_search_large_emit(s, R + ord[j] * nr, write_emit, &W);
    }
    /* the rounds still due: the last partial block, then empty ones (a rank whose own step
     * failed joins them with its error, which stops every rank at that round: a round's
     * failure is agreed, so every rank leaves after the same round) */
    while (e == HF_OK && W.agreed == HF_OK && W.rounds < rounds)
        writer_flush(&W, own);
    if (e == HF_OK)
        e = W.agreed != HF_OK ? W.agreed : hf_agree_all(comm, own);
    if (w)
        e = hf_witness_close(&w, e);
    if (e == HF_OK)
        e = hf_supports_in_file(sup, n, path, "supports");
    if (W.c)
        _fmpz_vec_clear(W.c, LARGE_BLOCK);
    if (W.u)
        _fmpz_vec_clear(W.u, LARGE_BLOCK * dv);
    free(W.keys);
    free(W.rc);
    free(W.ra);
    free(W.rj);
    fmpz_clear(W.g);
    fmpz_clear(gone);
    fmpz_clear(umax);
    fmpz_clear(cmax);
    for (long j = 0; S && j < n; j++) {
        free(S[j].run);
        fmpz_clear(S[j].g);
        fmpz_clear(S[j].cmax);
        fmpz_clear(S[j].umax);
    }
    free(S);
    free(ord);
    if (R)
        _fmpz_vec_clear(R, n * nr > 0 ? n * nr : 1);
    return e;
}
