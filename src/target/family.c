/* Built-in target families ("wd:d=3", "chain:d=2", "multi:d=2,k=3", "wdw:d=4"): parse the
 * --family spec strictly and build the target, named by the canonical spec. */
#include <limits.h>
#include <stdio.h>
#include <string.h>

#include "headfuse/target.h"

#define FAMILY_NAME(id, name, takes_k) name,
#define FAMILY_TAKES_K(id, name, takes_k) takes_k,
static const char *const family_names[] = {HF_FAMILY_TABLE(FAMILY_NAME)};
static const int family_takes_k[] = {HF_FAMILY_TABLE(FAMILY_TAKES_K)};

int hf_family_find(const char *name, size_t n)
{
    for (int i = 0; i < HF_NFAMILIES; i++)
        if (strlen(family_names[i]) == n && !strncmp(name, family_names[i], n))
            return i;
    return -1;
}

const char *hf_family_name(hf_family_t f)
{
    return family_names[f];
}

int hf_family_takes_k(hf_family_t f)
{
    return family_takes_k[f];
}

const char *hf_family_list(void)
{
    static char list[128]; /* built once from the table; single-threaded library */
    if (!list[0])
        for (int i = 0; i < HF_NFAMILIES; i++) {
            size_t n = strlen(list);
            snprintf(list + n, sizeof list - n, "%s%s", i ? ", " : "", family_names[i]);
        }
    return list;
}

/* Parse the n characters at s as [-]digits. Returns 0 if they are not an integer;
 * values beyond an int become INT_MAX (the range check then rejects them). */
static int parse_option_int(const char *s, size_t n, int *out)
{
    long v;
    switch (hf_parse_long(s, (long)n, INT_MIN, INT_MAX, &v)) {
    case HF_PARSE_OK:
        *out = (int)v;
        return 1;
    case HF_PARSE_RANGE:
        *out = INT_MAX;
        return 1;
    default:
        return 0;
    }
}

/* Append one two-or-more-atom head: keys m*dir for m = 0..n-1 (dir a 0/1 vector given by
 * up to two coordinates), weights 1, values val[m]. The head is sized once (a push per
 * atom rebuilds its storage each time: quadratic, and a job sweeping multi:d=1..64,
 * k=2..64 spent most of its loading time there). */
static hf_err_t push_ray_head(hf_target_t *t, int c1, int c2, int n, const long *val)
{
    hf_head_t h;
    hf_head_init(&h, t->d, 1);
    hf_err_t err = hf_head_resize(&h, n); /* keys 0, weights 1, values 0 */
    for (int m = 0; m < n && err == HF_OK; m++) {
        h.keys[(long)m * t->d + c1] = m;
        if (c2 >= 0)
            h.keys[(long)m * t->d + c2] = m;
        fmpq_set_si(h.values + m, val[m], 1);
    }
    if (err == HF_OK)
        err = hf_target_add_head(t, &h);
    hf_head_clear(&h);
    return err;
}

static hf_err_t build_family(hf_target_t *t, hf_family_t fam, int d, int k)
{
    long val[HF_FAMILY_K_MAX];
    hf_err_t err = HF_OK;
    switch (fam) {
    case HF_FAMILY_WD:
    case HF_FAMILY_WDW:
        /* sigma(q_j), or j * sigma(q_j) for wdw (j 1-based) */
        for (int j = 0; j < d && err == HF_OK; j++) {
            val[0] = 0;
            val[1] = fam == HF_FAMILY_WD ? 1 : j + 1;
            err = push_ray_head(t, j, -1, 2, val);
        }
        break;
    case HF_FAMILY_CHAIN:
        val[0] = 0;
        val[1] = 1;
        for (int j = 0; j < d && err == HF_OK; j++)
            err = push_ray_head(t, j, -1, 2, val);
        for (int j = 0; j + 1 < d && err == HF_OK; j++)
            err = push_ray_head(t, j, j + 1, 2, val);
        break;
    case HF_FAMILY_MULTI:
        for (int m = 0; m < k; m++)
            val[m] = m;
        for (int j = 0; j < d && err == HF_OK; j++)
            err = push_ray_head(t, j, -1, k, val);
        break;
    case HF_NFAMILIES: /* not a family: hf_family_find never gives it */
        return hf_error(HF_ERR_INTERNAL, "family %d out of range", (int)fam);
    }
    return err;
}

hf_err_t hf_target_from_family(hf_target_t *t, const char *spec)
{
    if (!spec)
        spec = "";
    const char *colon = strchr(spec, ':');
    size_t nlen = colon ? (size_t)(colon - spec) : strlen(spec);
    if (nlen == 0)
        return hf_error(HF_ERR_INPUT,
                        "--family %s: missing family name (expected NAME:d=N[,k=K], NAME one "
                        "of %s)",
                        spec, hf_family_list());
    int fam = hf_family_find(spec, nlen);
    if (fam < 0)
        return hf_error(HF_ERR_INPUT, "--family %s: unknown family '%.*s' (known: %s)", spec,
                        (int)nlen, spec, hf_family_list());

    int d = 0, k = HF_FAMILY_K_DEFAULT, have_d = 0, have_k = 0;
    const char *opt = colon ? colon + 1 : NULL;
    while (opt && *opt) {
        const char *comma = strchr(opt, ',');
        size_t olen = comma ? (size_t)(comma - opt) : strlen(opt);
        const char *eq = memchr(opt, '=', olen);
        if (!eq)
            return hf_error(HF_ERR_INPUT, "--family %s: expected KEY=VALUE, got '%.*s'", spec,
                            (int)olen, opt);
        size_t klen = (size_t)(eq - opt), vlen = olen - klen - 1;
        int is_d = klen == 1 && opt[0] == 'd', is_k = klen == 1 && opt[0] == 'k';
        if (!is_d && !is_k)
            return hf_error(HF_ERR_INPUT, "--family %s: unknown option '%.*s' (known: d, k)", spec,
                            (int)klen, opt);
        if ((is_d && have_d) || (is_k && have_k))
            return hf_error(HF_ERR_INPUT, "--family %s: %c given twice", spec, opt[0]);
        int *dst = is_d ? &d : &k;
        if (!parse_option_int(eq + 1, vlen, dst))
            return hf_error(HF_ERR_INPUT, "--family %s: %c is not an integer", spec, opt[0]);
        if (is_d)
            have_d = 1;
        else
            have_k = 1;
        if (!comma)
            break;
        opt = comma + 1;
        if (!*opt)
            return hf_error(HF_ERR_INPUT, "--family %s: empty option after ','", spec);
    }
    if (!have_d)
        return hf_error(HF_ERR_INPUT, "--family %s: missing d=N", spec);
    if (d < 1 || d > HF_D_MAX)
        return hf_error(HF_ERR_INPUT, "--family %s: d must be 1..%d", spec, HF_D_MAX);
    if (have_k && !family_takes_k[fam])
        return hf_error(HF_ERR_INPUT, "--family %s: k applies only to multi", spec);
    if (k < HF_FAMILY_K_MIN || k > HF_FAMILY_K_MAX)
        return hf_error(HF_ERR_INPUT, "--family %s: k must be %d..%d", spec, HF_FAMILY_K_MIN,
                        HF_FAMILY_K_MAX);

    /* The name is the canonical spec, so equal targets get equal names ("multi:d=2"
     * becomes "multi:d=2,k=3"). */
    char name[64];
    if (family_takes_k[fam])
        snprintf(name, sizeof name, "%s:d=%d,k=%d", family_names[fam], d, k);
    else
        snprintf(name, sizeof name, "%s:d=%d", family_names[fam], d);
    hf_target_t tmp;
    hf_err_t err = hf_target_init(&tmp, name, d, 1);
    if (err == HF_OK)
        err = build_family(&tmp, (hf_family_t)fam, d, k);
    if (err == HF_OK)
        hf_target_swap(t, &tmp);
    hf_target_clear(&tmp);
    return err;
}
