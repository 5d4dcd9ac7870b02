/* The cone engine's double description (docs/search.md, "Engine cone", claim 3): the
 * extreme rays of {R : A R >= 0} whose support has at most a bound of box points, by the
 * incremental double description in exact integers (FLINT), dropping every ray whose
 * support on the rows processed so far already exceeds the bound. */
#include <assert.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include <flint/fmpz_mat.h>
#include <flint/fmpz_vec.h>
#include <flint/nmod_mat.h>
#include <flint/ulong_extras.h>

#include "search/cone_impl.h"

/* The rays of one stage: vectors (n each), zero sets over processed positions, partial
 * support sizes. */
typedef struct {
    long n, words, count, cap;
    fmpz *v;
    uint64_t *zero;
    long *size;
} rayset_t;

static void rayset_clear(rayset_t *R)
{
    if (R->v)
        _fmpz_vec_clear(R->v, R->cap * R->n);
    free(R->zero);
    free(R->size);
    memset(R, 0, sizeof *R);
}

static hf_err_t rayset_reserve(rayset_t *R, long need)
{
    if (need <= R->cap)
        return HF_OK;
    long cap = R->cap ? R->cap : 64;
    while (cap < need)
        cap *= 2;
    fmpz *v = _fmpz_vec_init(cap * R->n);
    for (long i = 0; i < R->count * R->n; i++)
        fmpz_swap(v + i, R->v + i);
    if (R->v)
        _fmpz_vec_clear(R->v, R->cap * R->n);
    R->v = v;
    uint64_t *z = hf_realloc(R->zero, (size_t)cap * R->words * sizeof *z);
    long *sz = hf_realloc(R->size, (size_t)cap * sizeof *sz);
    if (!z || !sz) {
        if (z)
            R->zero = z;
        if (sz)
            R->size = sz;
        return HF_ERR_NOMEM;
    }
    R->zero = z;
    R->size = sz;
    R->cap = cap;
    return HF_OK;
}

/* Append a ray (copies v; zero bitset; size). */
static hf_err_t rayset_push(rayset_t *R, const fmpz *v, const uint64_t *zero, long size)
{
    HF_TRY(rayset_reserve(R, R->count + 1));
    _fmpz_vec_set(R->v + R->count * R->n, v, R->n);
    memcpy(R->zero + R->count * R->words, zero, (size_t)R->words * sizeof *zero);
    R->size[R->count] = size;
    R->count++;
    return HF_OK;
}

static void vec_primitive(fmpz *v, long n, fmpz_t g)
{
    _fmpz_vec_content(g, v, n);
    if (!fmpz_is_zero(g) && !fmpz_is_one(g))
        _fmpz_vec_scalar_divexact_fmpz(v, v, n, g);
}

/* Processing order: first n independent rows (in the order below) form the starting
 * simplicial cone; then the others by increasing number of nonzero entries (rows of few
 * unknowns cut early and keep the intermediate cones small), ties by hyperplane number. */
static hf_err_t dd_order(hf_cone_t *c, long *order, nmod_t mod)
{
    long n = c->n, nh = c->nh;
    long *nnz = hf_malloc((size_t)nh * sizeof *nnz);
    long *byn = hf_malloc((size_t)nh * sizeof *byn);
    char *used = hf_calloc((size_t)nh, 1);
    if (!nnz || !byn || !used) {
        free(nnz);
        free(byn);
        free(used);
        return HF_ERR_NOMEM;
    }
    for (long h = 0; h < nh; h++) {
        nnz[h] = 0;
        for (long j = 0; j < n; j++)
            nnz[h] += !fmpz_is_zero(c->A + h * n + j);
    }
    /* counting sort by nnz (stable: keeps hyperplane order inside a class) */
    long *cnt = hf_calloc((size_t)n + 2, sizeof *cnt);
    if (!cnt) {
        free(nnz);
        free(byn);
        free(used);
        return HF_ERR_NOMEM;
    }
    for (long h = 0; h < nh; h++)
        cnt[nnz[h] + 1]++;
    for (long k = 1; k <= n + 1; k++)
        cnt[k] += cnt[k - 1];
    for (long h = 0; h < nh; h++)
        byn[cnt[nnz[h]]++] = h;
    free(cnt);
    /* basis: greedy elimination mod p in that order */
    nmod_mat_t E;
    nmod_mat_init(E, n, n, mod.n);
    long rank = 0, k = 0;
    mp_limb_t *row = hf_malloc((size_t)n * sizeof *row);
    long *pivcol = hf_malloc((size_t)n * sizeof *pivcol);
    if (!row || !pivcol) {
        free(row);
        free(pivcol);
        nmod_mat_clear(E);
        free(nnz);
        free(byn);
        free(used);
        return HF_ERR_NOMEM;
    }
    for (long i = 0; i < nh && rank < n; i++) {
        long h = byn[i];
        for (long j = 0; j < n; j++)
            row[j] = fmpz_fdiv_ui(c->A + h * n + j, mod.n);
        for (long r = 0; r < rank; r++) {
            mp_limb_t f = row[pivcol[r]];
            if (!f)
                continue;
            for (long j = 0; j < n; j++)
                row[j] = nmod_sub(row[j], nmod_mul(f, nmod_mat_entry(E, r, j), mod), mod);
        }
        long pc = -1;
        for (long j = 0; j < n; j++)
            if (row[j]) {
                pc = j;
                break;
            }
        if (pc < 0)
            continue;
        mp_limb_t inv = n_invmod(row[pc], mod.n);
        for (long j = 0; j < n; j++)
            nmod_mat_entry(E, rank, j) = nmod_mul(row[j], inv, mod);
        pivcol[rank++] = pc;
        order[k++] = h;
        used[h] = 1;
    }
    free(row);
    free(pivcol);
    nmod_mat_clear(E);
    hf_err_t err = HF_OK;
    if (rank < n)
        err = hf_error(HF_ERR_INTERNAL,
                       "cone engine: the rows have rank %ld < %ld modulo p (the cone of Q R >= 0 "
                       "is pointed)",
                       rank, n);
    for (long i = 0; i < nh; i++)
        if (!used[byn[i]])
            order[k++] = byn[i];
    free(nnz);
    free(byn);
    free(used);
    return err;
}

/* Positions < p as a mask of word w. */
static inline uint64_t below_mask(long w, long p)
{
    long lo = w * 64;
    if (p <= lo)
        return 0;
    return p - lo >= 64 ? ~(uint64_t)0 : ((uint64_t)1 << (p - lo)) - 1;
}

/* The rays of a stage bucketed by the first and last position of their support (every
 * support is nonempty once the start rows are processed): a ray whose support lies in a
 * set U sits in a bucket (a, b) with a <= b both in U. */
#define ENDS_INDEX_POSITIONS_MAX 2048 /* the table has positions^2 buckets */
typedef struct {
    long p;      /* positions processed (0: no index) */
    long *start; /* p * p + 1 bucket offsets (key a * p + b) */
    long *ray;   /* ray numbers, bucket by bucket */
    long *key;   /* per ray */
    long start_cap, ray_cap, key_cap;
} ends_index_t;

static void ends_index_clear(ends_index_t *ix)
{
    free(ix->start);
    free(ix->ray);
    free(ix->key);
    memset(ix, 0, sizeof *ix);
}

static hf_err_t ends_index(const rayset_t *cur, long p, ends_index_t *ix)
{
    long R = cur->count, words = cur->words, nk = p * p;
    ix->p = 0; /* no index: ends_blocked scans every ray */
    if (p > ENDS_INDEX_POSITIONS_MAX)
        return HF_OK;
    HF_TRY(HF_GROW(&ix->start, &ix->start_cap, nk + 1));
    HF_TRY(HF_GROW(&ix->ray, &ix->ray_cap, R ? R : 1));
    HF_TRY(HF_GROW(&ix->key, &ix->key_cap, R ? R : 1));
    ix->p = p;
    memset(ix->start, 0, (size_t)(nk + 1) * sizeof *ix->start);
    for (long k = 0; k < R; k++) {
        const uint64_t *z = cur->zero + k * words;
        long a = -1, b = -1;
        for (long w = 0; w < words && a < 0; w++) {
            uint64_t x = ~z[w] & below_mask(w, p);
            if (x)
                a = w * 64 + __builtin_ctzll(x);
        }
        for (long w = words - 1; w >= 0 && b < 0; w--) {
            uint64_t x = ~z[w] & below_mask(w, p);
            if (x)
                b = w * 64 + 63 - __builtin_clzll(x);
        }
        assert(a >= 0 && b >= a);
        ix->key[k] = a * p + b;
        ix->start[ix->key[k] + 1]++;
    }
    for (long t = 0; t < nk; t++)
        ix->start[t + 1] += ix->start[t];
    /* counting sort; start[] is shifted back afterwards */
    for (long k = 0; k < R; k++)
        ix->ray[ix->start[ix->key[k]]++] = k;
    for (long t = nk; t > 0; t--)
        ix->start[t] = ix->start[t - 1];
    ix->start[0] = 0;
    return HF_OK;
}

/* Is there a ray other than i and j whose zero set contains Z (support inside U)? The
 * buckets when there are fewer pairs in U than rays, else every ray. */
static int ends_blocked(const ends_index_t *ix, const rayset_t *cur, const uint64_t *Z,
                        const long *ulist, long nu, long i, long j)
{
    long words = cur->words, p = ix->p;
    if (!ix->p || nu * (nu + 1) / 2 >= cur->count) {
        for (long k = 0; k < cur->count; k++)
            if (k != i && k != j && bits_subset(Z, cur->zero + k * words, words))
                return 1;
        return 0;
    }
    for (long x = 0; x < nu; x++)
        for (long y = x; y < nu; y++) {
            long key = ulist[x] * p + ulist[y];
            for (long t = ix->start[key]; t < ix->start[key + 1]; t++) {
                long k = ix->ray[t];
                if (k != i && k != j && bits_subset(Z, cur->zero + k * words, words))
                    return 1;
            }
        }
    return 0;
}

/* The pruned double description: every extreme ray of C with at most `bound` box points in
 * its support, into c->supp / c->ssize (sorted canonically). poll may stop it. */
hf_err_t hf_cone_rays(hf_cone_t *c, long bound, hf_search_poll_fn poll, void *poll_ctx)
{
    long n = c->n, nh = c->nh, words = c->words;
    hf_err_t err = HF_OK;
    long *order = hf_malloc((size_t)(nh ? nh : 1) * sizeof *order);
    long *wpos = hf_malloc((size_t)(nh ? nh : 1) * sizeof *wpos); /* weight by position */
    rayset_t cur = {.n = n, .words = words}, next = {.n = n, .words = words};
    long adjacency = 0, slen = 0;
    nmod_t mod;
    fmpz *s = NULL, *v = NULL;
    uint64_t *Z = hf_calloc((size_t)words, sizeof *Z);
    long *ulist = hf_malloc((size_t)(nh ? nh : 1) * sizeof *ulist);
    ends_index_t ix = {0};
    uint64_t *sig = NULL;
    long *posl = NULL, *negl = NULL;
    long sig_cap = 0, posl_cap = 0, negl_cap = 0;
    fmpz_t g;
    fmpz_init(g);
    nmod_init(&mod, n_nextprime(UWORD(1) << 62, 1));
    if (!order || !wpos || !Z || !ulist) {
        err = HF_ERR_NOMEM;
        goto done;
    }
    HF_CHECK(err, dd_order(c, order, mod), done);
    for (long p = 0; p < nh; p++)
        wpos[p] = c->weight[order[p]];

    /* the simplicial start: rays = columns of B^-1 with B the first n rows */
    {
        fmpz_mat_t B, Binv;
        fmpz_t den;
        fmpz_mat_init(B, n, n);
        fmpz_mat_init(Binv, n, n);
        fmpz_init(den);
        for (long i = 0; i < n; i++)
            _fmpz_vec_set(B->rows[i], c->A + order[i] * n, n);
        int ok = fmpz_mat_inv(Binv, den, B);
        v = _fmpz_vec_init(n);
        for (long j = 0; j < n && ok && err == HF_OK; j++) {
            for (long i = 0; i < n; i++)
                fmpz_mul_si(v + i, fmpz_mat_entry(Binv, i, j), fmpz_sgn(den));
            vec_primitive(v, n, g);
            memset(Z, 0, (size_t)words * sizeof *Z);
            for (long i = 0; i < n; i++)
                if (i != j)
                    bit_set(Z, i);
            if (wpos[j] <= bound)
                err = rayset_push(&cur, v, Z, wpos[j]);
        }
        fmpz_clear(den);
        fmpz_mat_clear(Binv);
        fmpz_mat_clear(B);
        if (!ok && err == HF_OK)
            err = hf_error(HF_ERR_INTERNAL, "cone engine: starting rows are singular");
        if (err != HF_OK)
            goto done;
    }

    long maxrays = cur.count;
    for (long p = n; p < nh; p++) {
        if (poll && poll(poll_ctx)) {
            err = hf_error(HF_ERR_INTERRUPTED, "cone engine: ray enumeration stopped on request");
            goto done;
        }
        long R = cur.count;
        if (R + 1 > slen) {
            if (s)
                _fmpz_vec_clear(s, slen);
            slen = 2 * (R + 1);
            s = _fmpz_vec_init(slen);
        }
        const fmpz *a = c->A + order[p] * n;
        for (long i = 0; i < R; i++)
            _fmpz_vec_dot(s + i, a, cur.v + i * n, n);
        next.count = 0;
        /* kept rays: zero ones gain position p in their zero set, positive ones grow */
        for (long i = 0; i < R; i++) {
            int sg = fmpz_sgn(s + i);
            if (sg < 0)
                continue;
            uint64_t *zi = cur.zero + i * words;
            long size = cur.size[i] + (sg > 0 ? wpos[p] : 0);
            if (size > bound)
                continue;
            memcpy(Z, zi, (size_t)words * sizeof *Z);
            if (sg == 0)
                bit_set(Z, p);
            HF_CHECK(err, rayset_push(&next, cur.v + i * n, Z, size), done);
        }
        /* new rays from adjacent (positive, negative) pairs */
        HF_CHECK(err, ends_index(&cur, p, &ix), done);
        /* each ray's support folded onto 64 bits: the popcount of two folds' union never
         * exceeds the positions in the union of the supports, so a pair whose folds
         * already exceed the bound is out after one word */
        long npos = 0, nneg = 0;
        HF_CHECK(err, HF_GROW(&sig, &sig_cap, R), done);
        HF_CHECK(err, HF_GROW(&posl, &posl_cap, R), done);
        HF_CHECK(err, HF_GROW(&negl, &negl_cap, R), done);
        for (long i = 0; i < R; i++) {
            int sg = fmpz_sgn(s + i);
            if (sg == 0)
                continue;
            uint64_t f = 0;
            for (long w = 0; w < words; w++)
                f |= ~cur.zero[i * words + w] & below_mask(w, p);
            sig[i] = f;
            if (sg > 0)
                posl[npos++] = i;
            else
                negl[nneg++] = i;
        }
        for (long a = 0; a < npos; a++) {
            long i = posl[a];
            const uint64_t *zi = cur.zero + i * words;
            uint64_t fi = sig[i];
            for (long b = 0; b < nneg; b++) {
                long j = negl[b];
                if (__builtin_popcountll(fi | sig[j]) > bound)
                    continue;
                const uint64_t *zj = cur.zero + j * words;
                long common = 0;
                for (long w = 0; w < words; w++) {
                    Z[w] = zi[w] & zj[w];
                    common += __builtin_popcountll(Z[w]);
                }
                /* every position weighs >= 1, so p - common positions already bound the
                 * size from below: most pairs stop here without touching the weights */
                if (common < n - 2 || p - common > bound)
                    continue;
                long nu = 0, size = 0;
                for (long w = 0; w < words; w++) {
                    uint64_t x = ~Z[w] & below_mask(w, p);
                    while (x) {
                        long u = w * 64 + __builtin_ctzll(x);
                        ulist[nu++] = u;
                        size += wpos[u];
                        x &= x - 1;
                    }
                }
                if (size > bound)
                    continue;
                /* Adjacency, combinatorially: i and j span a 2-face iff no other ray's zero
                 * set contains Z, i.e. no other ray's support lies in U = supp i u supp j.
                 * A ray with that property has its support inside the union of theirs, so
                 * at most `size` <= bound points: such rays are never dropped, and the test
                 * over the kept rays is exact. Such a ray's first and last support
                 * positions are both in U: only those buckets of the index are looked at. */
                if (ends_blocked(&ix, &cur, Z, ulist, nu, i, j))
                    continue;
                adjacency++;
                /* v = s_i r_j - s_j r_i: zero on Z and on position p, positive elsewhere */
                _fmpz_vec_scalar_mul_fmpz(v, cur.v + j * n, n, s + i);
                _fmpz_vec_scalar_submul_fmpz(v, cur.v + i * n, n, s + j);
                vec_primitive(v, n, g);
                bit_set(Z, p);
                HF_CHECK(err, rayset_push(&next, v, Z, size), done);
            }
        }
        rayset_t tmp = cur;
        cur = next;
        next = tmp;
        if (cur.count > maxrays)
            maxrays = cur.count;
        c->info.step = p + 1;
        c->info.step_rays = cur.count;
    }
    c->info.rays_max = maxrays;
    c->info.adjacencies = adjacency;

    /* final rays: support bitsets over hyperplane numbers, sorted (size, then bits) */
    c->nrays = cur.count;
    c->supp = hf_calloc((size_t)(cur.count ? cur.count : 1) * words, sizeof *c->supp);
    c->ssize = hf_malloc((size_t)(cur.count ? cur.count : 1) * sizeof *c->ssize);
    long *perm = hf_malloc((size_t)(cur.count ? cur.count : 1) * sizeof *perm);
    uint64_t *tmpb = hf_calloc((size_t)(cur.count ? cur.count : 1) * words, sizeof *tmpb);
    if (!c->supp || !c->ssize || !perm || !tmpb) {
        free(perm);
        free(tmpb);
        err = HF_ERR_NOMEM;
        goto done;
    }
    for (long i = 0; i < cur.count; i++) {
        uint64_t *b = tmpb + i * words;
        for (long p = 0; p < nh; p++)
            if (!bit_get(cur.zero + i * words, p))
                bit_set(b, order[p]);
        perm[i] = i;
    }
    /* insertion sort is enough: ray counts are modest; compare size then bits */
    for (long i = 1; i < cur.count; i++) {
        long x = perm[i], j = i - 1;
        while (j >= 0) {
            long y = perm[j];
            int less = cur.size[x] < cur.size[y];
            if (cur.size[x] == cur.size[y])
                less = memcmp(tmpb + x * words, tmpb + y * words, (size_t)words * sizeof *tmpb) < 0;
            if (!less)
                break;
            perm[j + 1] = y;
            j--;
        }
        perm[j + 1] = x;
    }
    for (long i = 0; i < cur.count; i++) {
        memcpy(c->supp + i * words, tmpb + perm[i] * words, (size_t)words * sizeof *tmpb);
        c->ssize[i] = cur.size[perm[i]];
    }
    free(perm);
    free(tmpb);
    c->bound = bound;
    c->info.rays = c->nrays;
    c->info.bound = bound;

done:
    if (s)
        _fmpz_vec_clear(s, slen);
    if (v)
        _fmpz_vec_clear(v, n);
    fmpz_clear(g);
    rayset_clear(&cur);
    rayset_clear(&next);
    ends_index_clear(&ix);
    free(sig);
    free(posl);
    free(negl);
    free(ulist);
    free(Z);
    free(wpos);
    free(order);
    return err;
}
