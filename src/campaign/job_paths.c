/* The paths and files of a job's state in RESULT.h5.shards/ (job_state.c says what is
 * there): below both the state (job_state.c) and the move of an edited job's state
 * (job_migrate.c), so that neither calls the other for them. */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "campaign/campaign_impl.h"

const char *hf_campaign_entry_dir(hf_campaign_state_t *st, long i)
{
    snprintf(st->file, sizeof st->file, "%s/entry-%ld", st->dir, i);
    return st->file;
}

const char *hf_campaign_entry_row(hf_campaign_state_t *st, long i)
{
    snprintf(st->file, sizeof st->file, "%s/entry-%ld.h5", st->dir, i);
    return st->file;
}

const char *hf_campaign_state_path(hf_campaign_state_t *st, const char *name)
{
    snprintf(st->file, sizeof st->file, "%s/%s", st->dir, name);
    return st->file;
}

int hf_campaign_path_exists(const char *p)
{
    struct stat sb;
    return stat(p, &sb) == 0;
}

hf_err_t hf_campaign_read_file(const char *path, char **out)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return hf_error(HF_ERR_IO, "%s: cannot read: %s", path, strerror(errno));
    hf_err_t e = hf_read_stream(f, path, 0, out, NULL);
    fclose(f);
    return e;
}
