/* A row's plan in words and as JSON (docs/cluster.md, "A plan before a run"): printing
 * only; the plan is the campaign's (hf_campaign_plan_row). */
#include <stdio.h>
#include <string.h>

#include "cli/cli_common.h"

/* The ranks kept busy, in words (large rows: the slices; else what decides it later). */
static void ranks_words(const hf_campaign_plan_t *p, char *buf, size_t n)
{
    int ranks = p->mem.ranks;
    if (p->mem.large)
        snprintf(buf, n,
                 "%d of %d busy building the %ld slices of P/Q and writing the witness; the "
                 "cone's candidates (R has %ld unknowns) are tested on every rank alike",
                 p->busy, ranks, p->mem.slices, p->unknowns);
    else if (hf_engine_counts_unknowns(p->engine))
        snprintf(buf, n,
                 "at most the cone's candidates at a size (R has %ld unknowns), known after "
                 "its double description; the other ranks wait (docs/cluster.md, \"Which rows "
                 "gain from more ranks\")",
                 p->unknowns);
    else
        snprintf(buf, n,
                 "at most each size's units and cells, known after the size's preparation "
                 "(the run's size lines say)");
}

void cli_plan_words(const hf_campaign_plan_t *p, cli_plan_words_t *w)
{
    char one[32], node[32];
    w->warning[0] = '\0';
    if (p->shortcut) {
        snprintf(w->engine, sizeof w->engine, "%s", hf_campaign_plan_engine(p));
        snprintf(w->ranks, sizeof w->ranks, "no search: %s",
                 p->shortcut == 1 ? "the bounds certify the row" : "no support fits the span");
        snprintf(w->memory, sizeof w->memory, "the bounds only (no search is built)");
        snprintf(w->time, sizeof w->time,
                 "no search (the bounds and, for a small box, the count of its minimal "
                 "supports)");
        return;
    }
    snprintf(w->engine, sizeof w->engine, "%s%s", hf_campaign_plan_engine(p),
             p->mem.large ? ", a large row (docs/search.md, \"Large rows\")" : "");
    ranks_words(p, w->ranks, sizeof w->ranks);
    hf_bytes_text(p->mem.total, one, sizeof one);
    hf_bytes_text(p->node_total, node, sizeof node);
    snprintf(w->memory, sizeof w->memory, "%s a rank; %d rank(s) x %s = %s a node", one,
             p->node_ranks, one, node);
    if (p->seconds >= 0)
        snprintf(w->time, sizeof w->time, "about %.0f s for the search on %d rank(s) (%s)",
                 p->seconds, p->mem.ranks, HF_CAMPAIGN_TIME_BASIS);
    else if (p->cone_warn)
        snprintf(w->time, sizeof w->time, "unknown, possibly hours (the warning below)");
    else
        snprintf(w->time, sizeof w->time,
                 "unknown (no basis for this engine before it runs: time one row on 2 ranks)");
    if (p->cone_warn)
        hf_campaign_cone_warning(p->unknowns, w->warning, sizeof w->warning);
}

void cli_plan_nodes(const hf_campaign_memory_t *lim, char *buf, size_t n)
{
    char node[32];
    int len = snprintf(buf, n, "%d rank(s) on %d node(s) (%d a node)", lim->ranks,
                       lim->nodes > 0 ? lim->nodes : 1, lim->node_ranks > 0 ? lim->node_ranks : 1);
    if (len < 0 || (size_t)len >= n)
        return;
    if (lim->node_bytes > 0) {
        hf_bytes_text(lim->node_bytes, node, sizeof node);
        snprintf(buf + len, n - (size_t)len, ", a node's memory %s (%s)", node, lim->node_source);
    } else {
        snprintf(buf + len, n - (size_t)len, ", a node's memory unknown");
    }
}

json_t *cli_plan_json(const hf_campaign_plan_t *p)
{
    json_t *o = json_object();
    int search = !p->shortcut;
    json_object_set_new(o, "engine",
                        json_string(search ? hf_engine_name(p->engine) : HF_ENGINE_NONE));
    json_object_set_new(o, "search", json_boolean(search));
    json_object_set_new(o, "large_row", json_boolean(p->mem.large));
    json_object_set_new(o, "unknowns", search ? json_integer(p->unknowns) : json_null());
    char warn[512] = "";
    if (p->cone_warn)
        hf_campaign_cone_warning(p->unknowns, warn, sizeof warn);
    json_object_set_new(o, "warning", warn[0] ? json_string(warn) : json_null());
    json_object_set_new(o, "ranks", json_integer(p->mem.ranks));
    json_object_set_new(o, "busy_ranks", p->busy > 0 ? json_integer(p->busy) : json_null());
    json_object_set_new(o, "slices", p->mem.large ? json_integer(p->mem.slices) : json_null());
    json_object_set_new(o, "memory_per_rank", search ? json_real(p->mem.total) : json_null());
    json_object_set_new(o, "node_ranks", json_integer(p->node_ranks));
    json_object_set_new(o, "memory_per_node", search ? json_real(p->node_total) : json_null());
    json_object_set_new(o, "seconds", p->seconds >= 0 ? json_real(p->seconds) : json_null());
    json_object_set_new(o, "time_basis",
                        json_string(p->seconds >= 0 ? HF_CAMPAIGN_TIME_BASIS : "unknown"));
    return o;
}
