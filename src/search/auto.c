/* The engine auto: not an engine of its own but the choice of one for the search at hand,
 * made when the search is created: the cone when its unknowns (the points of the box B_R,
 * search_impl.h) are few, else the layered engine. */
#include "search/search_impl.h"

static hf_engine_t auto_resolve(const hf_search_t *s)
{
    long n = hf_search_rbox_points(&s->frac, s->span);
    return n <= HF_SEARCH_CONE_AUTO_MAX ? HF_ENGINE_CONE : HF_ENGINE_LAYERED;
}

const hf_engine_ops_t hf_engine_auto = {.resolve = auto_resolve};
