/* The first phase of an entry (hf_campaign_entry): its admission. The memory limit per
 * rank, the target's bounds (once: for the shortcut, the search's sizes and the row), the
 * certified shortcut and the checks of the row before anything is built, among them the
 * one check of the search's options (hf_campaign_check_row, memory.c). A row its bounds
 * decide is settled here: no support fits the span (infeasible), or LB = UB certifies it
 * and the product head is its one stored support. */
#include <flint/fmpz.h>

#include "headfuse/agree.h"
#include "campaign/campaign_impl.h"

/* The product head as the one stored minimal support of a certified row. */
static hf_err_t product_support(const hf_target_t *t, hf_supports_t *sup)
{
    hf_head_t h;
    hf_head_init(&h, t->d, t->dv);
    hf_err_t e = hf_bounds_product_head(t, 1L << 16, &h);
    if (e == HF_ERR_LIMIT) {
        hf_head_clear(&h);
        hf_error_clear();
        return HF_OK; /* too large to store: the row keeps no explicit head */
    }
    if (e == HF_OK) {
        hf_supports_clear(sup);
        hf_supports_init(sup, h.natoms, t->d, t->dv);
        e = hf_supports_push_head(sup, &h);
    }
    hf_head_clear(&h);
    return e;
}

/* The row its bounds decided (shortcut: hf_campaign_certified's), without building anything. */
static hf_err_t decided(hf_campaign_entry_ctx_t *x, int shortcut)
{
    hf_err_t e = HF_OK;
    x->decided = 1;
    x->ro.engine = HF_ENGINE_NONE;
    if (shortcut == 2) {
        /* no support fits the span: infeasible without building anything */
        x->ro.none = 1;
        hf_campaign_row_settle(x->row, &x->ro);
        x->row->n_min_raw = x->row->n_min_sym = 0;
    } else {
        /* LB = UB: certified without building a search; keep the product head. m* is
         * LB: a number below 2^63, and exactly in the row's decimal at any size */
        const fmpz *lb = x->b->low.lb;
        x->ro.m_star = fmpz_fits_si(lb) ? fmpz_get_si(lb) : -1;
        x->ro.m_star_is_lb = 1;
        hf_campaign_row_settle(x->row, &x->ro);
        if (x->rank == 0)
            e = product_support(x->t, &x->sup);
        e = hf_agree_root(x->comm, e);
    }
    x->row->seconds = MPI_Wtime() - x->t0;
    return e;
}

hf_err_t hf_campaign_entry_admit(hf_campaign_entry_ctx_t *x)
{
    const hf_campaign_cfg_t *cfg = x->cfg;
    int shortcut = 0;
    hf_campaign_memory_t lim; /* the caller's limit, else this machine's */
    hf_err_t fe = cfg->memory
                      ? HF_OK
                      : hf_campaign_memory_limit(NULL, NULL, hf_campaign_node_ranks(x->comm), &lim);
    lim.ranks = x->size;
    if (fe == HF_OK && !cfg->bounds)
        fe = hf_bounds_compute(x->t, &x->own);
    if (fe == HF_OK)
        fe = hf_campaign_certified(x->t, x->opts, x->b, cfg->max_name ? cfg->max_name : "max_atoms",
                                   &shortcut);
    if (fe == HF_OK) /* the options, the box and the memory estimate, before anything is built */
        fe = hf_campaign_check_row(x->t, x->opts, x->b, shortcut, cfg->memory ? cfg->memory : &lim,
                                   NULL);
    HF_TRY(hf_campaign_stop_said(hf_agree_all(x->comm, fe), HF_CAMPAIGN_NOT_STARTED));
    return shortcut ? decided(x, shortcut) : HF_OK;
}
