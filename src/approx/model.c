/* Approximate heads with real parameters: storage, conversion from exact heads,
 * evaluation, the sample set, the residual with its analytic Jacobian, the objective
 * with its gradient, and atom deletion and splitting used by the warm starts. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <flint/fmpz.h>

#include "approx/approx_impl.h"

/* ---------------------------------------------------------------- heads */

hf_err_t hf_approx_head_init(hf_approx_head_t *h, int m, int d, int dv)
{
    memset(h, 0, sizeof *h);
    if (m < 1 || m > HF_APPROX_ATOMS_MAX || d < 1 || d > HF_D_MAX || dv < 1 || dv > HF_DV_MAX)
        return hf_error(HF_ERR_INTERNAL, "approximate head: bad size m=%d d=%d dv=%d", m, d, dv);
    h->keys = hf_calloc((size_t)m * d, sizeof *h->keys);
    h->biases = hf_calloc((size_t)m, sizeof *h->biases);
    h->values = hf_calloc((size_t)m * dv, sizeof *h->values);
    if (!h->keys || !h->biases || !h->values) {
        hf_approx_head_clear(h);
        return HF_ERR_NOMEM;
    }
    h->m = m;
    h->d = d;
    h->dv = dv;
    return HF_OK;
}

void hf_approx_head_clear(hf_approx_head_t *h)
{
    if (!h)
        return;
    free(h->keys);
    free(h->biases);
    free(h->values);
    memset(h, 0, sizeof *h);
}

void hf_approx_head_init_empty(hf_approx_head_t *h)
{
    memset(h, 0, sizeof *h);
}

/* Replace dst's value by tmp's (moved; tmp becomes empty). */
static void head_move(hf_approx_head_t *dst, hf_approx_head_t *tmp)
{
    hf_approx_head_clear(dst);
    *dst = *tmp;
    hf_approx_head_init_empty(tmp);
}

hf_err_t hf_approx_head_copy(hf_approx_head_t *dst, const hf_approx_head_t *src)
{
    hf_approx_head_t tmp; /* built aside: dst keeps its value on failure */
    HF_TRY(hf_approx_head_init(&tmp, src->m, src->d, src->dv));
    memcpy(tmp.keys, src->keys, (size_t)src->m * src->d * sizeof *src->keys);
    memcpy(tmp.biases, src->biases, (size_t)src->m * sizeof *src->biases);
    memcpy(tmp.values, src->values, (size_t)src->m * src->dv * sizeof *src->values);
    head_move(dst, &tmp);
    return HF_OK;
}

/* log(|x|) of a nonzero integer of any size: mantissa and binary exponent separately. */
static double log_fmpz(const fmpz_t x)
{
    slong e;
    double mant = fmpz_get_d_2exp(&e, x);
    return log(fabs(mant)) + (double)e * M_LN2;
}

hf_err_t hf_approx_head_from_exact(hf_approx_head_t *out, const hf_head_t *h)
{
    if (h->natoms < 1 || h->natoms > HF_APPROX_ATOMS_MAX)
        return hf_error(HF_ERR_LIMIT, "exact head with %ld atoms: approximations take 1..%d",
                        h->natoms, HF_APPROX_ATOMS_MAX);
    hf_approx_head_t tmp;
    HF_TRY(hf_approx_head_init(&tmp, (int)h->natoms, h->d, h->dv));
    for (long i = 0; i < h->natoms; i++) {
        for (int j = 0; j < h->d; j++)
            tmp.keys[i * h->d + j] = (double)h->keys[i * h->d + j];
        const fmpq *w = h->weights + i;
        tmp.biases[i] = log_fmpz(fmpq_numref(w)) - log_fmpz(fmpq_denref(w));
        for (int j = 0; j < h->dv; j++)
            tmp.values[i * h->dv + j] = fmpq_get_d(h->values + i * h->dv + j);
    }
    head_move(out, &tmp);
    return HF_OK;
}

/* Softmax of the logits b_i + k_i.q over the atoms (skip: an atom left out, or -1);
 * p[m] gets the probabilities (0 for the skipped atom), f[dv] the head's value. */
static void head_softmax(const hf_approx_head_t *h, const double *q, int skip, double *p, double *f)
{
    int m = h->m, d = h->d, dv = h->dv;
    double lmax = -INFINITY, z = 0;
    for (int i = 0; i < m; i++) {
        if (i == skip) {
            p[i] = -INFINITY;
            continue;
        }
        double l = h->biases[i];
        const double *k = h->keys + (size_t)i * d;
        for (int a = 0; a < d; a++)
            l += k[a] * q[a];
        p[i] = l;
        if (l > lmax)
            lmax = l;
    }
    for (int i = 0; i < m; i++) {
        p[i] = i == skip ? 0.0 : exp(p[i] - lmax);
        z += p[i];
    }
    for (int j = 0; j < dv; j++)
        f[j] = 0;
    for (int i = 0; i < m; i++) {
        p[i] /= z;
        const double *v = h->values + (size_t)i * dv;
        for (int j = 0; j < dv; j++)
            f[j] += p[i] * v[j];
    }
}

hf_err_t hf_approx_head_eval(const hf_approx_head_t *h, const double *q, double *out)
{
    double *p = hf_malloc((size_t)h->m * sizeof *p);
    if (!p)
        return HF_ERR_NOMEM;
    head_softmax(h, q, -1, p, out);
    free(p);
    return HF_OK;
}

long hf_approx_nparams(int m, int d, int dv)
{
    return (long)m * (d + 1 + dv);
}

void hf_approx_head_pack(const hf_approx_head_t *h, double *x)
{
    int d = h->d, dv = h->dv, stride = d + 1 + dv;
    for (int i = 0; i < h->m; i++) {
        double *xi = x + (size_t)i * stride;
        memcpy(xi, h->keys + (size_t)i * d, (size_t)d * sizeof *xi);
        xi[d] = h->biases[i];
        memcpy(xi + d + 1, h->values + (size_t)i * dv, (size_t)dv * sizeof *xi);
    }
}

void hf_approx_head_unpack(hf_approx_head_t *h, const double *x)
{
    int d = h->d, dv = h->dv, stride = d + 1 + dv;
    for (int i = 0; i < h->m; i++) {
        const double *xi = x + (size_t)i * stride;
        memcpy(h->keys + (size_t)i * d, xi, (size_t)d * sizeof *xi);
        h->biases[i] = xi[d];
        memcpy(h->values + (size_t)i * dv, xi + d + 1, (size_t)dv * sizeof *xi);
    }
}

void hf_approx_head_delete(hf_approx_head_t *h, int i)
{
    int d = h->d, dv = h->dv, rest = h->m - 1 - i;
    memmove(h->keys + (size_t)i * d, h->keys + (size_t)(i + 1) * d,
            (size_t)rest * d * sizeof *h->keys);
    memmove(h->biases + i, h->biases + i + 1, (size_t)rest * sizeof *h->biases);
    memmove(h->values + (size_t)i * dv, h->values + (size_t)(i + 1) * dv,
            (size_t)rest * dv * sizeof *h->values);
    h->m--;
}

hf_err_t hf_approx_head_split_to(hf_approx_head_t *h, int m)
{
    if (m <= h->m)
        return HF_OK;
    if (m > HF_APPROX_ATOMS_MAX)
        return hf_error(HF_ERR_LIMIT, "approximate head: more than %d atoms", HF_APPROX_ATOMS_MAX);
    int d = h->d, dv = h->dv;
    long cap = h->m; /* an atom is d keys, one bias and dv values */
    HF_TRY(hf_grow_arrays(
        &cap, m, 3, (void **const[]){(void **)&h->keys, (void **)&h->biases, (void **)&h->values},
        (const size_t[]){(size_t)d * sizeof *h->keys, sizeof *h->biases,
                         (size_t)dv * sizeof *h->values}));
    while (h->m < m) {
        int big = 0;
        for (int i = 1; i < h->m; i++)
            if (h->biases[i] > h->biases[big])
                big = i;
        /* two copies with half the weight each: the same function */
        h->biases[big] -= M_LN2;
        int n = h->m;
        memcpy(h->keys + (size_t)n * d, h->keys + (size_t)big * d, (size_t)d * sizeof *h->keys);
        h->biases[n] = h->biases[big];
        memcpy(h->values + (size_t)n * dv, h->values + (size_t)big * dv,
               (size_t)dv * sizeof *h->values);
        h->m++;
    }
    return HF_OK;
}

/* ---------------------------------------------------------------- samples */

void hf_approx_data_init(hf_approx_data_t *s)
{
    memset(s, 0, sizeof *s);
}

hf_err_t hf_approx_data_make(hf_approx_data_t *s, const hf_target_t *t, long n, double sigma,
                             uint64_t seed)
{
    if (n < 1 || n > HF_APPROX_SAMPLES_MAX)
        return hf_error(HF_ERR_INPUT, "samples: must be 1..%ld", HF_APPROX_SAMPLES_MAX);
    if (!(sigma > 0) || !isfinite(sigma))
        return hf_error(HF_ERR_INPUT, "sigma: must be a positive number");
    hf_approx_data_t x; /* built aside: s keeps its value on failure */
    hf_approx_data_init(&x);
    x.q = hf_malloc((size_t)n * t->d * sizeof *x.q);
    x.t = hf_malloc((size_t)n * t->dv * sizeof *x.t);
    if (!x.q || !x.t) {
        hf_approx_data_clear(&x);
        return HF_ERR_NOMEM;
    }
    x.n = n;
    x.d = t->d;
    x.dv = t->dv;
    hf_rng_t rng;
    hf_rng_seed(&rng, seed);
    double sum = 0;
    for (long i = 0; i < n; i++) {
        double *q = x.q + i * t->d, *y = x.t + i * t->dv;
        for (int j = 0; j < t->d; j++)
            q[j] = sigma * hf_rng_normal(&rng);
        hf_target_eval(t, q, y);
        for (int j = 0; j < t->dv; j++)
            sum += y[j] * y[j];
    }
    x.target_rms = sqrt(sum / ((double)n * t->dv));
    hf_approx_data_clear(s);
    *s = x;
    return HF_OK;
}

void hf_approx_data_clear(hf_approx_data_t *s)
{
    if (!s)
        return;
    free(s->q);
    free(s->t);
    hf_approx_data_init(s);
}

/* ---------------------------------------------------------------- error, residual */

/* mse of h on s with atom `skip` left out (-1: none). work: m + dv doubles. */
static double mse_skip(const hf_approx_head_t *h, const hf_approx_data_t *s, int skip, double *work)
{
    double *p = work, *f = work + h->m, sum = 0;
    for (long n = 0; n < s->n; n++) {
        head_softmax(h, s->q + n * s->d, skip, p, f);
        const double *y = s->t + n * s->dv;
        for (int j = 0; j < s->dv; j++)
            sum += (f[j] - y[j]) * (f[j] - y[j]);
    }
    return sum / ((double)s->n * s->dv);
}

hf_err_t hf_approx_mse(const hf_approx_head_t *h, const hf_approx_data_t *s, double *mse)
{
    double *work = hf_malloc((size_t)(h->m + h->dv) * sizeof *work);
    if (!work)
        return HF_ERR_NOMEM;
    *mse = mse_skip(h, s, -1, work);
    free(work);
    return HF_OK;
}

hf_err_t hf_approx_least_useful(const hf_approx_head_t *h, const hf_approx_data_t *s, int *atom,
                                double *mse)
{
    double *work = hf_malloc((size_t)(h->m + h->dv) * sizeof *work);
    if (!work)
        return HF_ERR_NOMEM;
    *atom = -1;
    *mse = INFINITY;
    for (int i = 0; i < h->m; i++) {
        double e = mse_skip(h, s, i, work);
        if (isnan(e))
            e = INFINITY;            /* NaN never wins */
        if (*atom < 0 || e < *mse) { /* the first of equals wins */
            *atom = i;
            *mse = e;
        }
    }
    free(work);
    return HF_OK;
}

void hf_approx_residual(const hf_approx_head_t *h, const hf_approx_data_t *s, double *r,
                        double *jac, long ld, double *work)
{
    int m = h->m, d = h->d, dv = h->dv, stride = d + 1 + dv;
    double w = 1.0 / sqrt((double)s->n * dv);
    double *p = work, *f = work + m;
    for (long n = 0; n < s->n; n++) {
        const double *q = s->q + n * d, *y = s->t + n * dv;
        head_softmax(h, q, -1, p, f);
        for (int j = 0; j < dv; j++)
            r[n * dv + j] = w * (f[j] - y[j]);
        if (!jac)
            continue;
        for (int i = 0; i < m; i++) {
            double *col = jac + (size_t)i * stride * ld;
            const double *v = h->values + (size_t)i * dv;
            for (int j = 0; j < dv; j++) {
                long row = n * dv + j;
                double c = w * p[i] * (v[j] - f[j]);
                for (int a = 0; a < d; a++)
                    col[row + a * ld] = c * q[a];
                col[row + d * ld] = c;
                for (int jj = 0; jj < dv; jj++)
                    col[row + (d + 1 + jj) * ld] = jj == j ? w * p[i] : 0.0;
            }
        }
    }
}

double hf_approx_objective(const hf_approx_head_t *h, const hf_approx_data_t *s, double *grad,
                           double *work)
{
    int m = h->m, d = h->d, dv = h->dv, stride = d + 1 + dv;
    double w = 1.0 / sqrt((double)s->n * dv);
    double *p = work, *f = work + m, *e = work + m + dv, obj = 0;
    memset(grad, 0, (size_t)m * stride * sizeof *grad);
    for (long n = 0; n < s->n; n++) {
        const double *q = s->q + n * d, *y = s->t + n * dv;
        head_softmax(h, q, -1, p, f);
        for (int j = 0; j < dv; j++) {
            e[j] = w * (f[j] - y[j]);
            obj += e[j] * e[j];
        }
        for (int i = 0; i < m; i++) {
            const double *v = h->values + (size_t)i * dv;
            double *g = grad + (size_t)i * stride, sdot = 0;
            for (int j = 0; j < dv; j++) {
                sdot += (v[j] - f[j]) * e[j];
                g[d + 1 + j] += w * p[i] * e[j];
            }
            double c = w * p[i] * sdot;
            for (int a = 0; a < d; a++)
                g[a] += c * q[a];
            g[d] += c;
        }
    }
    return 0.5 * obj;
}

int hf_approx_is_rounding(double mse, double target_rms)
{
    double scale = target_rms > 1 ? target_rms : 1;
    return isfinite(mse) && sqrt(mse) <= HF_APPROX_ROUNDING_RMS * scale;
}
