/* Targets as lists of heads: the minimal set of operations the exact core needs
 * (init, clear, copy, add a head, count head-atom terms). Placeholder: the target
 * branch provides the full module (JSON, families, evaluation). */
#include <stdlib.h>
#include <string.h>

#include "headfuse/target.h"

hf_err_t hf_target_init(hf_target_t *t, const char *name, int d, int dv)
{
    memset(t, 0, sizeof *t);
    t->d = d;
    t->dv = dv;
    t->name = hf_strdup(name ? name : "");
    return t->name ? HF_OK : HF_ERR_NOMEM;
}

void hf_target_clear(hf_target_t *t)
{
    if (!t)
        return;
    for (int h = 0; h < t->nheads; h++)
        hf_head_clear(t->heads + h);
    free(t->heads);
    free(t->name);
    memset(t, 0, sizeof *t);
}

hf_err_t hf_target_add_head(hf_target_t *t, const hf_head_t *h)
{
    if (h->d != t->d || h->dv != t->dv)
        return hf_error(HF_ERR_INPUT, "%s: heads[%d]: d=%d, dv=%d do not match the target's %d, %d",
                        t->name, t->nheads, h->d, h->dv, t->d, t->dv);
    /* copy first: h may point into t->heads, which the realloc can move */
    hf_head_t copy;
    hf_head_init(&copy, t->d, t->dv);
    hf_err_t err = hf_head_copy(&copy, h);
    if (err != HF_OK) {
        hf_head_clear(&copy);
        return err;
    }
    hf_head_t *heads = hf_realloc(t->heads, (size_t)(t->nheads + 1) * sizeof *heads);
    if (!heads) {
        hf_head_clear(&copy);
        return HF_ERR_NOMEM;
    }
    t->heads = heads;
    heads[t->nheads++] = copy;
    return HF_OK;
}

hf_err_t hf_target_copy(hf_target_t *dst, const hf_target_t *src)
{
    HF_TRY(hf_target_init(dst, src->name, src->d, src->dv));
    for (int h = 0; h < src->nheads; h++) {
        hf_err_t err = hf_target_add_head(dst, src->heads + h);
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
    for (int h = 0; h < t->nheads; h++)
        n += t->heads[h].natoms;
    return n;
}
