/* headfuse search: the distributed minimal-support search of one target at one span,
 * written to RESULT.h5 (one table row, its minimal supports with exact witnesses, the
 * per-unit cost log and provenance). Collective: run it under mpirun. */
#include <dirent.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cli/cli.h"
#include "cli/cli_common.h"
#include "cli/cli_search_run.h"
#include "headfuse/sched.h"

static const char *usage_text =
    "usage: mpirun -n N headfuse search (FILE.json | --family NAME:d=N[,k=K]) --span S\n"
    "                --out RESULT.h5 [--max-atoms M] [--engine auto|cone|layered|plain]\n"
    "                [--resume] [--force] [--no-prune] [--quiet] [--json]\n"
    "  Finds every minimal key set in {0..S}^d (canonical position) that carries one head\n"
    "  equal to the target, each with an exact witness. Shards go to RESULT.h5.shards/;\n"
    "  after a stop (kill -USR1 on mpirun: exit status 75) or a kill, rerun with --resume\n"
    "  to continue. An existing RESULT.h5 is kept: --force overwrites it, and --resume\n"
    "  leaves it as it is when it is the result of this same search.\n"
    "  --engine: how candidates are generated (docs/search.md); every engine gives the\n"
    "  same table. auto (default) takes the cone engine when it has few unknowns, else\n"
    "  layered; --no-prune is --engine plain.\n";

/* Rank 0, before any work: the output's directory is writable, and an existing file is
 * overwritten only with --force; with --resume, an existing result of this very search
 * means there is nothing left to do (*complete, its row in *row). */
static hf_err_t check_out(const char *out, int force, int resume, const hf_target_t *t,
                          const hf_search_opts_t *so, int *complete, hf_row_t *row)
{
    *complete = 0;
    hf_err_t e = cli_check_output("--out", out, force || resume,
                                  "--resume to keep it if it is the result of this search");
    if (e != HF_OK || force || !resume || access(out, F_OK) != 0)
        return e;
    hf_result_t r;
    char *json = hf_target_to_json(t);
    if (!json)
        return HF_ERR_NOMEM;
    e = hf_result_read(out, &r);
    if (e == HF_ERR_NOMEM) {
        free(json);
        return e;
    }
    if (e == HF_OK && r.nrows == 1 && cli_row_matches(&r, 0, json, so)) {
        *complete = 1;
        *row = r.rows[0];
    } else if (e == HF_OK) {
        e = hf_error(HF_ERR_INPUT,
                     "--out %s: exists and holds another result (%ld row%s%s%s), not this "
                     "search's; give --force to overwrite it",
                     out, r.nrows, r.nrows == 1 ? ": " : "", r.nrows == 1 ? r.rows[0].name : "",
                     r.nrows == 1 && strcmp(r.target_json[0], json) ? "" : ", other settings");
    } else {
        char why[1024];
        snprintf(why, sizeof why, "%s", hf_error_msg());
        e = hf_error(HF_ERR_INPUT,
                     "--out %s: exists and is not a readable result (%s); give --force to "
                     "overwrite it",
                     out, why);
    }
    hf_result_clear(&r);
    free(json);
    return e;
}

int cli_cmd_search(int argc, char **argv)
{
    const char *family = NULL, *span_s = NULL, *out = NULL, *max_s = NULL, *engine_s = NULL,
               *pos[1];
    int resume = 0, force = 0, no_prune = 0, quiet = 0, json = 0, help = 0, npos, status;
    cli_opt_t opts[] = {{"--family", 1, &family, NULL},     {"--span", 1, &span_s, NULL},
                        {"--out", 1, &out, NULL},           {"--max-atoms", 1, &max_s, NULL},
                        {"--resume", 0, NULL, &resume},     {"--force", 0, NULL, &force},
                        {"--no-prune", 0, NULL, &no_prune}, {"--quiet", 0, NULL, &quiet},
                        {"--json", 0, NULL, &json},         {"--engine", 1, &engine_s, NULL},
                        {"--help", 0, NULL, &help},         {NULL, 0, NULL, NULL}};
    if ((status = cli_parse("search", argc, argv, opts, pos, 1, &npos)))
        return status;
    if (help) {
        fputs(usage_text, stdout);
        return 0;
    }
    char *end;
    long span = span_s ? strtol(span_s, &end, 10) : 0;
    if (!span_s || *end || span < 1 || span > HF_SPAN_MAX) {
        fprintf(stderr, "headfuse search: --span: must be an integer 1..%d\n", HF_SPAN_MAX);
        return 2;
    }
    long max_atoms = max_s ? strtol(max_s, &end, 10) : 0;
    if (max_s && (*end || max_atoms < 1)) {
        fprintf(stderr, "headfuse search: --max-atoms: must be a positive integer\n");
        return 2;
    }
    if (!out) {
        fprintf(stderr, "headfuse search: --out RESULT.h5 is required\n");
        return 2;
    }
    hf_engine_t engine = HF_ENGINE_AUTO;
    if (engine_s && hf_engine_parse(engine_s, "--engine", &engine) != HF_OK) {
        fprintf(stderr, "headfuse search: %s\n", hf_error_msg());
        return 2;
    }
    if (no_prune && engine_s && engine != HF_ENGINE_PLAIN) {
        fprintf(stderr,
                "headfuse search: --no-prune is the plain engine; it contradicts --engine %s\n",
                engine_s);
        return 2;
    }
    if (engine == HF_ENGINE_PLAIN)
        no_prune = 1;

    int rank, size;
    char start[32];
    cli_mpi_start(&argc, &argv, &rank, &size, start, sizeof start);

    hf_target_t t;
    hf_target_init_empty(&t);
    hf_result_t res;
    hf_row_t row;
    hf_supports_t sup;
    hf_unit_record_t *units = NULL;
    long nunits = 0;
    int have_sup = 0;
    char *cmdline = cli_join_argv(argc, argv), *tjson = NULL;
    char shard_dir[4096];
    snprintf(shard_dir, sizeof shard_dir, "%s.shards", out);
    hf_result_init(&res);

    hf_err_t e = cli_check_ranks(size);
    if (e != HF_OK)
        goto fail;
    e = cli_load_target(npos ? pos[0] : NULL, family, &t);
    if (e == HF_OK && !cmdline) /* the shards and the result record the command line */
        e = HF_ERR_NOMEM;
    if ((e = cli_agree_all(MPI_COMM_WORLD, e)) != HF_OK)
        goto fail;
    hf_search_opts_t so = {.span = (int)span,
                           .prune = !no_prune,
                           .max_atoms = max_atoms,
                           .engine = no_prune ? HF_ENGINE_AUTO : engine};
    int complete = 0;
    if (rank == 0)
        e = check_out(out, force, resume, &t, &so, &complete, &row);
    if ((e = cli_agree_root(MPI_COMM_WORLD, e)) != HF_OK)
        goto fail;
    MPI_Bcast(&complete, 1, MPI_INT, 0, MPI_COMM_WORLD);
    if (complete) {
        /* --resume after the result was written: nothing to do, and it stays as it is */
        if (rank == 0 && json)
            cli_json_print(cli_row_json(&row));
        else if (rank == 0) {
            printf("%s: already complete; nothing to do\n", out);
            cli_print_row(stdout, &row, out);
        }
        status = 0;
        goto done;
    }
    cli_search_cfg_t cfg = {.shard_dir = shard_dir,
                            .resume = resume,
                            .quiet = quiet,
                            .row = 0,
                            .command_line = cmdline,
                            .max_name = "--max-atoms"};
    e = cli_search_entry(MPI_COMM_WORLD, &t, &so, &cfg, &row, &sup, &units, &nunits);
    have_sup = 1;
    if (e != HF_OK)
        goto fail;
    if (rank == 0) {
        tjson = hf_target_to_json(&t);
        e = tjson ? hf_result_add_row(&res, &row, &sup, tjson) : HF_ERR_NOMEM;
        res.units = units;
        res.nunits = nunits;
        units = NULL;
        if (e == HF_OK)
            e = cli_result_provenance(&res, cmdline, start, size);
        if (e == HF_OK)
            e = hf_result_write(out, &res);
        if (e == HF_OK)
            cli_remove_shards(shard_dir);
    }
    if ((e = cli_agree_root(MPI_COMM_WORLD, e)) != HF_OK)
        goto fail;
    if (rank == 0) {
        if (json)
            cli_json_print(cli_row_json(&row));
        else
            cli_print_row(stdout, &row, out);
    }
    status = 0;
    goto done;
fail:
    /* every rank agreed on e; the rank that holds its message reports it */
    status = cli_fail_mpi(MPI_COMM_WORLD, "search", e);
done:
    hf_result_clear(&res);
    if (have_sup)
        hf_supports_clear(&sup);
    hf_target_clear(&t);
    free(units);
    free(cmdline);
    free(tjson);
    MPI_Finalize();
    return status;
}
