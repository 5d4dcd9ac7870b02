/* The search's engines by name: the registry (src/search/registry.c), all that a module
 * needs to name, parse or print an engine without the search itself (job files, rows,
 * options). The engines' codes below are for the engines and this registry only; every
 * other module asks the functions (docs/architecture.md, "The search's engines"). */
#ifndef HEADFUSE_ENGINE_H
#define HEADFUSE_ENGINE_H

#include <stddef.h>

#include "headfuse/error.h"

/* The engines: how candidates are generated (docs/search.md). Every engine decides each
 * candidate with the same exact test and reports the same supports with the same
 * witnesses. One row per engine: its code, its name (options, job files, rows, shard
 * fingerprints), whether it prunes (plain is the reference enumerator without pruning), the
 * table of its operations (src/search/search_impl.h, defined in the engine's own file) and
 * a line for people. Adding an engine is one file and one row (docs/architecture.md). The
 * first row is the default; auto is no engine of its own: it picks one when the search is
 * created. */
#define HF_ENGINE_TABLE(X)                                                                         \
    X(HF_ENGINE_AUTO, "auto", 1, hf_engine_auto, "cone when its unknowns are few, else layered")   \
    X(HF_ENGINE_CONE, "cone", 1, hf_engine_cone,                                                   \
      "faces of the cone {R : Q R >= 0} (docs/math.md §7.3)")                                      \
    X(HF_ENGINE_LAYERED, "layered", 1, hf_engine_layered,                                          \
      "faces of the candidates, layer by layer (rules 1-4)")                                       \
    X(HF_ENGINE_PLAIN, "plain", 0, hf_engine_plain, "every subset of the box (the reference)")

typedef enum {
#define HF_ENGINE_ENUM(code, name, prunes, ops, text) code,
    HF_ENGINE_TABLE(HF_ENGINE_ENUM)
#undef HF_ENGINE_ENUM
} hf_engine_t;

/* The number of engines (rows of the table); codes are 0 .. hf_engine_count() - 1. */
int hf_engine_count(void);
/* The engine when none is named (the table's first row: auto). A zeroed option is it. */
hf_engine_t hf_engine_default(void);
/* The engine that prunes nothing, what --no-prune and `prune: false` ask for: plain. */
hf_engine_t hf_engine_reference(void);

const char *hf_engine_name(hf_engine_t e); /* "cone"; "unknown" outside the table */
int hf_engine_prunes(hf_engine_t e);       /* 0 for plain: every subset, no rule */
const char *hf_engine_text(hf_engine_t e); /* the line for people */
/* Whether the engine keeps its cost in the cone's unknowns (warned of when they are many,
 * docs/search.md, "Which engine auto takes"): the cone. */
int hf_engine_counts_unknowns(hf_engine_t e);

/* Parse an engine name; HF_ERR_INPUT naming `origin` when unknown ("ORIGIN: 'x': must be
 * auto, cone, layered or plain"). */
hf_err_t hf_engine_parse(const char *name, const char *origin, hf_engine_t *out);
/* The engines' names in table order, separated by sep and the last two by last
 * ("auto, cone, layered or plain"), into buf (n bytes). */
void hf_engine_names(char *buf, size_t n, const char *sep, const char *last);

/* The one rule that joins an engine and "no pruning" (--no-prune, `prune: false`): no
 * pruning is the reference engine; beside it, a named pruning engine other than the default
 * contradicts it. e: the engine given (named: it was given at all). Returns 0 and sets *out,
 * or -1 on a contradiction (the caller says it where the input is). */
int hf_engine_with_prune(hf_engine_t e, int named, int no_prune, hf_engine_t *out);

/* A row's engine when no search ran: LB = UB certified it from the bounds alone. */
#define HF_ENGINE_NONE "none"

/* Whether a search that ran engine `used` (a row's engine: auto resolved) is what
 * `requested` asks for: the same engine, or any pruning engine for the default; a row that
 * ran no search (HF_ENGINE_NONE) is what every engine would give. */
int hf_engine_satisfies(hf_engine_t requested, const char *used);

#endif
