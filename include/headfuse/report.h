/* What the commands report, as values (part of the campaign module), with their JSON forms:
 * the command line prints them in words or writes their JSON as it is (--json); nothing
 * here prints. For now: JSON with integers of any size, a table row's JSON and a row's plan
 * in words and as JSON.
 *
 * JSON integers: jansson holds 64 bits, so a larger integer is held as a marked string
 * that hf_json_dumps writes as bare digits (Python's json, jq 1.7 and other readers of
 * arbitrary-precision integers read it exactly). */
#ifndef HEADFUSE_REPORT_H
#define HEADFUSE_REPORT_H

#include <jansson.h>
#include <flint/fmpz.h>

#include "headfuse/campaign.h"
#include "headfuse/error.h"

/* ------------------------------------------------------------------ JSON */

/* A JSON integer when |x| < 2^53, else a decimal string (lb, ub). New reference. */
json_t *hf_json_bigint(const fmpz_t x);
/* A JSON integer of any size from its decimal text ("-1": null; text that is not a
 * nonnegative integer stays a string). New reference; NULL when out of memory. */
json_t *hf_json_decimal(const char *decimal);
/* json_dumps (compact, key order preserved) with hf_json_decimal's integers written as
 * numbers. Free with free(); NULL when out of memory. */
char *hf_json_dumps(const json_t *j);

/* A table row with the documented field names (README.md, docs/hdf5-format.md). New
 * reference. */
json_t *hf_report_row_json(const hf_row_t *r);
/* A row's plan (hf_campaign_plan_row) in words, beside hf_campaign_plan_engine and
 * hf_campaign_cone_warning (`target --span`, `run --list`; docs/cluster.md, "A plan before
 * a run"): the engine, the ranks kept busy, the memory per rank and per node, the time
 * with its basis, and the cone's warning ("" when none). */
typedef struct {
    char engine[96], ranks[320], memory[256], time[224];
    char warning[512];
} hf_report_plan_words_t;
void hf_report_plan_words(const hf_campaign_plan_t *p, hf_report_plan_words_t *w);
/* The nodes of a plan in words: "64 rank(s) on 1 node(s) (64 a node), a node's memory
 * 250 GiB (SOURCE)". */
void hf_report_plan_nodes(const hf_campaign_memory_t *lim, char *buf, size_t n);
/* A plan (hf_campaign_plan_t): engine, search, large_row, unknowns, warning, ranks,
 * busy_ranks, slices, memory_per_rank, node_ranks, memory_per_node, seconds, time_basis
 * (null where unknown or without a search). New reference. */
json_t *hf_report_plan_json(const hf_campaign_plan_t *p);

#endif
