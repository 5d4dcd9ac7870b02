/* The last phase of an entry (hf_campaign_entry): what every rank needs of the row is
 * shared. The symmetry group goes from the rank that made it (the idle task, entry_run.c) to
 * every rank as words (hf_group_pack), and the orbits of the minimal supports under it are
 * counted across the ranks (hf_campaign_count_orbits, headfuse/campaign.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "headfuse/agree.h"
#include "campaign/campaign_impl.h"
#include "headfuse/stop.h"
#include "headfuse/symmetry.h"

/* The group from the rank that made it (idle: the task that made it, on every rank) to
 * every rank: *grp is made on that rank, else *own, unpacked from its words. It fails if
 * making it failed on any rank that ran the task, the owner or rarely one more
 * (hf_sched_idle_agree). Collective. */
static hf_err_t share_group(MPI_Comm comm, int owner, const hf_group_t *made,
                            const hf_sched_idle_t *idle, const hf_group_t **grp, hf_group_t **own)
{
    int rank, size;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    HF_TRY(hf_sched_idle_agree(comm, idle));
    if (size == 1) {
        *grp = made;
        return HF_OK;
    }
    int64_t *w = NULL;
    long n = 0;
    hf_err_t e = rank == owner ? hf_group_pack(made, &w, &n) : HF_OK;
    int64_t len = e == HF_OK ? n : -1;
    MPI_Bcast(&len, 1, MPI_INT64_T, owner, comm);
    if (len < 0)
        return hf_agree_all(comm, e); /* the owner's error (its own message) wins */
    if (rank != owner && !(w = hf_malloc((size_t)(len ? len : 1) * sizeof *w)))
        e = HF_ERR_NOMEM;
    e = hf_agree_all(comm, e);
    if (e == HF_OK)
        MPI_Bcast(w, (int)len, MPI_INT64_T, owner, comm);
    if (e == HF_OK && rank != owner)
        e = hf_group_unpack(w, (long)len, own);
    free(w);
    *grp = rank == owner ? made : *own;
    return hf_agree_all(comm, e);
}

/* Orbit representatives of more supports than this many key coordinates in all are
 * computed on rank 0 alone (not broadcast): every rank would hold a copy. */
#define ORBITS_DEALT_MAX (1L << 25)

/* (headfuse/campaign.h) Each rank computes the canonical representatives (the smallest
 * image) of supports i = rank, rank + size, ..., polling the stop flag, and rank 0 counts
 * the distinct ones. One support is one orbit, whatever the group: its image is not
 * computed (for a support of 10^5 keys that was the whole cost of the row). */
hf_err_t hf_campaign_count_orbits(MPI_Comm comm, const hf_group_t *grp, const hf_supports_t *sup,
                                  long *n_sym)
{
    int rank, size;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    long nml[3] = {0, 0, 0}; /* supports, atoms each, key coordinates each */
    if (rank == 0) {
        nml[0] = sup->n;
        nml[1] = sup->m;
        nml[2] = sup->m * sup->d;
    }
    MPI_Bcast(nml, 3, MPI_LONG, 0, comm);
    long n = nml[0], m = nml[1], len = nml[2];
    *n_sym = n;
    if (n <= 1)
        return HF_OK;
    if (hf_group_order(grp) < 0) {
        *n_sym = -1;
        return HF_OK;
    }
    int dealt = size > 1 && (double)n * (double)len <= (double)ORBITS_DEALT_MAX;
    if (!dealt && rank != 0)
        return hf_agree_root(comm, HF_OK); /* rank 0 counts alone */
    int step = dealt ? size : 1, me = dealt ? rank : 0;
    long mine = me < n ? (n - 1 - me) / step + 1 : 0;
    int64_t *all = rank == 0 ? sup->keys : hf_malloc((size_t)(n * len) * sizeof *all);
    int64_t *reps = hf_malloc((size_t)(mine > 0 ? mine * len : 1) * sizeof *reps);
    int64_t *got = rank == 0 ? hf_malloc((size_t)(n * len) * sizeof *got) : NULL;
    int *counts = rank == 0 ? hf_malloc((size_t)size * sizeof *counts) : NULL;
    int *displs = rank == 0 ? hf_malloc((size_t)size * sizeof *displs) : NULL;
    long *idx = rank == 0 ? hf_malloc((size_t)n * sizeof *idx) : NULL;
    int64_t **lists = rank == 0 ? hf_malloc((size_t)n * sizeof *lists) : NULL;
    hf_err_t e = all && reps && (rank != 0 || (got && counts && displs && idx && lists))
                     ? HF_OK
                     : HF_ERR_NOMEM;
    if (dealt && (e = hf_agree_all(comm, e)) == HF_OK)
        MPI_Bcast(all, (int)(n * len), MPI_INT64_T, 0, comm); /* n len <= 2^25 */
    for (long k = 0; e == HF_OK && k < mine; k++)
        if ((e = hf_stop_check(HF_STOP_ORBITS)) == HF_OK)
            e = hf_group_orbit_rep(grp, m, all + (me + k * step) * len, reps + k * len);
    if (dealt && (e = hf_agree_all(comm, e)) == HF_OK) {
        int cnt = (int)(mine * len);
        MPI_Gather(&cnt, 1, MPI_INT, counts, 1, MPI_INT, 0, comm);
        for (int r = 0; rank == 0 && r < size; r++)
            displs[r] = r == 0 ? 0 : displs[r - 1] + counts[r - 1];
        MPI_Gatherv(reps, cnt, MPI_INT64_T, got, counts, displs, MPI_INT64_T, 0, comm);
    } else if (e == HF_OK) {
        memcpy(got, reps, (size_t)(n * len) * sizeof *got);
    }
    if (e == HF_OK && rank == 0) {
        /* rank r's k-th representative is support r + k step's, gathered in rank order */
        long at = 0;
        for (int r = 0; r < step; r++)
            for (long i = r; i < n; i += step)
                lists[i] = got + (at++) * len;
        e = hf_campaign_keys_sort(lists, n, len, idx);
        *n_sym = 0;
        for (long i = 0; e == HF_OK && i < n; i++)
            if (i == 0 || hf_campaign_keys_cmp(lists[idx[i - 1]], lists[idx[i]], len))
                (*n_sym)++;
    }
    if (rank != 0)
        free(all);
    free(reps);
    free(got);
    free(counts);
    free(displs);
    free(idx);
    free(lists);
    return hf_agree_root(comm, e);
}

hf_err_t hf_campaign_group(const hf_search_t *s, const hf_target_t *t, hf_group_t **out)
{
    *out = NULL;
    const hf_fraction_t *frac = hf_search_fraction(s);
    if (frac)
        return hf_group_create(t, frac, out);
    if (!hf_group_needs_fraction(t->d, hf_search_large_terms(s)))
        return hf_group_create_unknown(t->d, out);
    hf_fraction_t f;
    hf_fraction_init(&f);
    hf_err_t err = hf_fraction_from_target(&f, t);
    if (err == HF_OK)
        err = hf_group_create(t, &f, out);
    hf_fraction_clear(&f);
    return err;
}

hf_err_t hf_campaign_entry_share(hf_campaign_entry_ctx_t *x)
{
    const hf_group_t *grp = NULL; /* x->group, or own: the owner's, received */
    hf_group_t *own = NULL;
    hf_row_t *row = x->row;
    if (x->rank == x->owner)
        hf_sched_idle_run(&x->idle);
    hf_err_t e = share_group(x->comm, x->owner, x->group, &x->idle, &grp, &own);
    if (e == HF_OK) {
        row->group_order = hf_group_order(grp);
        const char *why = hf_group_unknown_reason(grp);
        snprintf(row->group_note, sizeof row->group_note, "%s", why ? why : "");
    }
    if (e == HF_OK && x->oc.m_star >= 0) {
        long nsym = -1;
        e = hf_campaign_count_orbits(x->comm, grp, &x->sup, &nsym);
        row->n_min_sym = nsym;
    }
    hf_group_destroy(&own);
    return hf_campaign_stop_said(e, HF_CAMPAIGN_UNITS_SAVED, x->cfg->shard_dir);
}
