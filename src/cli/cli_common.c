/* Argument scanning, target loading and JSON output shared by the subcommands. */
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli_common.h"
#include "headfuse/agree.h"
#include "headfuse/core.h"
#include "headfuse/report.h"

/* A decimal integer in [lo, hi] (the one integer grammar, core.h). */
static int parse_int(const char *s, long lo, long hi, long *out)
{
    return hf_parse_long(s, -1, lo, hi, out) == HF_PARSE_OK;
}

/* What a value of option o must be, for the message. */
static void describe(const cli_opt_t *o, char *buf, size_t n)
{
    switch (o->kind) {
    case CLI_INT:
        if (o->hi == LONG_MAX)
            snprintf(buf, n, "a %s integer", o->lo == 0 ? "nonnegative" : "positive");
        else
            snprintf(buf, n, "an integer %ld..%ld", o->lo, o->hi);
        break;
    case CLI_REAL:
        snprintf(buf, n, "a positive number");
        break;
    case CLI_U64:
        snprintf(buf, n, "a nonnegative integer");
        break;
    case CLI_RANGE:
        snprintf(buf, n, "a range A..B or one integer A, with %ld <= A <= B <= %ld", o->lo, o->hi);
        break;
    case CLI_SIZE:
        snprintf(buf, n,
                 "a size in bytes such as 4G, 512M or 1500000000 (K, M, G, T: powers of "
                 "1024)");
        break;
    default:
        snprintf(buf, n, "a file name, not empty");
    }
}

/* Check value v of option o and store it; 0 when it is not of the option's kind. */
static int take_value(const cli_opt_t *o, const char *v)
{
    char *end;
    switch (o->kind) {
    case CLI_STR:
        *(const char **)o->dest = v;
        return 1;
    case CLI_PATH:
        *(const char **)o->dest = v;
        return *v != '\0';
    case CLI_SIZE: {
        double bytes;
        *(const char **)o->dest = v;
        return hf_parse_bytes(v, &bytes) == HF_PARSE_OK;
    }
    case CLI_INT:
        return parse_int(v, o->lo, o->hi, o->dest);
    case CLI_REAL: {
        errno = 0;
        double x = strtod(v, &end);
        if (!*v || *end || errno || !(x > 0) || !isfinite(x))
            return 0;
        *(double *)o->dest = x;
        return 1;
    }
    case CLI_U64: {
        errno = 0;
        unsigned long long x = strtoull(v, &end, 10);
        if (!*v || *end || errno || v[0] == '-')
            return 0;
        *(uint64_t *)o->dest = (uint64_t)x;
        return 1;
    }
    case CLI_RANGE: {
        long *r = o->dest;
        const char *dots = strstr(v, "..");
        char a[32];
        size_t n = dots ? (size_t)(dots - v) : strlen(v);
        if (n == 0 || n >= sizeof a)
            return 0;
        memcpy(a, v, n);
        a[n] = '\0';
        if (!parse_int(a, o->lo, o->hi, r) || !parse_int(dots ? dots + 2 : a, o->lo, o->hi, r + 1))
            return 0;
        return r[0] <= r[1];
    }
    default:
        return 0;
    }
}

int cli_parse(const char *cmd, const char *usage, int argc, char **argv, const cli_opt_t *opts,
              const char **pos, int maxpos, int *npos)
{
    /* which options were given: a second value would silently replace the first */
    unsigned char seen[64] = {0};
    const char *value[64] = {NULL};
    int help = 0;
    const cli_opt_t help_opt = CLI_OPT_FLAG("--help", &help); /* every command's */
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
        if (!o->name && len == strlen(help_opt.name) && !strncmp(help_opt.name, a, len))
            o = &help_opt;
        if (!o->name) {
            fprintf(stderr, "headfuse %s: unknown option '%.*s' (see headfuse %s --help)\n", cmd,
                    (int)len, a, cmd);
            return 2;
        }
        if (o->kind == CLI_FLAG) {
            if (eq) {
                fprintf(stderr, "headfuse %s: option %s takes no value\n", cmd, o->name);
                return 2;
            }
            *(int *)o->dest = 1;
            continue;
        }
        size_t k = (size_t)(o - opts);
        if (k < sizeof seen && seen[k]) {
            fprintf(stderr, "headfuse %s: option %s given twice (give it once)\n", cmd, o->name);
            return 2;
        }
        if (k < sizeof seen)
            seen[k] = 1;
        if (eq)
            value[k] = eq + 1;
        else if (i + 1 < argc)
            value[k] = argv[++i];
        else {
            fprintf(stderr, "headfuse %s: option %s needs a value\n", cmd, o->name);
            return 2;
        }
    }
    if (help) { /* --help wins over the values */
        fputs(usage, stdout);
        return 0;
    }
    /* values are checked in the table's order, after the scan */
    for (size_t k = 0; opts[k].name && k < sizeof seen; k++) {
        const cli_opt_t *o = opts + k;
        char what[160];
        if (o->kind == CLI_FLAG)
            continue;
        if (!seen[k] && o->required) {
            fprintf(stderr, "headfuse %s: %s %s is required\n", cmd, o->name, o->required);
            return 2;
        }
        if (seen[k] && !take_value(o, value[k])) {
            describe(o, what, sizeof what);
            fprintf(stderr, "headfuse %s: %s %s: must be %s\n", cmd, o->name, value[k], what);
            return 2;
        }
    }
    return CLI_GO;
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
    char *s = hf_json_dumps(j);
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

int cli_fail_mpi(MPI_Comm comm, const char *cmd, hf_err_t err)
{
    int rank, reporter = hf_agree_reporter(comm);
    MPI_Comm_rank(comm, &rank);
    if (rank == reporter && rank > 0) {
        const char *msg = hf_error_msg();
        fprintf(stderr, "headfuse %s: rank %d: %s\n", cmd, rank, msg[0] ? msg : hf_err_str(err));
    } else if (rank == reporter)
        cli_fail(cmd, err);
    return hf_err_exit_status(err);
}
