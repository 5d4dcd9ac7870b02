/* Fuzz the YAML job-file loader: hf_job_load on the input written to a file (one per
 * process, rewritten for each input, in a private directory, so relative target
 * paths resolve there or in the source tree). A job that loads is then used as a run
 * uses it (src/campaign/job.c: job_text): every entry's target is built and written
 * as JSON, and every entry described. Checked: a loaded job's entries are sane, and a
 * refused job has a message naming the file. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "headfuse/job.h"
#include "headfuse/engine.h"
#include "fuzz_util.h"

/* Entries fully built per input. A sweep can expand one entry to 64 * 63 * 16 (d, k,
 * span); building all of those takes a minute, which says nothing about the parser
 * and would stall the fuzzer. The first entries and the last one are built. */
#define BUILD_MAX 256

static void use_entry(const hf_job_t *job, long i)
{
    const hf_job_entry_t *e = job->entries + i;
    if (!e->label || !e->family == !e->target_path || e->span < 1 || e->span > HF_SPAN_MAX ||
        e->max_atoms < 0 || (int)e->engine < 0 || (int)e->engine >= hf_engine_count() ||
        e->line < 1 || e->index < 0)
        FUZZ_BUG("entry %ld of a loaded job is not sane", i);
    char *desc = hf_job_entry_describe(job, i);
    if (!desc)
        FUZZ_BUG("hf_job_entry_describe failed");
    free(desc);
    if (i >= BUILD_MAX && i != job->nentries - 1)
        return;
    hf_target_t t;
    hf_target_init_empty(&t);
    /* the target was built once while loading; it must build again */
    if (hf_job_entry_target(job, i, &t) != HF_OK)
        FUZZ_BUG("entry %ld of a loaded job does not build: %s", i, hf_error_msg());
    char *json = hf_target_to_json(&t);
    if (!json)
        FUZZ_BUG("entry %ld: target cannot be written: %s", i, hf_error_msg());
    free(json);
    hf_target_clear(&t);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static char path[128];
    if (!path[0])
        fuzz_path(path, sizeof path, "job.yaml");
    fuzz_write_file(path, data, size);
    hf_job_t job;
    hf_job_init(&job);
    hf_err_t err = hf_job_load(&job, path, NULL);
    if (err == HF_OK) {
        if (job.nentries < 1 || job.nentries > HF_JOB_ENTRIES_MAX || !job.name || !job.output)
            FUZZ_BUG("loaded job with %ld entries, name %p, output %p", job.nentries,
                     (void *)job.name, (void *)job.output);
        for (long i = 0; i < job.nentries; i++)
            use_entry(&job, i);
    } else if (err == HF_ERR_INPUT && !strstr(hf_error_msg(), path)) {
        FUZZ_BUG("message does not name the job file: %s", hf_error_msg());
    }
    hf_job_clear(&job);
    hf_error_clear();
    return 0;
}
