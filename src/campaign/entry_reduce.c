/* The fourth phase of an entry (hf_campaign_entry): the reduction. The row is settled from
 * the run's outcome (m*, its status, a minimum certified over all keys); rank 0 merges every
 * shard of the directory (hf_shards_merge), decodes each found record of size m* once into
 * its witness, sorts the minimal supports canonically, checks their number against the
 * scheduler's count and appends the unit log. A large row's supports are written by every
 * rank from its slices into the directory's witness.h5 (large.c). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "headfuse/agree.h"
#include "campaign/campaign_impl.h"
#include "headfuse/stop.h"

/* The supports of size m_star, sorted canonically, each decoded once from its record. */
static hf_err_t reduce_supports(const hf_target_t *t, const hf_shards_merged_t *g, long m_star,
                                hf_supports_t *sup)
{
    long n = 0, len = m_star * t->d, cap = g->nfound ? g->nfound : 1;
    hf_head_t *w = hf_calloc((size_t)cap, sizeof *w);
    int64_t **keys = hf_calloc((size_t)cap, sizeof *keys);
    long *idx = hf_malloc((size_t)cap * sizeof *idx);
    hf_err_t e = w && keys && idx ? HF_OK : HF_ERR_NOMEM;
    for (long i = 0; e == HF_OK && i < g->nfound; i++) {
        if (g->found_m[i] != m_star)
            continue;
        if ((e = hf_stop_check(HF_STOP_MERGE)) != HF_OK)
            break;
        hf_head_init(&w[n], t->d, t->dv);
        n++;
        e = hf_found_decode(g->found_record[i], m_star, &w[n - 1]);
        keys[n - 1] = w[n - 1].keys;
    }
    if (e == HF_OK)
        e = hf_campaign_keys_sort(keys, n, len, idx);
    for (long i = 0; e == HF_OK && i < n; i++) {
        if (i > 0 && !hf_campaign_keys_cmp(keys[idx[i - 1]], keys[idx[i]], len)) {
            e = hf_error(HF_ERR_CORRUPT, "the same support was recorded twice");
            break;
        }
        e = hf_supports_push_head(sup, &w[idx[i]]);
    }
    for (long i = 0; w && i < n; i++)
        hf_head_clear(&w[i]);
    free(idx);
    free(keys);
    free(w);
    return e;
}

/* A large row's minimal supports, written by every rank into the shard directory's
 * witness.h5 from rank 0's merged records (large.c); rank 0 checks their number. */
static hf_err_t large_supports(MPI_Comm comm, int rank, const hf_campaign_cfg_t *cfg,
                               const hf_target_t *t, const hf_search_t *s,
                               const hf_shards_merged_t *g, long m_star, long nfound,
                               hf_supports_t *sup, hf_row_t *row)
{
    char **recs = NULL, path[4200];
    long nrec = 0;
    hf_err_t e = HF_OK;
    if (rank == 0) {
        recs = hf_malloc((size_t)(g->nfound ? g->nfound : 1) * sizeof *recs);
        e = recs ? HF_OK : HF_ERR_NOMEM;
        for (long i = 0; e == HF_OK && i < g->nfound; i++) {
            if (g->found_m[i] != m_star)
                continue;
            if (!hf_found_is_implicit(g->found_record[i]))
                e = hf_error(HF_ERR_CORRUPT,
                             "%s: a support of size %ld recorded with its keys, not by its "
                             "multiplier (another search's shard?)",
                             cfg->shard_dir, m_star);
            recs[nrec++] = g->found_record[i];
        }
    }
    e = hf_agree_root(comm, e);
    snprintf(path, sizeof path, "%s/witness.h5", cfg->shard_dir);
    hf_supports_clear(sup);
    hf_supports_init(sup, m_star, t->d, t->dv);
    if (e == HF_OK)
        e = hf_campaign_large_supports(comm, s, recs, nrec, m_star, path, sup);
    free(recs);
    if (e == HF_OK && rank == 0 && sup->n != nfound)
        e = hf_error(HF_ERR_CORRUPT,
                     "%s: the shards hold %ld supports of size %ld but the search found %ld",
                     cfg->shard_dir, sup->n, m_star, nfound);
    row->n_min_raw = sup->n;
    return hf_agree_root(comm, e);
}

/* Rank 0: the merged shards g into the row's supports (an ordinary row) and the unit log. */
static hf_err_t merge_row(hf_campaign_entry_ctx_t *x, const hf_shards_merged_t *g, int large)
{
    const hf_campaign_cfg_t *cfg = x->cfg;
    const hf_sched_outcome_t *oc = &x->oc;
    hf_row_t *row = x->row;
    hf_err_t e = HF_OK;
    if (oc->m_star >= 0 && !large) {
        hf_supports_clear(&x->sup);
        hf_supports_init(&x->sup, oc->m_star, x->t->d, x->t->dv);
        e = reduce_supports(x->t, g, oc->m_star, &x->sup);
        if (e == HF_OK && x->sup.n != oc->nfound)
            e = hf_error(HF_ERR_CORRUPT,
                         "%s: the shards hold %ld supports of size %ld but the search "
                         "found %ld",
                         cfg->shard_dir, x->sup.n, oc->m_star, oc->nfound);
        row->n_min_raw = x->sup.n;
    }
    if (e == HF_OK && oc->m_star < 0)
        row->n_min_raw = row->n_min_sym = 0;
    if (e == HF_OK && g->nunits) {
        long *nunits = x->nunits;
        hf_unit_record_t *u = hf_realloc(*x->units, (size_t)(*nunits + g->nunits) * sizeof *u);
        if (!u)
            return HF_ERR_NOMEM;
        memcpy(u + *nunits, g->units, (size_t)g->nunits * sizeof *u);
        for (long k = 0; k < g->nunits; k++)
            u[*nunits + k].row = cfg->row; /* a moved entry's units named its old row */
        *x->units = u;
        *nunits += g->nunits;
    }
    return e;
}

hf_err_t hf_campaign_entry_reduce(hf_campaign_entry_ctx_t *x)
{
    MPI_Comm comm = x->comm;
    const hf_sched_outcome_t *oc = &x->oc;
    const char *dir = x->cfg->shard_dir;
    x->row->nodes = oc->nodes;
    x->row->units = oc->units;
    x->ro.m_star = oc->m_star;
    /* every size up to UB decided without a support: no head with keys in the span
     * represents the target (a result, with its own status: there is no m* here) */
    x->ro.none = oc->m_star < 0 && oc->last_m >= x->last_m && x->opts->max_atoms == 0;
    /* a minimum proven over all integer keys (two dimensions, search.h) certifies the row
     * when the span holds it: then LB is m* itself */
    hf_certificate_t cert;
    HF_TRY(hf_campaign_stop_said(hf_agree_all(comm, hf_search_certify(x->t, &cert)),
                                 HF_CAMPAIGN_UNITS_SAVED, dir));
    x->ro.cert = &cert;
    hf_campaign_row_settle(x->row, &x->ro);
    x->ro.cert = NULL;
    x->settled = 1;
    if (x->rank == x->owner && x->rank != 0) /* while rank 0 merges */
        hf_sched_idle_run(&x->idle);
    int large = hf_search_is_large(x->s);
    hf_shards_merged_t g;
    hf_shards_merged_init(&g);
    hf_err_t e = HF_OK;
    if (x->rank == 0 && (e = hf_shards_merge(dir, x->fp, &g)) == HF_OK)
        e = merge_row(x, &g, large);
    e = hf_agree_root(comm, e);
    if (e == HF_OK && large && oc->m_star >= 0)
        e = large_supports(comm, x->rank, x->cfg, x->t, x->s, &g, oc->m_star, oc->nfound, &x->sup,
                           x->row);
    hf_shards_merged_clear(&g);
    return hf_campaign_stop_said(e, HF_CAMPAIGN_UNITS_SAVED, dir);
}
