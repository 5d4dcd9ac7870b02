/* Argument scanning, target loading and JSON output shared by the subcommands. */
#include <limits.h>
#include <unistd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli_common.h"
#include "headfuse/job.h"

int cli_parse(const char *cmd, int argc, char **argv, const cli_opt_t *opts, const char **pos,
              int maxpos, int *npos)
{
    /* which value options were given: a second one would silently replace the first */
    unsigned char seen[64] = {0};
    *npos = 0;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (a[0] != '-' || a[1] != '-' || a[2] == '\0') {
            if (*npos >= maxpos) {
                fprintf(stderr, "headfuse %s: unexpected argument '%s'\n", cmd, a);
                return 2;
            }
            pos[(*npos)++] = a;
            continue;
        }
        const char *eq = strchr(a, '=');
        size_t len = eq ? (size_t)(eq - a) : strlen(a);
        const cli_opt_t *o = opts;
        for (; o->name; o++)
            if (strlen(o->name) == len && !strncmp(o->name, a, len))
                break;
        if (!o->name) {
            fprintf(stderr, "headfuse %s: unknown option '%.*s' (see headfuse %s --help)\n", cmd,
                    (int)len, a, cmd);
            return 2;
        }
        if (o->has_value) {
            size_t k = (size_t)(o - opts);
            if (k < sizeof seen && seen[k]) {
                fprintf(stderr, "headfuse %s: option %s given twice (give it once)\n", cmd,
                        o->name);
                return 2;
            }
            if (k < sizeof seen)
                seen[k] = 1;
            if (eq)
                *o->value = eq + 1;
            else if (i + 1 < argc)
                *o->value = argv[++i];
            else {
                fprintf(stderr, "headfuse %s: option %s needs a value\n", cmd, o->name);
                return 2;
            }
        } else {
            if (eq) {
                fprintf(stderr, "headfuse %s: option %s takes no value\n", cmd, o->name);
                return 2;
            }
            *o->flag = 1;
        }
    }
    return 0;
}

hf_err_t cli_check_output(const char *opt, const char *path, int force, const char *keep)
{
    char why[1024];
    int p = hf_job_output_problem(path, why, sizeof why);
    if (p < 0)
        return HF_ERR_NOMEM;
    if (p > 0)
        return hf_error(HF_ERR_INPUT, "%s %s: %s", opt, path, why);
    if (!force && access(path, F_OK) == 0)
        return hf_error(HF_ERR_INPUT, "%s %s: exists; give --force to overwrite it%s%s", opt, path,
                        keep ? ", or " : "", keep ? keep : "");
    return HF_OK;
}

hf_err_t cli_load_target(const char *path, const char *family, hf_target_t *t)
{
    if (path && family)
        return hf_error(HF_ERR_INPUT, "give a target file or --family, not both");
    if (!path && !family)
        return hf_error(HF_ERR_INPUT, "no target: give a JSON file or --family NAME:d=N (%s)",
                        hf_family_list());
    return family ? hf_target_from_family(t, family) : hf_target_load_json(t, path);
}

json_t *cli_json_bigint(const fmpz_t x)
{
    fmpz_t lim;
    fmpz_init(lim);
    fmpz_one(lim);
    fmpz_mul_2exp(lim, lim, 53);
    json_t *j;
    if (fmpz_cmpabs(x, lim) < 0) {
        j = json_integer((json_int_t)fmpz_get_si(x));
    } else {
        char *s = fmpz_get_str(NULL, 10, x);
        j = json_string(s);
        flint_free(s);
    }
    fmpz_clear(lim);
    return j;
}

json_t *cli_json_rational(const fmpq_t x)
{
    char *s = hf_rational_str(x);
    json_t *j = json_string(s ? s : "?");
    free(s);
    return j;
}

json_t *cli_json_head(const hf_head_t *h)
{
    json_t *keys = json_array(), *weights = json_array(), *values = json_array();
    for (long i = 0; i < h->natoms; i++) {
        json_t *k = json_array();
        for (int j = 0; j < h->d; j++)
            json_array_append_new(k, json_integer(h->keys[i * h->d + j]));
        json_array_append_new(keys, k);
        json_array_append_new(weights, cli_json_rational(h->weights + i));
        if (h->dv == 1) {
            json_array_append_new(values, cli_json_rational(h->values + i));
        } else {
            json_t *v = json_array();
            for (int j = 0; j < h->dv; j++)
                json_array_append_new(v, cli_json_rational(h->values + i * h->dv + j));
            json_array_append_new(values, v);
        }
    }
    json_t *o = json_object();
    json_object_set_new(o, "keys", keys);
    json_object_set_new(o, "weights", weights);
    json_object_set_new(o, "values", values);
    return o;
}

void cli_print_head(FILE *f, const hf_head_t *h, const char *indent)
{
    for (long i = 0; i < h->natoms; i++) {
        fprintf(f, "%s(", indent);
        for (int j = 0; j < h->d; j++)
            fprintf(f, "%s%lld", j ? "," : "", (long long)h->keys[i * h->d + j]);
        char *ws = hf_rational_str(h->weights + i);
        fprintf(f, ") -> %s,", ws ? ws : "?");
        free(ws);
        for (int j = 0; j < h->dv; j++) {
            char *vs = hf_rational_str(h->values + i * h->dv + j);
            fprintf(f, " %s", vs ? vs : "?");
            free(vs);
        }
        fputc('\n', f);
    }
}

void cli_json_print(json_t *j)
{
    char *s = json_dumps(j, JSON_PRESERVE_ORDER | JSON_COMPACT);
    if (s) {
        puts(s);
        free(s);
    }
    fflush(stdout);
    json_decref(j);
}

int cli_fail(const char *cmd, hf_err_t err)
{
    const char *msg = hf_error_msg();
    fprintf(stderr, "headfuse %s: %s\n", cmd, msg[0] ? msg : hf_err_str(err));
    return hf_err_exit_status(err);
}

hf_err_t cli_agree_root(MPI_Comm comm, hf_err_t e)
{
    int code = (int)e;
    MPI_Bcast(&code, 1, MPI_INT, 0, comm);
    if (code != HF_OK && e == HF_OK)
        hf_error_relay((hf_err_t)code, "rank 0 failed");
    return (hf_err_t)code;
}

hf_err_t cli_agree_all(MPI_Comm comm, hf_err_t e)
{
    int code = (int)e, worst;
    MPI_Allreduce(&code, &worst, 1, MPI_INT, MPI_MAX, comm);
    if (worst != HF_OK && e == HF_OK)
        hf_error_relay((hf_err_t)worst, "another rank failed");
    return worst != HF_OK && e != HF_OK ? e : (hf_err_t)worst;
}

int cli_fail_mpi(MPI_Comm comm, const char *cmd, hf_err_t err)
{
    int rank, first;
    MPI_Comm_rank(comm, &rank);
    int mine = hf_error_is_relayed() ? INT_MAX : rank;
    MPI_Allreduce(&mine, &first, 1, MPI_INT, MPI_MIN, comm);
    if (first == INT_MAX ? rank == 0 : rank == first) {
        const char *msg = hf_error_msg();
        if (rank > 0)
            fprintf(stderr, "headfuse %s: rank %d: %s\n", cmd, rank,
                    msg[0] ? msg : hf_err_str(err));
        else
            cli_fail(cmd, err);
    }
    return hf_err_exit_status(err);
}
