/* The error table, the last-error message and checked allocation. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "headfuse/error.h"

/* One message per process: ranks are processes and the library is single-threaded. */
static char last_msg[2048];
static int last_relayed; /* last_msg only says that another rank failed */
static long fail_countdown;
static long alloc_calls; /* hf_malloc, hf_calloc and hf_realloc calls so far */

const char *hf_err_str(hf_err_t err)
{
    switch (err) {
#define HF_ERROR_CASE(code, status, text)                                                          \
    case code:                                                                                     \
        return text;
        HF_ERROR_TABLE(HF_ERROR_CASE)
#undef HF_ERROR_CASE
    }
    return "unknown error";
}

int hf_err_exit_status(hf_err_t err)
{
    switch (err) {
#define HF_ERROR_STATUS(code, status, text)                                                        \
    case code:                                                                                     \
        return status;
        HF_ERROR_TABLE(HF_ERROR_STATUS)
#undef HF_ERROR_STATUS
    }
    return 70; /* not in the table: internal; never HF_EXIT_NO, which is an answer */
}

static void record(int relayed, const char *fmt, va_list ap)
{
    vsnprintf(last_msg, sizeof last_msg, fmt, ap);
    last_relayed = relayed;
}

hf_err_t hf_error(hf_err_t err, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    record(0, fmt, ap);
    va_end(ap);
    return err;
}

hf_err_t hf_error_relay(hf_err_t err, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    record(1, fmt, ap);
    va_end(ap);
    return err;
}

int hf_error_is_relayed(void)
{
    return last_relayed;
}

void hf_error_prefix(const char *fmt, ...)
{
    char prefix[1024], old[sizeof last_msg];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(prefix, sizeof prefix, fmt, ap);
    va_end(ap);
    memcpy(old, last_msg, sizeof old);
    /* assemble by hand: snprintf of two large buffers trips -Wformat-truncation */
    size_t np = strlen(prefix), no = strlen(old), cap = sizeof last_msg - 1;
    size_t n = 0;
    for (size_t i = 0; i < np && n < cap; i++)
        last_msg[n++] = prefix[i];
    for (const char *sep = ": "; *sep && n < cap; sep++)
        last_msg[n++] = *sep;
    for (size_t i = 0; i < no && n < cap; i++)
        last_msg[n++] = old[i];
    last_msg[n] = '\0';
}

const char *hf_error_msg(void)
{
    return last_msg;
}

void hf_error_clear(void)
{
    last_msg[0] = '\0';
    last_relayed = 0;
}

void hf_fail_after(long n)
{
    fail_countdown = n;
}

long hf_alloc_calls(void)
{
    return alloc_calls;
}

/* Count the allocation; true when fault injection says it must fail. */
static int injected_failure(void)
{
    alloc_calls++;
    if (fail_countdown <= 0)
        return 0;
    return --fail_countdown == 0;
}

void *hf_malloc(size_t size)
{
    void *p = injected_failure() ? NULL : malloc(size ? size : 1);
    if (!p)
        hf_error(HF_ERR_NOMEM, "out of memory allocating %zu bytes", size);
    return p;
}

void *hf_calloc(size_t n, size_t size)
{
    void *p = injected_failure() ? NULL : calloc(n ? n : 1, size ? size : 1);
    if (!p)
        hf_error(HF_ERR_NOMEM, "out of memory allocating %zu x %zu bytes", n, size);
    return p;
}

void *hf_realloc(void *old, size_t size)
{
    void *p = injected_failure() ? NULL : realloc(old, size ? size : 1);
    if (!p)
        hf_error(HF_ERR_NOMEM, "out of memory allocating %zu bytes", size);
    return p;
}

char *hf_strdup(const char *s)
{
    size_t n = strlen(s) + 1;
    char *p = hf_malloc(n);
    if (p)
        memcpy(p, s, n);
    return p;
}
