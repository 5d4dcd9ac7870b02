/* The engine registry (engine.h): the table of engines by name, and each engine's table of
 * operations for the search object (search_impl.h). The only file besides the engines
 * themselves that names an engine's code. */
#include <stdio.h>
#include <string.h>

#include "search/search_impl.h"

static const struct {
    const char *name, *text;
    int prunes;
    const hf_engine_ops_t *ops;
} engine_rows[] = {
#define HF_ENGINE_ROW(code, ename, eprunes, eops, etext)                                           \
    [code] = {.name = ename, .text = etext, .prunes = eprunes, .ops = &eops},
    HF_ENGINE_TABLE(HF_ENGINE_ROW)
#undef HF_ENGINE_ROW
};

#define ENGINE_COUNT ((int)(sizeof engine_rows / sizeof *engine_rows))

static int known(hf_engine_t e)
{
    return (int)e >= 0 && (int)e < ENGINE_COUNT;
}

int hf_engine_count(void)
{
    return ENGINE_COUNT;
}

hf_engine_t hf_engine_default(void)
{
    return (hf_engine_t)0;
}

hf_engine_t hf_engine_reference(void)
{
    for (int e = 0; e < ENGINE_COUNT; e++)
        if (!engine_rows[e].prunes)
            return (hf_engine_t)e;
    return hf_engine_default(); /* unreachable: the table has one */
}

const hf_engine_ops_t *hf_engine_ops(hf_engine_t e)
{
    return known(e) ? engine_rows[e].ops : NULL;
}

const char *hf_engine_name(hf_engine_t e)
{
    return known(e) ? engine_rows[e].name : "unknown";
}

int hf_engine_prunes(hf_engine_t e)
{
    return known(e) && engine_rows[e].prunes;
}

const char *hf_engine_text(hf_engine_t e)
{
    return known(e) ? engine_rows[e].text : "";
}

int hf_engine_counts_unknowns(hf_engine_t e)
{
    return known(e) && engine_rows[e].ops->small_exact;
}

int hf_engine_small_exact(hf_engine_t *out)
{
    for (int e = 0; e < ENGINE_COUNT; e++)
        if (engine_rows[e].ops->small_exact) {
            *out = (hf_engine_t)e;
            return 1;
        }
    return 0;
}

void hf_engine_names(char *buf, size_t n, const char *sep, const char *last)
{
    size_t len = 0;
    buf[0] = '\0';
    for (int e = 0; e < ENGINE_COUNT && len < n; e++) {
        const char *between = e == 0 ? "" : e + 1 == ENGINE_COUNT ? last : sep;
        int k = snprintf(buf + len, n - len, "%s%s", between, engine_rows[e].name);
        len += k > 0 ? (size_t)k : 0;
    }
}

hf_err_t hf_engine_parse(const char *name, const char *origin, hf_engine_t *out)
{
    for (int e = 0; name && e < ENGINE_COUNT; e++)
        if (!strcmp(name, engine_rows[e].name)) {
            *out = (hf_engine_t)e;
            return HF_OK;
        }
    char names[128];
    hf_engine_names(names, sizeof names, ", ", " or ");
    return hf_error(HF_ERR_INPUT, "%s: '%s': must be %s", origin, name ? name : "", names);
}

int hf_engine_with_prune(hf_engine_t e, int named, int no_prune, hf_engine_t *out)
{
    if (!no_prune) {
        *out = named ? e : hf_engine_default();
        return 0;
    }
    if (named && hf_engine_prunes(e) && e != hf_engine_default())
        return -1;
    *out = hf_engine_reference();
    return 0;
}

int hf_engine_satisfies(hf_engine_t requested, const char *used)
{
    if (!strcmp(used, hf_engine_name(requested)) || !strcmp(used, HF_ENGINE_NONE))
        return 1;
    /* the default (auto) resolves the same way for the same target and span: any pruning
     * engine */
    return requested == hf_engine_default() &&
           strcmp(used, hf_engine_name(hf_engine_reference())) != 0;
}
