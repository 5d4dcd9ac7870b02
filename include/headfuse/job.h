/* Job files: a campaign of searches described in YAML (docs/jobs.md).
 *
 * A job file lists entries; each entry is a target (a built-in family with its
 * parameters, or a JSON target file) searched at one span. Parameters may be sweeps
 * ("d: 1..6" or a list), which expand into one entry per combination, in the order the
 * file gives them (d outermost, then k, then span). Loading checks everything a run
 * needs before any work starts: keys and types, ranges, that every target builds, and
 * that the output file can be created. Messages name the file, the line and the key:
 *   "jobs/x.yaml:7: entries[1].span: must be an integer 1..16 or a range LO..HI".
 *
 * The job module sits beside the search: it uses the target module, and the engine names
 * of search.h. */
#ifndef HEADFUSE_JOB_H
#define HEADFUSE_JOB_H

#include "headfuse/error.h"
#include "headfuse/target.h"

#define HF_JOB_ENTRIES_MAX 100000 /* after expanding sweeps */

/* One expanded entry: one target at one span. */
typedef struct {
    char *family;      /* canonical family spec "multi:d=2,k=3", or NULL */
    char *target_path; /* resolved path of a JSON target file, or NULL */
    char *label;       /* the target's name ("wd:d=3" or the JSON file's name) */
    int span;          /* 1..HF_SPAN_MAX */
    long max_atoms;    /* 0: no limit */
    int engine;        /* hf_engine_t (search.h): auto (default), cone, layered or plain
                        * (the keys prune: false and engine: plain) */
    int line;          /* line of the entry in the job file (1-based) */
    int index;         /* position in the file's entries list (before expansion) */
} hf_job_entry_t;

typedef struct {
    char *path;        /* the job file as given */
    char *name;        /* `name:` or the file name without directory and extension */
    char *description; /* `description:` or NULL */
    char *output;      /* the RESULT.h5 path (option override, `output:`, or NAME.h5) */
    char *text;        /* the job file's text as read (RESULT.h5 keeps it: job_text) */
    long nentries;
    hf_job_entry_t *entries;
    /* `max_memory:` (a size per rank, "8G"; docs/jobs.md): its text as given and bytes,
     * or NULL and 0; max_memory_line is its line in the file */
    char *max_memory;
    double max_memory_bytes;
    int max_memory_line;
} hf_job_t;

/* Read and check a job file. output, when not NULL, overrides the file's `output:`
 * key. A relative `output:` is relative to the current directory; a relative target
 * path is looked up relative to the job file's directory, then to the source tree.
 * Every target is built once to check it (not kept). job must be initialised
 * (hf_job_init); its old value is replaced, and the caller clears it after, on failure
 * too (it may then hold part of the file). Errors: HF_ERR_INPUT for everything wrong in
 * the file (message "FILE:LINE: KEY: problem"), HF_ERR_IO when the file cannot be read. */
void hf_job_init(hf_job_t *job); /* the empty job; cannot fail */
hf_err_t hf_job_load(hf_job_t *job, const char *path, const char *output);
void hf_job_clear(hf_job_t *job);

/* Why a result file cannot be created at `out` (written into why, returns 1): its
 * directory does not exist, is not a directory or is not writable, or out names a
 * directory; 0 when it can be created, -1 when out of memory. Checked for a job's
 * output when it is loaded, and by `headfuse search` and `approx` for their --out, so
 * that a bad path is refused before any work. Does not look at whether out exists. */
int hf_job_output_problem(const char *out, char *why, size_t n);

/* Build the target of entry i into t (initialised; replaced on success, kept on failure).
 * Errors name the job file, line and key. */
hf_err_t hf_job_entry_target(const hf_job_t *job, long i, hf_target_t *t);

/* A one-line description of entry i, e.g. "wd:d=3 span 2" or
 * "two_heads_shared span 2 max_atoms 5 no-prune" (malloc'd; NULL on no memory). */
char *hf_job_entry_describe(const hf_job_t *job, long i);

#endif
