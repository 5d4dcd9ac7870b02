/* `headfuse approx` as a library: the best m-atom heads of a target fitted across the
 * ranks, warm-started from a stored exact witness, written to APPROX.h5 with its
 * provenance (headfuse/campaign.h). */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "headfuse/agree.h"
#include "headfuse/bounds.h"
#include "headfuse/campaign.h"
#include "headfuse/verify.h"

/* The first minimal witness of `t` stored in a RESULT.h5, checked exactly against t.
 * head is initialised by the caller (hf_head_init(head, t->d, t->dv)). */
static hf_err_t load_from(const char *path, const hf_target_t *t, hf_head_t *head)
{
    hf_result_t res;
    hf_err_t err;
    hf_result_init(&res);
    HF_CHECK(err, hf_campaign_result_read(path, &res), done);
    const hf_supports_t *s = NULL;
    for (long i = 0; i < res.nrows && !s; i++)
        if (!strcmp(res.rows[i].name, t->name) && res.supports[i].n >= 1 && res.supports[i].m >= 1)
            s = res.supports + i;
    if (!s) {
        err = hf_error(HF_ERR_INPUT, "--from %s: no row for target '%s' with a minimal support",
                       path, t->name);
        goto done;
    }
    if (s->d != t->d || s->dv != t->dv) {
        err = hf_error(HF_ERR_INPUT,
                       "--from %s: the stored supports have d = %d, dv = %d, not %d, %d", path,
                       s->d, s->dv, t->d, t->dv);
        goto done;
    }
    const char *why = NULL;
    HF_CHECK(err, hf_supports_head(s, 0, head, &why), done);
    if (why) {
        err = hf_error(HF_ERR_CORRUPT, "--from %s: witness: %s", path, why);
        goto done;
    }
    int ok = 0;
    HF_CHECK(err, hf_verify_head(t, head, &ok, &why), done);
    if (!ok)
        err = hf_error(HF_ERR_INPUT,
                       "--from %s: the stored witness is not an exact head of '%s' (%s)", path,
                       t->name, why ? why : "verifier");
done:
    hf_result_clear(&res);
    return err;
}

/* ---------------------------------------------------------------- the command */

hf_err_t hf_campaign_approx(MPI_Comm comm, const hf_target_t *t, hf_approx_opts_t *o,
                            const hf_campaign_approx_opts_t *ao, hf_approx_result_t *res,
                            hf_approx_prov_t *prov)
{
    int rank, size;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    char host[256] = "?", endt[32];
    gethostname(host, sizeof host);
    host[sizeof host - 1] = '\0';
    hf_head_t exact;
    hf_head_init(&exact, t->d, t->dv);
    fmpz_t lb;
    fmpz_init(lb);
    hf_err_t e = ao->command_line ? HF_OK : HF_ERR_NOMEM; /* APPROX.h5 records the command */
    if (e == HF_OK && ao->from) {
        e = load_from(ao->from, t, &exact);
        if (e == HF_OK)
            o->exact_head = &exact;
    }
    HF_CHECK(e, hf_agree_all(comm, e), done);
    HF_CHECK(e, hf_approx_run(comm, t, o, res), done);
    if (rank == 0) {
        int complete = 0;
        /* the lower bound only adds context; a capped or failed bound is left out */
        if (hf_bounds_lower_ex(t, lb, &complete) == HF_OK) {
            char *s = fmpz_get_str(NULL, 10, lb);
            prov->lower_bound = s ? hf_strdup(s) : NULL;
            flint_free(s);
        } else {
            hf_error_clear();
        }
        hf_campaign_iso_time(endt, sizeof endt);
        prov->version = hf_strdup(HF_VERSION);
        prov->git_commit = hf_strdup(HF_GIT_COMMIT);
        prov->command_line = hf_strdup(ao->command_line);
        prov->host = hf_strdup(host);
        prov->start_time = hf_strdup(ao->start);
        prov->end_time = hf_strdup(endt);
        prov->ranks = size;
        prov->target_json = hf_target_to_json(t);
        /* out of memory is an error, never a file with blank provenance */
        if (!prov->version || !prov->git_commit || !prov->command_line || !prov->host ||
            !prov->start_time || !prov->end_time || !prov->target_json)
            e = HF_ERR_NOMEM;
        else
            e = hf_approx_file_write(ao->out, res, prov);
    }
    e = hf_agree_all(comm, e);
done:
    o->exact_head = NULL;
    hf_head_clear(&exact);
    fmpz_clear(lb);
    return e;
}
