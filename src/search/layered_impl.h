/* The layered engine's own state, shared by its files: the engine (layered.c: blocks,
 * units, runs), its tables of the limit targets' supports (layered_tables.c), its filter of
 * faces (layered_faces.c) and the memo of face tests (facememo.c). docs/search.md, "Engine
 * layered". */
#ifndef HF_LAYERED_IMPL_H
#define HF_LAYERED_IMPL_H

#include <stdint.h>

#include "search/search_impl.h"

/* Layered units aim at 2^20 *possible* candidates: the prefix rule on F_{-e_0} skips
 * most of them, so units stay short (chain:d=3 span 4: ~2^15 candidates per unit would
 * have meant 2 million units of ~0.1 ms). */
#define HF_SEARCH_LAYERED_UNIT_TARGET (1L << 20)
#define HF_SEARCH_LAYERED_UNITS_MAX (1L << 14) /* the aim doubles above this many units */
/* Layered middles between poll calls: a unit whose middles all fail the prefix face test
 * makes no candidate, yet may take seconds (chain:d=3 span 5: up to 9 s), and rank 0
 * answers requests only when it polls. */
#define HF_SEARCH_VISIT_POLL_EVERY 64
/* Layered cells fix every middle point (a cell is one subset of middles) unless a unit would
 * then have more than HF_SEARCH_CELLS_MAX cells: a cell that fixes fewer can hold a long run
 * of candidates (chain:d=3 at span 4: 0.35 s in one cell fixing three points). */
#define HF_SEARCH_CELLS_MAX ((int64_t)1 << 60)

/* Feasible supports of a limit target with the layering coordinate dropped: every
 * feasible support (every size up to `done`, every placement in the box
 * {0..S}^dim), grown lazily. Entries are sorted by size, then lexicographically. */
typedef struct {
    int dim;            /* d - 1 >= 0; dim 0: the only support is the single point */
    hf_target_t target; /* the dropped target (dim >= 1) */
    hf_fraction_t frac; /* its fraction: the memo key, up to T -> alpha T + beta */
    long lb;            /* face-rule lower bound (LONG_MAX if it does not fit) */
    hf_search_t *sub;   /* recursive search over the dim-box (created lazily) */
    long done;          /* every size <= done is listed */
    long n, cap;        /* entries */
    long *start;        /* entry i is idx[start[i] .. start[i] + size) */
    long *size;         /* size of entry i */
    uint32_t *idx;      /* point indices in {0..S}^dim */
    long nidx, capidx;
    long *by_size; /* by_size[s]: first entry of size s, s = 0..done + 1 */
    long capby;
} hf_fs_t;

/* All FS tables of one top-level search and its recursive sub-searches: one entry per
 * dropped limit target up to affine equivalence. Owned by the top-level search. */
typedef struct {
    long n, cap;
    hf_fs_t **fs;
} hf_fs_registry_t;

/* A block of the layered generation at one size m: bottom layers of size s0 (FS_lo
 * entries [lo0, lo0 + n0)), top level t, top layers of size st (FS_hi entries
 * [lot, lot + nt)), middles of r points among nmid. Triples (i0, it) are numbered
 * (i0 - lo0) * nt + (it - lot). For t = 0 (single layer) nt = 1 and there is no top. */
typedef struct {
    long s0, t, st, r;
    long lo0, n0, lot, nt;
    long nmid;
} hf_block_t;

/* Memo of face tests: exact answers for faces (coordinate j, side, key set translated to
 * canonical position). Cleared when large; answers never depend on it. Entries are kept in
 * insertion order (their keys in one pool) and found through core's hash index. */
typedef struct {
    hf_index_t index; /* hash of (face, key set) -> entry */
    long n, cap;      /* entries */
    long *off;        /* entry i's key set is pool[off[i] .. off[i] + len[i]) */
    int32_t *len;
    int16_t *face; /* 2 j + side */
    int8_t *feasible;
    uint32_t *pool;
    long npool, cappool;
} hf_facememo_t;

typedef struct {
    int invariant_last;    /* T does not depend on q_{d-1}: single layer possible */
    hf_fs_registry_t *reg; /* shared with sub-searches */
    int own_reg;
    hf_fs_t *fs_lo, *fs_hi; /* bottom / top layer tables (in reg) */
    /* faces checked on candidates: 2 (d - 1) coordinate faces (j < d - 1, side 0 = -e_j,
     * 1 = +e_j), then the nx facet directions of Newt(Q) (xw: nx x d normals, xwidth: the
     * width of Newt(Q) along each) */
    hf_facetest_t *faces;
    long nfaces;
    long nx;
    int64_t *xw, *xwidth;
    hf_facememo_t memo;
    long face_exact_tests; /* memo misses: exact tests on faces */
    int face0_done;        /* F_{-e_0} of the current candidate already checked */

    /* the prepared size's blocks, and while it is prepared the face-table size being grown
     * and the last one needed (for describe) */
    long nblocks, capblocks;
    hf_block_t *blocks;
    long prep_sz, prep_of;

    /* scratch (m entries each, for the largest m run so far) */
    uint32_t *tmp;     /* 6 rows of m: two layers, middle, face index, face points, prefix */
    int64_t *fkeys;    /* face keys (m d) */
    int64_t *cellpart; /* ranks of a cell's first points (m) */
    int64_t *dots;     /* k.w of the candidate's keys (m) */
    long scratch_cap;
    hf_binom_tab_t ctab; /* binomials for the ranks of cells */
} hf_layered_t;

static inline hf_layered_t *hf_layered(const hf_search_t *s)
{
    return s->data;
}

/* layered_tables.c */
void hf_fs_registry_destroy(hf_fs_registry_t **reg);
/* The FS table of T_{sign e_{d-1}} (found in s's registry or added to it). */
hf_err_t hf_fs_for(hf_search_t *s, int sign, hf_fs_t **out);
/* Make the table complete for every size <= M (clamped to the box): grown by the
 * sub-search, its units dealt across processes when owner's search has a split. */
hf_err_t hf_fs_grow(hf_fs_t *fs, hf_search_t *owner, long M);
/* Entries of one size (0 beyond the sizes done). */
long hf_fs_count(const hf_fs_t *fs, long size);

/* layered_faces.c */
/* The testers of the coordinate faces and of the other facet directions of Newt(Q). */
hf_err_t hf_layered_faces_init(hf_search_t *s);
void hf_layered_faces_clear(hf_layered_t *L);
/* Is the face (2 j + side, or a facet direction after them) made of the n sorted points
 * pts (indices in the d-box, n >= 1) feasible for its limit target? Memoised exact test;
 * m = current scratch row size. */
hf_err_t hf_layered_face_test(hf_search_t *s, int face, long n, const uint32_t *pts, long m,
                              int *feasible);
/* The engine's filter (hf_engine_ops_t.filter): the coordinate faces, then the facet
 * directions. */
hf_err_t hf_layered_filter(hf_search_t *s, long m, const uint32_t *idx, int *ok);

/* facememo.c */
void hf_facememo_init(hf_facememo_t *mm);
void hf_facememo_clear(hf_facememo_t *mm);
/* *found = 1 and *feasible set when (face, key set) is memoised. */
void hf_facememo_get(const hf_facememo_t *mm, int face, long len, const uint32_t *idx, int *found,
                     int *feasible);
hf_err_t hf_facememo_put(hf_facememo_t *mm, int face, long len, const uint32_t *idx, int feasible);

#endif
