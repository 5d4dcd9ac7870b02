/* A row's plan before it runs (docs/cluster.md, "A plan before a run"): the engine that will
 * run, the ranks its dealt work keeps busy, the memory per rank and per node (the checks of
 * hf_campaign_check_row, memory.c) and a time estimate with its basis. The same for `run
 * --list`, `target --span` and `slurm/submit --dry-run`; nothing is built. */
#include <stdio.h>
#include <string.h>

#include <flint/fmpz.h>

#include "campaign/campaign_impl.h"

const char *hf_campaign_plan_engine(const hf_campaign_plan_t *plan)
{
    if (plan->shortcut == 1)
        return "none (LB = UB)";
    if (plan->shortcut == 2)
        return "none (no support fits the span)";
    return hf_engine_name(plan->engine);
}

/* A large row's search seconds on `ranks` ranks for `keys` keys (the cost model of
 * campaign.h, docs/cluster.md). */
static double large_seconds(double keys, int ranks)
{
    return keys * (HF_CAMPAIGN_LARGE_SECONDS_ALPHA + HF_CAMPAIGN_LARGE_SECONDS_BETA / ranks);
}

hf_err_t hf_campaign_plan_row(const hf_target_t *t, const hf_search_opts_t *so,
                              const hf_bounds_t *b, int shortcut, const hf_campaign_memory_t *lim,
                              hf_campaign_plan_t *plan)
{
    memset(plan, 0, sizeof *plan);
    plan->seconds = -1;
    plan->shortcut = shortcut;
    plan->node_ranks = lim && lim->node_ranks > 0 ? lim->node_ranks : 1;
    HF_TRY(hf_campaign_check_row(t, so, b, shortcut, lim, &plan->mem));
    if (shortcut)
        return HF_OK;
    HF_TRY(hf_search_engine_planned(t, so, b, &plan->engine, &plan->unknowns));
    plan->node_total = plan->node_ranks * plan->mem.total;
    if (plan->mem.large) {
        /* the slices are dealt over every rank; the candidates are tested on each alike */
        long n = plan->mem.slices;
        plan->busy = n < plan->mem.ranks ? (int)n : plan->mem.ranks;
        plan->keys = fmpz_get_d(b->ub);
        plan->seconds = large_seconds(plan->keys, plan->mem.ranks);
    }
    plan->cone_warn = hf_engine_counts_unknowns(plan->engine) && !plan->mem.large &&
                      plan->unknowns > HF_CAMPAIGN_CONE_WARN_UNKNOWNS;
    return HF_OK;
}

void hf_campaign_cone_warning(long unknowns, char *buf, size_t n)
{
    snprintf(buf, n,
             "the cone has %ld unknowns (more than %d): its double description may keep "
             "hundreds of thousands of rays and take hours and gigabytes beyond the memory "
             "estimate (docs/search.md, \"Which engine auto takes\"); its progress lines "
             "show the rays kept and the pairs tested a second: if the rays keep growing, "
             "stop it (kill -USR1 on mpirun) and try a smaller span, --engine layered, or "
             "--max-atoms",
             unknowns, HF_CAMPAIGN_CONE_WARN_UNKNOWNS);
}
