/* The engine auto: not an engine of its own but the choice of one for the search at hand,
 * made when the search is created (docs/search.md, "Which engine auto takes").
 *
 * The cone engine's cost is its double description, which grows with its unknowns n (the
 * points of the box B_R); the layered engine's cost is its face tables: every support of
 * the two limit targets along the last coordinate with at most M - LB(other) points, where
 * M is the largest size to try. When M = LB(bottom) + LB(top) (the slack is 0) the tables
 * hold only minimal supports of the limit targets and the layered engine is cheap whatever
 * n is (W_d at span 2: n = 2^d, slack 0); with slack they grow with it and with the span
 * (chain:d=3: slack 12; at span 5 the layered engine takes 47 CPU minutes, at span 6 it does
 * not finish, while the double description of its 100 unknowns takes 3.5 minutes). */
#include <limits.h>

#include "headfuse/bounds.h"
#include "search/search_impl.h"

/* Above this many unknowns the double description's simplicial start alone (an n x n
 * exact inverse) is too costly: the layered engine, whatever the slack. */
#define AUTO_CONE_UNKNOWNS_MAX 1024

/* M - LB(T_-) - LB(T_+) for the limit targets along -e_{d-1} and +e_{d-1} (the layered
 * engine's bottom and top layers), or -1 when it cannot be computed (an allocation failed:
 * then the choice falls back on the unknowns alone). */
static long layered_slack(const hf_search_t *s)
{
    int64_t w[HF_D_MAX] = {0};
    long lb[2] = {LONG_MAX, LONG_MAX};
    hf_target_t lim;
    fmpz_t x;
    hf_target_init_empty(&lim);
    fmpz_init(x);
    for (int side = 0; side < 2; side++) {
        w[s->d - 1] = side ? 1 : -1;
        if (hf_bounds_limit_target(&s->t, w, &lim) != HF_OK || hf_bounds_lower(&lim, x) != HF_OK)
            break;
        lb[side] = fmpz_fits_si(x) ? fmpz_get_si(x) : LONG_MAX;
    }
    fmpz_clear(x);
    hf_target_clear(&lim);
    if (lb[0] == LONG_MAX || lb[1] == LONG_MAX) {
        hf_error_clear();
        return -1;
    }
    long slack = s->last - lb[0] - lb[1];
    return slack > 0 ? slack : 0;
}

static hf_engine_t auto_resolve(const hf_search_t *s)
{
    long n = hf_search_rbox_size(s->qext, s->d, s->span);
    if (n <= HF_SEARCH_CONE_AUTO_MAX)
        return HF_ENGINE_CONE;
    if (n > AUTO_CONE_UNKNOWNS_MAX || s->d < 2)
        return HF_ENGINE_LAYERED;
    long slack = layered_slack(s);
    return slack > 0 ? HF_ENGINE_CONE : HF_ENGINE_LAYERED;
}

const hf_engine_ops_t hf_engine_auto = {.resolve = auto_resolve};
