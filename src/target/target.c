/* Targets: minimal storage (init, clear, copy, add a head, count head-atom terms).
 *
 * Placeholder so the bounds and verify modules can be built and tested on their own:
 * the target module's full version (JSON, families, evaluation) replaces this file. */
#include <stdlib.h>

#include "headfuse/target.h"

hf_err_t hf_target_init(hf_target_t *t, const char *name, int d, int dv)
{
    t->name = NULL;
    t->d = d;
    t->dv = dv;
    t->nheads = 0;
    t->heads = NULL;
    if (d < 1 || d > HF_D_MAX)
        return hf_error(HF_ERR_INPUT, "target: d: %d is outside 1..%d", d, HF_D_MAX);
    if (dv < 1 || dv > HF_DV_MAX)
        return hf_error(HF_ERR_INPUT, "target: dv: %d is outside 1..%d", dv, HF_DV_MAX);
    t->name = hf_strdup(name ? name : "");
    return t->name ? HF_OK : HF_ERR_NOMEM;
}

void hf_target_clear(hf_target_t *t)
{
    if (!t)
        return;
    for (int i = 0; i < t->nheads; i++)
        hf_head_clear(t->heads + i);
    free(t->heads);
    free(t->name);
    t->heads = NULL;
    t->name = NULL;
    t->nheads = 0;
}

hf_err_t hf_target_add_head(hf_target_t *t, const hf_head_t *h)
{
    if (h->d != t->d || h->dv != t->dv)
        return hf_error(HF_ERR_INPUT, "target: heads[%d]: dimensions %d,%d do not match %d,%d",
                        t->nheads, h->d, h->dv, t->d, t->dv);
    hf_head_t *heads = hf_realloc(t->heads, (size_t)(t->nheads + 1) * sizeof *heads);
    if (!heads)
        return HF_ERR_NOMEM;
    t->heads = heads;
    hf_head_init(heads + t->nheads, t->d, t->dv);
    hf_err_t err = hf_head_copy(heads + t->nheads, h);
    if (err != HF_OK) {
        hf_head_clear(heads + t->nheads);
        return err;
    }
    t->nheads++;
    return HF_OK;
}

hf_err_t hf_target_copy(hf_target_t *dst, const hf_target_t *src)
{
    HF_TRY(hf_target_init(dst, src->name, src->d, src->dv));
    for (int i = 0; i < src->nheads; i++) {
        hf_err_t err = hf_target_add_head(dst, src->heads + i);
        if (err != HF_OK) {
            hf_target_clear(dst);
            return err;
        }
    }
    return HF_OK;
}

long hf_target_head_atoms(const hf_target_t *t)
{
    long n = 0;
    for (int i = 0; i < t->nheads; i++)
        n += t->heads[i].natoms;
    return n;
}
