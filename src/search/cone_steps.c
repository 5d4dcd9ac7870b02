/* The double description's steps (docs/search.md, "Engine cone", claim 3): from the rays of
 * the simplicial start, one row at a time: the rays' signs on the row, the lists of
 * positive and negative rays and the step's cells, the pairs (cone_pairs.c; dealt across
 * the ranks, cone_exchange.c) and the rays that stay, with the agreements across the ranks
 * between steps. */
#include <assert.h>
#include <stdlib.h>
#include <string.h>

#include <flint/fmpz_vec.h>

#include "search/cone_dd_impl.h"

hf_err_t hf_dd_stopped(void)
{
    return hf_error(HF_ERR_INTERRUPTED, "cone engine: ray enumeration stopped on request");
}

static int dd_poll(dd_ctl_t *ctl, long work)
{
    ctl->work += work;
    return dd_pairs_poll(&ctl->work, ctl->poll, ctl->poll_ctx);
}

hf_err_t hf_dd_begin(const dd_plan_t *pl, const long *wpos, long bound, dd_ctl_t *ctl,
                     rayset_t *cur)
{
    long n = pl->n, words = pl->words;
    uint64_t *Z = hf_calloc((size_t)words, sizeof *Z);
    if (!Z)
        return HF_ERR_NOMEM;
    hf_err_t err = HF_OK;
    cur->count = 0;
    for (long j = 0; j < n && err == HF_OK; j++) {
        if (wpos[j] > bound)
            continue;
        memset(Z, 0, (size_t)words * sizeof *Z);
        for (long i = 0; i < n; i++)
            if (i != j)
                bit_set(Z, i);
        err = hf_dd_rayset_push(cur, pl->start + j * n, dd_owner(ctl), Z, wpos[j], n);
    }
    free(Z);
    return err;
}

static void dd_step_clear(dd_step_t *st)
{
    if (st->s)
        _fmpz_vec_clear(st->s, st->slen);
    free(st->posl);
    free(st->negl);
    free(st->sig);
    free(st->kept);
    free(st->sg);
    free(st->have);
    hf_dd_ends_index_clear(&st->ix);
    memset(st, 0, sizeof *st);
}

/* The row at position p, and its values and signs on the rays that `mine` owns (all of
 * them when mine < 0), their vectors decoded first if they are still encoded; the other
 * rays' values are computed later, as the pairs need them (dd_s), and their signs
 * gathered from their owners (hf_dd_steps). */
static hf_err_t dd_step_signs(const dd_plan_t *pl, long p, rayset_t *cur, long *nzi, dd_step_t *st,
                              int mine, hf_cone_info_t *info)
{
    double t0 = dd_cpu();
    const hf_cone_t *c = pl->c;
    long n = pl->n, R = cur->count;
    st->p = p;
    st->R = R;
    if (R + 1 > st->slen) {
        if (st->s)
            _fmpz_vec_clear(st->s, st->slen);
        st->slen = 2 * (R + 1);
        st->s = _fmpz_vec_init(st->slen);
    }
    HF_TRY(HF_GROW(&st->sg, &st->sg_cap, R + 1));
    HF_TRY(HF_GROW(&st->have, &st->have_cap, R + 1));
    memset(st->have, 0, (size_t)R);
    const fmpz *a = c->A + pl->order[p] * n;
    /* rows have few nonzero entries (Q's terms): the dot products run over those */
    long nz = 0;
    for (long j = 0; j < n; j++)
        if (!fmpz_is_zero(a + j))
            nzi[nz++] = j;
    st->a = a;
    st->nzi = nzi;
    st->nz = nz;
    for (long i = 0; i < R; i++) {
        if (mine >= 0 && cur->owner[i] != mine)
            continue;
        HF_TRY(hf_dd_rayset_vector(cur, i));
        dot_row(st->s + i, a, RAY(cur, i), nzi, nz);
        st->sg[i] = (signed char)fmpz_sgn(st->s + i);
        st->have[i] = 1;
    }
    if (info)
        info->cpu_signs += dd_cpu() - t0;
    return HF_OK;
}

/* The lists of positive and negative rays, their folds, the index and the cells, from
 * the signs of every ray. */
static hf_err_t dd_step_lists(const rayset_t *cur, dd_step_t *st, hf_cone_info_t *info)
{
    double t0 = dd_cpu();
    long R = st->R, p = st->p;
    HF_TRY(hf_dd_ends_index(cur, p, &st->ix));
    /* each ray's support folded onto 64 bits: the popcount of two folds' union never
     * exceeds the positions in the union of the supports, which is at most the union's
     * weight (every position weighs >= 1): a pair whose folds already exceed the bound is
     * out at once */
    st->npos = st->nneg = 0;
    HF_TRY(HF_GROW(&st->sig, &st->sig_cap, R));
    HF_TRY(HF_GROW(&st->posl, &st->posl_cap, R));
    HF_TRY(HF_GROW(&st->negl, &st->negl_cap, R));
    for (long i = 0; i < R; i++) {
        int sg = st->sg[i];
        if (sg > 0) {
            st->posl[st->npos++] = i;
        } else if (sg < 0) { /* in list order: the pair loop reads them in a stream */
            st->sig[st->nneg] = cur->ends[i].fold;
            st->negl[st->nneg++] = i;
        }
    }
    long blk = hf_knob(HF_KNOB_CONE_CELL_NEGATIVES, HF_CONE_CELL_NEGATIVES);
    st->blk = blk > 0 ? blk : 1;
    st->nblk = st->nneg > 0 ? (st->nneg + st->blk - 1) / st->blk : 1;
    st->ncells = st->npos * st->nblk;
    if (info)
        info->cpu_lists += dd_cpu() - t0;
    return HF_OK;
}

/* Ray i's size after the step: a positive ray's support gains the step's position, whose
 * weight is wp. */
static inline long kept_size(const rayset_t *cur, const signed char *sg, long wp, long i)
{
    return cur->size[i] + (sg[i] > 0 ? wp : 0);
}

/* The rays of cur that stay after the step at position p go to the end of next, in order:
 * a zero ray's zero set gains position p, a positive ray's support grows by it (and may
 * then exceed the bound); the others are dropped, their slots released (the pairs are
 * done with them). Field by field over the list of the kept rays, each pass a stream
 * (docs/performance.md §16). */
static hf_err_t dd_keep(rayset_t *cur, dd_step_t *st, const long *wpos, long p, long bound,
                        rayset_t *next)
{
    long R = st->R, words = cur->words, wn = next->words, nk = 0;
    const signed char *sg = st->sg;
    HF_TRY(HF_GROW(&st->kept, &st->kept_cap, R ? R : 1));
    long *kept = st->kept;
    for (long i = 0; i < R; i++) {
        if (sg[i] < 0 || kept_size(cur, sg, wpos[p], i) > bound)
            HF_TRY(hf_dd_rayset_drop(cur, i));
        else
            kept[nk++] = i;
    }
    HF_TRY(hf_dd_rayset_reserve(next, next->count + nk));
    long b = next->count;
    for (long t = 0; t < nk; t++)
        next->loc[b + t] = cur->loc[kept[t]];
    for (long t = 0; t < nk; t++)
        next->owner[b + t] = cur->owner[kept[t]];
    for (long t = 0; t < nk; t++) {
        long i = kept[t];
        next->size[b + t] = kept_size(cur, sg, wpos[p], i);
    }
    for (long t = 0; t < nk; t++) {
        long i = kept[t];
        rayends_t e = cur->ends[i];
        if (sg[i] > 0) { /* the support gains position p, the last one so far */
            e.fold |= (uint64_t)1 << (p & 63);
            e.last = (int32_t)p;
        }
        next->ends[b + t] = e;
    }
    for (long t = 0; t < nk; t++) {
        long i = kept[t];
        uint64_t *z = next->zero + (b + t) * wn;
        memcpy(z, cur->zero + i * words, (size_t)words * sizeof *z);
        for (long w = words; w < wn; w++) /* position p opens a word */
            z[w] = 0;
        if (sg[i] == 0) /* a zero ray's zero set gains position p */
            bit_set(z, p);
    }
    next->count += nk;
    return HF_OK;
}

hf_err_t hf_dd_steps(const dd_plan_t *pl, const long *wpos, long bound, dd_ctl_t *ctl,
                     rayset_t *cur)
{
    long n = pl->n;
    hf_err_t err = HF_OK;
    rayset_t next = {.pool = cur->pool, .used = cur->used, .wmax = pl->words};
    dd_step_t st = {0};
    long *nzi = hf_malloc((size_t)(n ? n : 1) * sizeof *nzi);
    if (!nzi) {
        err = HF_ERR_NOMEM;
        if (!ctl->split)
            goto done;
        /* with a split the failure goes to the first step's agreement (or the last one) */
    }
    if (cur->count > ctl->rays_max)
        ctl->rays_max = cur->count;
    for (long p = n; p < pl->rows; p++) {
        if (err == HF_OK && dd_poll(ctl, DD_POLL_WORK))
            err = hf_dd_stopped();
        if (!ctl->split && err != HF_OK)
            goto done;
        /* With a split, the processes agree only at a dealt step, at a gather of signs and
         * after DD_AGREE_STEPS steps or DD_AGREE_PAIRS pair tests (the same on every
         * process: their rays are the same). Every collective call starts with the same
         * agreement on the status (hf_search_split_t), so a process that failed or was
         * stopped goes straight to an agreement: it meets whichever collective call the
         * others make next, and every process returns its status there. */
        if (ctl->split && (err != HF_OK || ctl->since_steps >= DD_AGREE_STEPS ||
                           ctl->since_pairs >= DD_AGREE_PAIRS)) {
            err = ctl->split->allgather(ctl->split->ctx, err, NULL, 0, NULL, NULL);
            ctl->since_steps = ctl->since_pairs = 0;
            if (err != HF_OK)
                goto done;
        }
        ctl->since_steps++;
        next.count = 0;
        next.words = stage_words(p + 1);
        if (ctl->info) { /* the rays this step starts from (the recorder reads it) */
            ctl->info->step = p;
            ctl->info->step_rays = cur->count;
        }
        /* the signs: every ray's on one process; with a split of large steps, each
         * process computes those of the rays it owns and gathers the others' (the
         * gather agrees first, so a process that failed before, whose rays may differ,
         * only agrees: every process makes the same collective calls) */
        const hf_search_split_t *sp = ctl->split;
        int split_signs = sp && sp->nranks > 1 && hf_cone_split_signs(cur->count, sp->nranks);
        if (err == HF_OK)
            err = dd_step_signs(pl, p, cur, nzi, &st, split_signs ? sp->rank : -1, ctl->info);
        if (split_signs) {
            ctl->since_steps = ctl->since_pairs = 0;
            if ((err = hf_dd_gather_signs(sp, cur, &st, err)) != HF_OK)
                goto done; /* agreed by every process */
        }
        if (err == HF_OK)
            err = dd_step_lists(cur, &st, ctl->info);
        if (err == HF_OK) {
            ctl->pairs += (double)st.npos * st.nneg;
            ctl->since_pairs += (double)st.npos * st.nneg;
        }
        if (ctl->info) {
            ctl->info->pairs = ctl->pairs; /* so far: reports, and the recorder's rounds */
            ctl->info->step_pairs = (double)st.npos * st.nneg;
        }
        int agreed = 1;
        err = hf_dd_step_pairs(pl, wpos, bound, cur, &st, ctl, err, &next, &agreed);
        if (err != HF_OK && agreed)
            goto done;
        if (err != HF_OK)
            continue; /* carried to the next step's agreement (or the last one, below) */
        assert(nzi);
        double tk = dd_cpu();
        err = dd_keep(cur, &st, wpos, p, bound, &next); /* their vectors stay where they are */
        if (ctl->info)
            ctl->info->cpu_keep += dd_cpu() - tk;
        if (err != HF_OK) {
            if (!ctl->split)
                goto done;
            continue; /* carried to the next agreement */
        }
        rayset_t tmp = *cur;
        *cur = next;
        next = tmp;
        if (cur->count > ctl->rays_max)
            ctl->rays_max = cur->count;
        if (ctl->info) {
            ctl->info->step = p + 1;
            ctl->info->step_rays = cur->count;
            ctl->info->done_pairs = ctl->pairs;
        }
    }
    /* a failure of this process's own in the last steps reaches every process here */
    if (ctl->split)
        err = ctl->split->allgather(ctl->split->ctx, err, NULL, 0, NULL, NULL);
done:
    dd_step_clear(&st);
    hf_dd_rayset_clear(&next);
    free(nzi);
    return err;
}
