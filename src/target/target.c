/* Targets: a named list of heads of equal dimensions; storage, copying and evaluation. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "headfuse/target.h"

hf_err_t hf_target_init(hf_target_t *t, const char *name, int d, int dv)
{
    memset(t, 0, sizeof *t);
    if (!name)
        name = "target";
    if (d < 1 || d > HF_D_MAX)
        return hf_error(HF_ERR_INPUT, "%s: d: %d is outside 1..%d", name, d, HF_D_MAX);
    if (dv < 1 || dv > HF_DV_MAX)
        return hf_error(HF_ERR_INPUT, "%s: dv: %d is outside 1..%d", name, dv, HF_DV_MAX);
    t->name = hf_strdup(name);
    if (!t->name)
        return HF_ERR_NOMEM;
    t->d = d;
    t->dv = dv;
    return HF_OK;
}

void hf_target_init_empty(hf_target_t *t)
{
    memset(t, 0, sizeof *t);
}

void hf_target_swap(hf_target_t *a, hf_target_t *b)
{
    hf_target_t x = *a;
    *a = *b;
    *b = x;
}

void hf_target_clear(hf_target_t *t)
{
    if (!t)
        return;
    /* A zeroed struct (what a failed init or load leaves) is cleared harmlessly. */
    for (int i = t->nheads - 1; i >= 0; i--)
        hf_head_clear(t->heads + i);
    free(t->heads);
    free(t->name);
    memset(t, 0, sizeof *t);
}

hf_err_t hf_target_copy(hf_target_t *dst, const hf_target_t *src)
{
    hf_target_t tmp; /* built aside: dst keeps its value on failure, and dst == src works */
    hf_err_t err = hf_target_init(&tmp, src->name, src->d, src->dv);
    for (int i = 0; err == HF_OK && i < src->nheads; i++)
        err = hf_target_add_head(&tmp, src->heads + i);
    if (err == HF_OK)
        hf_target_swap(dst, &tmp);
    hf_target_clear(&tmp);
    return err;
}

hf_err_t hf_target_add_head(hf_target_t *t, const hf_head_t *h)
{
    if (h->d != t->d || h->dv != t->dv)
        return hf_error(HF_ERR_INPUT,
                        "%s: heads[%d]: head has d=%d, dv=%d but the target has d=%d, dv=%d",
                        t->name, t->nheads, h->d, h->dv, t->d, t->dv);
    /* An empty head is not a function (0/0); refuse it here rather than produce NaN later. */
    if (h->natoms < 1)
        return hf_error(HF_ERR_INPUT, "%s: heads[%d].atoms: a head needs at least one atom",
                        t->name, t->nheads);
    HF_TRY(HF_GROW(&t->heads, &t->capheads, t->nheads + 1));
    hf_head_t *dst = t->heads + t->nheads;
    hf_head_init(dst, t->d, t->dv);
    hf_err_t err = hf_head_copy(dst, h);
    if (err != HF_OK) {
        hf_head_clear(dst);
        return err;
    }
    t->nheads++;
    return HF_OK;
}

long hf_target_head_atoms(const hf_target_t *t)
{
    long n = 0;
    for (int i = 0; i < t->nheads; i++)
        n += t->heads[i].natoms;
    return n;
}

void hf_target_eval(const hf_target_t *t, const double *q, double *out)
{
    /* Each head is evaluated stably (log-sum-exp); heads are added with Neumaier's
     * compensated summation so that many heads of mixed sign lose nothing. */
    double head[HF_DV_MAX], comp[HF_DV_MAX];
    for (int j = 0; j < t->dv; j++) {
        out[j] = 0;
        comp[j] = 0;
    }
    for (int i = 0; i < t->nheads; i++) {
        hf_head_eval(t->heads + i, q, head);
        for (int j = 0; j < t->dv; j++) {
            double s = out[j] + head[j];
            if (fabs(out[j]) >= fabs(head[j]))
                comp[j] += (out[j] - s) + head[j];
            else
                comp[j] += (head[j] - s) + out[j];
            out[j] = s;
        }
    }
    for (int j = 0; j < t->dv; j++)
        out[j] += comp[j];
}
