/* The one test-control seam (control.h): the knobs' values and the program's one reading of
 * its environment. */
#include <limits.h>
#include <stdlib.h>

#include "headfuse/control.h"
#include "headfuse/core.h"

static const struct {
    const char *env;
    long least;
    int strict;
} knob_rows[HF_KNOB_COUNT] = {
#define HF_KNOB_ROW(id, ename, eleast, estrict, text)                                              \
    [HF_KNOB_##id] = {.env = ename, .least = eleast, .strict = estrict},
    HF_KNOB_TABLE(HF_KNOB_ROW)
#undef HF_KNOB_ROW
};

static const char *const env_names[HF_ENV_COUNT] = {
#define HF_ENV_ROW(id, name, text) [HF_ENV_##id] = name,
    HF_ENV_TABLE(HF_ENV_ROW)
#undef HF_ENV_ROW
};

/* the knobs set, and their values: this process's, never shared between threads' writes
 * (set at start or by a test between cases) */
static struct {
    unsigned char set[HF_KNOB_COUNT];
    long value[HF_KNOB_COUNT];
} knobs;

long hf_knob(hf_knob_t k, long dflt)
{
    return knobs.set[k] ? knobs.value[k] : dflt;
}

void hf_knob_set(hf_knob_t k, long value)
{
    knobs.set[k] = 1;
    knobs.value[k] = value;
}

void hf_knob_unset(hf_knob_t k)
{
    knobs.set[k] = 0;
}

const char *hf_env(hf_env_t v)
{
    return getenv(env_names[v]);
}

const char *hf_env_name(hf_env_t v)
{
    return env_names[v];
}

hf_err_t hf_control_from_env(void)
{
    for (int k = 0; k < HF_KNOB_COUNT; k++) {
        const char *name = knob_rows[k].env, *v = name ? getenv(name) : NULL;
        long n = 0;
        if (!v)
            continue;
        int ok = hf_parse_long(v, -1, knob_rows[k].least, LONG_MAX, &n) == HF_PARSE_OK;
        if (knob_rows[k].strict && !*v)
            ok = 1, n = 0;
        if (ok)
            hf_knob_set((hf_knob_t)k, n);
        else if (knob_rows[k].strict)
            return hf_error(HF_ERR_INPUT, "%s=%s: must be a %s integer", name, v,
                            knob_rows[k].least > 0 ? "positive" : "non-negative");
    }
    return HF_OK;
}
