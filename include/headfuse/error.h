/* Error codes and the last error message of this process.
 *
 * Every fallible library function returns hf_err_t. On failure it also records one
 * human-readable message that names the file, option or field concerned, e.g.
 * "data/t.json: heads[0].atoms[1].weight: must be positive". Outcomes such as
 * "this support is infeasible" are results, never errors. */
#ifndef HEADFUSE_ERROR_H
#define HEADFUSE_ERROR_H

/* X-macro: code, exit status, short description. Exit status 2 means "bad input".
 * Exit status 1 is no error but an answer "no", as for grep and cmp: HF_EXIT_NO. */
#define HF_ERROR_TABLE(X)                                                                          \
    X(HF_OK, 0, "success")                                                                         \
    X(HF_ERR_INPUT, 2, "bad input")                                                                \
    X(HF_ERR_NOMEM, 3, "out of memory")                                                            \
    X(HF_ERR_IO, 4, "input/output error")                                                          \
    X(HF_ERR_LIMIT, 5, "problem exceeds a limit")                                                  \
    X(HF_ERR_CORRUPT, 6, "corrupt or inconsistent data file")                                      \
    X(HF_ERR_MPI, 7, "MPI failure")                                                                \
    X(HF_ERR_INTERRUPTED, 75, "interrupted by a signal; resumable")                                \
    X(HF_ERR_INTERNAL, 70, "internal error")

/* The exit status of a command whose answer is "no" (not an error): `headfuse check` on
 * an infeasible key set, `headfuse approx` when a budget with a known exact head misses
 * rounding level. Distinct from every status of HF_ERROR_TABLE. */
#define HF_EXIT_NO 1

typedef enum {
#define HF_ERROR_ENUM(code, status, text) code,
    HF_ERROR_TABLE(HF_ERROR_ENUM)
#undef HF_ERROR_ENUM
} hf_err_t;

/* Short description of an error code ("bad input"). Never NULL. */
const char *hf_err_str(hf_err_t err);

/* Process exit status for an error code (HF_ERR_INPUT -> 2). */
int hf_err_exit_status(hf_err_t err);

/* Record the message of the error being returned (printf-style) and return err, so a
 * caller can write `return hf_error(HF_ERR_INPUT, "%s: d: must be 1..64", path);`. */
hf_err_t hf_error(hf_err_t err, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Like hf_error, for a process that stops because *another* MPI rank failed: the
 * message only relays that fact, and the failing rank holds the real one. */
hf_err_t hf_error_relay(hf_err_t err, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* 1 if the recorded message was set by hf_error_relay (and not replaced since). */
int hf_error_is_relayed(void);

/* Prefix the recorded message with "prefix: " (adds context while propagating). */
void hf_error_prefix(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* The last recorded message ("" if none). Valid until the next hf_error call. */
const char *hf_error_msg(void);

/* Forget the recorded message. */
void hf_error_clear(void);

/* Propagate: evaluate expr, return its error code if it is not HF_OK. */
#define HF_TRY(expr)                                                                               \
    do {                                                                                           \
        hf_err_t hf_try_err_ = (expr);                                                             \
        if (hf_try_err_ != HF_OK)                                                                  \
            return hf_try_err_;                                                                    \
    } while (0)

/* Propagate inside a function with a cleanup label: store into `err` and jump. */
#define HF_CHECK(err, expr, label)                                                                 \
    do {                                                                                           \
        (err) = (expr);                                                                            \
        if ((err) != HF_OK)                                                                        \
            goto label;                                                                            \
    } while (0)

/* Checked allocation helpers: on failure they record an HF_ERR_NOMEM message and
 * return NULL. hf_fail_after() makes the Nth allocation from now fail (fault
 * injection for tests; 0 disables). */
void *hf_malloc(size_t size);
void *hf_calloc(size_t n, size_t size);
void *hf_realloc(void *p, size_t size);
char *hf_strdup(const char *s);
void hf_fail_after(long n);
/* Allocations made through hf_malloc & co. by this process so far (to size a sweep). */
long hf_alloc_calls(void);

#endif
