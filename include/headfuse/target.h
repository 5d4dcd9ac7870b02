/* Targets: sums of softmax attention heads with exact rational weights and values.
 *
 * A head is a list of atoms (key k in Z^d, weight c > 0 in Q, value v in Q^dv) and
 * computes f(q) = sum_i c_i v_i exp(k_i.q) / sum_i c_i exp(k_i.q). A target is the sum
 * of its heads. Targets come from JSON files (docs/targets.md), from built-in families
 * ("wd:d=3", "chain:d=2", "multi:d=2,k=3", "wdw:d=4"), or are built in code. A witness
 * head found by the search is an hf_head_t too. */
#ifndef HEADFUSE_TARGET_H
#define HEADFUSE_TARGET_H

#include <limits.h>
#include <stdint.h>
#include <flint/fmpq.h>
#include <jansson.h>

#include "headfuse/core.h"
#include "headfuse/error.h"

#define HF_D_MAX 64          /* largest query dimension d */
#define HF_DV_MAX 16         /* largest value dimension dv */
#define HF_KEY_MAX 1048576   /* |key coordinate| bound: keeps exponents and degrees sane */
#define HF_HEADS_MAX INT_MAX /* heads of a target: nheads is an int */
#define HF_SPAN_MAX 16       /* largest span S (keys in {0..S}^d): search, job files, CLI */

/* Most points of the box {0..S}^d (docs/targets.md, "Limits"), a representation limit, not a
 * proxy for memory. Point indices are 32 bits (the cone's rows and the candidates' points are
 * uint32_t), except in a large row (src/search/large.c: candidates decided by classes, box points
 * as 64-bit offsets, supports streamed), which never lists its box: its limit is what a long holds.
 * The search (hf_search_check) allows it only where the search will be a large row. A support's
 * keys are distinct points of the box, so no support is larger either. */
#define HF_SEARCH_BOX_MAX ((1L << 32) - 1)
#define HF_SEARCH_LARGE_BOX_MAX LONG_MAX

/* One head. keys is natoms*d (row-major), weights natoms, values natoms*dv. */
typedef struct {
    int d, dv;
    long natoms;
    int64_t *keys;
    fmpq *weights;
    fmpq *values;
} hf_head_t;

typedef struct {
    char *name; /* never NULL after init */
    int d, dv;
    int nheads;
    hf_head_t *heads;
    long capheads; /* room in heads */
} hf_target_t;

/* Heads. init makes an empty head (natoms = 0) of the given dimensions; resize grows or
 * shrinks storage keeping the first atoms (new atoms: key 0, weight 1, value 0). */
void hf_head_init(hf_head_t *h, int d, int dv);
void hf_head_clear(hf_head_t *h);
hf_err_t hf_head_resize(hf_head_t *h, long natoms);
hf_err_t hf_head_copy(hf_head_t *dst, const hf_head_t *src); /* any d, dv: dst takes src's */
/* Append one atom (copies key[d], weight, value[dv]). */
hf_err_t hf_head_push(hf_head_t *h, const int64_t *key, const fmpq_t weight, const fmpq *value);
/* Check a head: natoms >= 1, weights > 0, |keys| <= HF_KEY_MAX. Message names `where`. */
hf_err_t hf_head_validate(const hf_head_t *h, const char *where);
/* Evaluate the head at query q[d] in double precision with a stable log-sum-exp;
 * writes out[dv]. */
void hf_head_eval(const hf_head_t *h, const double *q, double *out);

/* The one conversion of a head to and from JSON (witnesses in shard records and in the
 * command line's output): {"keys": [[k..]..], "weights": ["p/q"..], "values": [..]}
 * where values[i] is an array of dv rational strings, or with flat and dv = 1 the one
 * string. to_json writes keys (NULL: h->keys, natoms*d) in place of the head's keys;
 * new reference, NULL (HF_ERR_NOMEM recorded) when out of memory. from_json fills h
 * (initialised for d, dv) with m atoms, taking either form of values; anything else ->
 * HF_ERR_INPUT saying which field. */
json_t *hf_head_to_json(const hf_head_t *h, const int64_t *keys, int flat);
hf_err_t hf_head_from_json(hf_head_t *h, const json_t *o, long m);

/* The same JSON as text, without a JSON tree (a witness of 10^7 atoms): to_json_text
 * writes the first m atoms (keys as above) exactly as json_dumps of hf_head_to_json(h,
 * keys, 0) with JSON_COMPACT | JSON_PRESERVE_ORDER does, into *out (hf_malloc'd, NUL
 * terminated). from_json_text reads m atoms into h from such text quickly, and from any
 * other JSON through hf_head_from_json (its messages). */
hf_err_t hf_head_to_json_text(const hf_head_t *h, const int64_t *keys, long m, char **out);
hf_err_t hf_head_from_json_text(hf_head_t *h, const char *text, long m);

/* Targets. Ownership (docs/architecture.md, "Conventions"): the caller initialises every
 * target before passing it anywhere, as an output too, and clears it after, always.
 * init_empty makes the empty target (no name, no heads; cannot fail), the value an
 * output is initialised to; init makes a named target without heads (t uninitialised;
 * on failure t is empty and clearing it is still right). */
void hf_target_init_empty(hf_target_t *t);
hf_err_t hf_target_init(hf_target_t *t, const char *name, int d, int dv);
void hf_target_clear(hf_target_t *t);
void hf_target_swap(hf_target_t *a, hf_target_t *b);
/* Functions that fill a target (copy, from_json_text, load_json, from_family, the limit
 * target of bounds.h, hf_job_entry_target...) take it initialised and replace its value
 * on success; on failure it keeps its value. */
hf_err_t hf_target_copy(hf_target_t *dst, const hf_target_t *src);
/* Append a copy of a head (its d, dv must match). */
hf_err_t hf_target_add_head(hf_target_t *t, const hf_head_t *h);
/* Total atoms over all heads ("head-atom terms"). */
long hf_target_head_atoms(const hf_target_t *t);
/* Evaluate the target at q[d]: out[dv] = sum of heads. */
void hf_target_eval(const hf_target_t *t, const double *q, double *out);

/* Parse a JSON document (schema in docs/targets.md). `origin` names the file in
 * messages. Bad input -> HF_ERR_INPUT with "origin: field: problem". */
hf_err_t hf_target_from_json_text(hf_target_t *t, const char *text, const char *origin);
hf_err_t hf_target_load_json(hf_target_t *t, const char *path);
/* The built-in families, one table for --family, job files and messages:
 * X(id, name, takes_k). k (multi only) is in HF_FAMILY_K_MIN..HF_FAMILY_K_MAX. */
#define HF_FAMILY_TABLE(X)                                                                         \
    X(HF_FAMILY_WD, "wd", 0)                                                                       \
    X(HF_FAMILY_CHAIN, "chain", 0)                                                                 \
    X(HF_FAMILY_MULTI, "multi", 1)                                                                 \
    X(HF_FAMILY_WDW, "wdw", 0)
#define HF_FAMILY_ENUM(id, name, takes_k) id,
typedef enum { HF_FAMILY_TABLE(HF_FAMILY_ENUM) HF_NFAMILIES } hf_family_t;
#undef HF_FAMILY_ENUM
#define HF_FAMILY_K_MIN 2
#define HF_FAMILY_K_MAX 64
#define HF_FAMILY_K_DEFAULT 3

/* The family named by the n characters at name, or -1. */
int hf_family_find(const char *name, size_t n);
const char *hf_family_name(hf_family_t f);
int hf_family_takes_k(hf_family_t f);
/* "wd, chain, multi, wdw": the names, for messages. */
const char *hf_family_list(void);

/* Built-in family "NAME:d=N[,k=K]". Bad spec -> HF_ERR_INPUT naming --family. */
hf_err_t hf_target_from_family(hf_target_t *t, const char *spec);
/* Serialise to the JSON schema (malloc'd string, caller frees) / write to a file. */
char *hf_target_to_json(const hf_target_t *t);
hf_err_t hf_target_save_json(const hf_target_t *t, const char *path);

/* Exact rationals: strict parse of "[-]digits[/digits]" (no spaces, nonzero
 * denominator) into canonical form; print as "p" or "p/q" (malloc'd). The one grammar:
 * hf_rational_syntax_ok says, without converting or recording an error, whether parse
 * would accept s (stored files are checked with it too). */
hf_err_t hf_rational_parse(fmpq_t out, const char *s);
int hf_rational_syntax_ok(const char *s);
char *hf_rational_str(const fmpq_t x);

/* Keys option "0,0;1,0;0,1": m keys of dimension d (keys malloc'd, m*d). `origin`
 * names the option in messages ("--keys"). */
hf_err_t hf_keys_parse(const char *text, int d, const char *origin, int64_t **keys, long *m);

#endif
