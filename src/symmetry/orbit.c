/* Orbits of supports under the symmetry group (symmetry.h): the canonical form of a key
 * set, and the representative of its orbit, the smallest canonical image. The orbit is the
 * closure of the support under the generators (the group itself is not listed: it can
 * have 2^d d! elements) unless the orbit is too large to hold; then the group's elements
 * are listed by closure under the generators and each one applied. */
#include <stdlib.h>
#include <string.h>

#include "symmetry/symmetry_impl.h"

HF_SYMMETRY_STOP_PHASES(HF_STOP_DEFINE)

/* Scratch for the images of one support of m keys. */
typedef struct {
    int d;
    long m;
    int64_t *raw; /* m*d: the mapped keys before their rows are sorted */
    int64_t *img; /* m*d: an image */
    int64_t *cur; /* m*d: the orbit element being mapped */
    long *idx;    /* m: the order of the rows */
} image_t;

static void image_clear(image_t *im)
{
    free(im->idx);
    free(im->cur);
    free(im->img);
    free(im->raw);
}

static hf_err_t image_init(image_t *im, int d, long m)
{
    size_t n = (size_t)m * (size_t)d;
    im->d = d;
    im->m = m;
    im->raw = hf_malloc((n ? n : 1) * sizeof *im->raw);
    im->img = hf_malloc((n ? n : 1) * sizeof *im->img);
    im->cur = hf_malloc((n ? n : 1) * sizeof *im->cur);
    im->idx = hf_malloc((size_t)(m ? m : 1) * sizeof *im->idx);
    if (!im->raw || !im->img || !im->cur || !im->idx) {
        image_clear(im);
        return HF_ERR_NOMEM;
    }
    return HF_OK;
}

/* out = keys mapped by (perm, sign) (NULL: the identity), translated to canonical position,
 * rows sorted by hf_sort, O(m log m) (an insertion sort took 95 s on the one support of
 * 129 904 keys of chain:d=10 in span 3). out may not be im->raw. */
static hf_err_t image_of(image_t *im, const int8_t *perm, const int8_t *sign, const int64_t *keys,
                         int64_t *out)
{
    int d = im->d;
    long m = im->m;
    int64_t mn[HF_D_MAX];
    for (int j = 0; j < d; j++)
        mn[j] = INT64_MAX;
    for (long i = 0; i < m; i++)
        for (int j = 0; j < d; j++) {
            int64_t v = perm ? sign[j] * keys[i * d + perm[j]] : keys[i * d + j];
            im->raw[i * d + j] = v;
            if (v < mn[j])
                mn[j] = v;
        }
    for (long i = 0; i < m; i++) {
        im->idx[i] = i;
        for (int j = 0; j < d; j++)
            im->raw[i * d + j] -= mn[j];
    }
    hf_rows_t rows = {im->raw, d};
    HF_TRY(hf_sort(im->idx, m, hf_cmp_rows, &rows));
    for (long i = 0; i < m; i++)
        memcpy(out + i * d, im->raw + im->idx[i] * d, (size_t)d * sizeof *out);
    return HF_OK;
}

hf_err_t hf_symmetry_canonical(int d, long m, const int64_t *keys, int64_t *out)
{
    image_t im;
    HF_TRY(image_init(&im, d, m));
    hf_err_t err = image_of(&im, NULL, NULL, keys, out);
    image_clear(&im);
    return err;
}

/* out = min(out, img) lexicographically. */
static void keep_min(int64_t *out, const int64_t *img, long len)
{
    for (long i = 0; i < len; i++)
        if (img[i] != out[i]) {
            if (img[i] < out[i])
                memcpy(out, img, (size_t)len * sizeof *img);
            return;
        }
}

/* The smallest image of keys over the n elements (rows of 2d bytes, perm then sign). */
static hf_err_t orbit_min_over(image_t *im, long n, const int8_t *elems, const int64_t *keys,
                               int64_t *out)
{
    int d = im->d;
    for (long g = 0; g < n; g++) {
        const int8_t *e = elems + g * 2 * d;
        HF_TRY(image_of(im, e, e + d, keys, g ? im->img : out));
        if (g)
            keep_min(out, im->img, im->m * d);
    }
    return HF_OK;
}

hf_err_t hf_group_orbit_rep_list(int d, long n, const int8_t *elems, long m, const int64_t *keys,
                                 int64_t *out)
{
    image_t im;
    HF_TRY(image_init(&im, d, m));
    hf_err_t err = orbit_min_over(&im, n, elems, keys, out);
    image_clear(&im);
    return err;
}

/* The representative by running over the group's elements, listed by closure under the
 * generators: for an orbit too large to hold (|G| 2d bytes instead of |orbit| m d 8). */
static hf_err_t orbit_rep_by_elements(const hf_group_t *g, image_t *im, const int64_t *keys,
                                      int64_t *out)
{
    hf_err_t err = HF_OK;
    int d = g->d, W = hf_group_elem_words(d);
    size_t L = 2 * (size_t)d;
    int8_t e[2 * HF_D_MAX], h[2 * HF_D_MAX], x[2 * HF_D_MAX], *list = NULL;
    int64_t w[(2 * HF_D_MAX + 7) / 8];
    int added = 0;
    if (g->unknown || g->order > HF_GROUP_LIST_MAX)
        return hf_error(HF_ERR_LIMIT,
                        "orbit: a support of %ld keys has an orbit too large to hold, and the "
                        "group (order %ld) is too large to list",
                        im->m, g->unknown ? -1 : g->order);
    hf_ivset_t el;
    hf_ivset_init(&el, W);
    for (int j = 0; j < d; j++) {
        e[j] = (int8_t)j;
        e[d + j] = 1;
    }
    hf_group_elem_pack(d, e, w);
    if (hf_ivset_insert(&el, w, &added) < 0) {
        err = HF_ERR_NOMEM;
        goto done;
    }
    for (long i = 0; i < el.n; i++) {
        hf_group_elem_unpack(d, el.keys + i * W, e);
        for (long k = 0; k < g->ngens; k++) {
            memcpy(h, g->gperm + k * d, (size_t)d);
            memcpy(h + d, g->gsign + k * d, (size_t)d);
            hf_group_elem_compose(d, e, h, x);
            hf_group_elem_pack(d, x, w);
            if (hf_ivset_insert(&el, w, &added) < 0) {
                err = HF_ERR_NOMEM;
                goto done;
            }
        }
    }
    list = hf_malloc((size_t)el.n * L);
    if (!list) {
        err = HF_ERR_NOMEM;
        goto done;
    }
    for (long i = 0; i < el.n; i++)
        hf_group_elem_unpack(d, el.keys + i * W, list + i * L);
    err = orbit_min_over(im, el.n, list, keys, out);
done:
    free(list);
    hf_ivset_clear(&el);
    return err;
}

hf_err_t hf_group_orbit_rep(const hf_group_t *g, long m, const int64_t *keys, int64_t *out)
{
    hf_err_t err = HF_OK;
    int d = g->d, added = 0;
    if (m < 1)
        return hf_error(HF_ERR_INPUT, "orbit: size %ld: must be >= 1", m);
    long len = m * d;
    size_t bytes = (size_t)len * sizeof *out;
    image_t im;
    hf_ivset_t orb;
    HF_TRY(image_init(&im, d, m));
    hf_ivset_init(&orb, (int)len);
    HF_CHECK(err, image_of(&im, NULL, NULL, keys, out), done);
    if (g->ngens == 0)
        goto done;
    /* the orbit is the closure of the support under the generators: the group itself is
     * not listed (it can have 2^d d! elements) unless the orbit is too large to hold */
    if (hf_ivset_insert(&orb, out, &added) < 0) {
        err = HF_ERR_NOMEM;
        goto done;
    }
    for (long i = 0; i < orb.n; i++) {
        /* a copy: inserting may move the set's keys */
        memcpy(im.cur, orb.keys + i * len, bytes);
        for (long k = 0; k < g->ngens; k++) {
            HF_CHECK(err, image_of(&im, g->gperm + k * d, g->gsign + k * d, im.cur, im.img), done);
            if (hf_ivset_insert(&orb, im.img, &added) < 0) {
                err = HF_ERR_NOMEM;
                goto done;
            }
            if (added && (size_t)orb.n * bytes >
                             (size_t)hf_knob(HF_KNOB_ORBIT_BYTES_MAX, HF_GROUP_ORBIT_BYTES)) {
                err = orbit_rep_by_elements(g, &im, keys, out);
                goto done;
            }
            if (added)
                keep_min(out, im.img, len);
        }
    }
done:
    hf_ivset_clear(&orb);
    image_clear(&im);
    return err;
}
