/* Exact rationals as text: the strict "[-]digits[/digits]" form used in target files and
 * options, parsed into canonical fmpq and printed back as "p" or "p/q". */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include <flint/fmpz.h>

#include "headfuse/target.h"

/* Number of leading ASCII digits of s. */
static size_t digit_run(const char *s)
{
    size_t n = 0;
    while (isdigit((unsigned char)s[n]))
        n++;
    return n;
}

/* Set z from the n digits at s (already checked to be digits). */
static hf_err_t set_digits(fmpz_t z, const char *s, size_t n)
{
    char *buf = hf_malloc(n + 1);
    if (!buf)
        return HF_ERR_NOMEM;
    memcpy(buf, s, n);
    buf[n] = '\0';
    int bad = fmpz_set_str(z, buf, 10);
    free(buf);
    return bad ? hf_error(HF_ERR_INTERNAL, "fmpz_set_str rejected a digit string") : HF_OK;
}

/* The shape "[-]digits[/digits]" of the whole of s: the numerator's digits at *num (n of
 * them), the denominator's at *den (nden; NULL when there is no '/'). 0 if s has
 * another shape. */
static int rational_shape(const char *s, const char **num, size_t *nnum, const char **den,
                          size_t *nden)
{
    const char *p = s + (*s == '-');
    *num = p;
    *nnum = digit_run(p);
    *den = NULL;
    *nden = 0;
    if (*nnum > 0 && p[*nnum] == '/') {
        *den = p + *nnum + 1;
        *nden = digit_run(*den);
    }
    const char *end = *den ? *den + *nden : p + *nnum;
    return *nnum > 0 && !(*den && *nden == 0) && *end == '\0';
}

/* 1 if the n digits at s are all zeros. */
static int all_zeros(const char *s, size_t n)
{
    return strspn(s, "0") >= n;
}

int hf_rational_syntax_ok(const char *s)
{
    const char *num, *den;
    size_t nnum, nden;
    return s && rational_shape(s, &num, &nnum, &den, &nden) && !(den && all_zeros(den, nden));
}

hf_err_t hf_rational_parse(fmpq_t out, const char *s)
{
    if (!s)
        return hf_error(HF_ERR_INPUT, "missing rational");
    if (!*s)
        return hf_error(HF_ERR_INPUT, "empty string is not a rational (expected p or p/q)");
    /* Validate the whole string before converting: FLINT/GMP would accept spaces. */
    const char *p, *den;
    size_t nnum, nden;
    int neg = *s == '-';
    if (!rational_shape(s, &p, &nnum, &den, &nden))
        return hf_error(HF_ERR_INPUT,
                        "'%.60s%s' is not a rational: expected p or p/q with integers written "
                        "[-]digits, q positive, no spaces",
                        s, strlen(s) > 60 ? "..." : "");

    fmpz_t num, q;
    fmpz_init(num);
    fmpz_init(q);
    hf_err_t err = set_digits(num, p, nnum);
    if (err == HF_OK) {
        if (den)
            err = set_digits(q, den, nden);
        else
            fmpz_one(q);
    }
    if (err == HF_OK && fmpz_is_zero(q))
        err = hf_error(HF_ERR_INPUT, "'%.60s%s': denominator is zero", s,
                       strlen(s) > 60 ? "..." : "");
    if (err == HF_OK) {
        if (neg)
            fmpz_neg(num, num);
        fmpz_set(fmpq_numref(out), num);
        fmpz_set(fmpq_denref(out), q);
        fmpq_canonicalise(out);
    }
    fmpz_clear(q);
    fmpz_clear(num);
    return err;
}

char *hf_rational_str(const fmpq_t x)
{
    /* sizeinbase may exceed the true length by one; add room for '-', '/' and NUL. */
    size_t n = fmpz_sizeinbase(fmpq_numref(x), 10) + fmpz_sizeinbase(fmpq_denref(x), 10) + 3;
    char *buf = hf_malloc(n);
    if (!buf)
        return NULL;
    fmpq_get_str(buf, 10, x);
    return buf;
}
