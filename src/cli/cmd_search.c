/* headfuse search: the distributed minimal-support search of one target at one span,
 * written to RESULT.h5 (one table row, its minimal supports with exact witnesses, the
 * per-unit cost log and provenance). Collective: run it under mpirun. */
#include <limits.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/cli_common.h"
#include "headfuse/agree.h"
#include "headfuse/campaign.h"

/* %s: the engines (HF_ENGINE_TABLE), "auto|cone|layered|plain" */
static const char *usage_format =
    "usage: mpirun -n N headfuse search (FILE.json | --family NAME:d=N[,k=K]) --span S\n"
    "                --out RESULT.h5 [--max-atoms M] [--engine %s]\n"
    "                [--resume] [--force] [--no-prune] [--quiet] [--json] [--max-memory SIZE]\n"
    "  Finds every minimal key set in {0..S}^d (canonical position) that carries one head\n"
    "  equal to the target, each with an exact witness. Shards go to RESULT.h5.shards/;\n"
    "  after a stop (kill -USR1 on mpirun: exit status 75) or a kill, rerun with --resume\n"
    "  to continue. An existing RESULT.h5 is kept: --force overwrites it, and --resume\n"
    "  leaves it as it is when it is the result of this same search.\n"
    "  --max-memory SIZE: the memory a rank may take (4G, 512M; default\n"
    "  HEADFUSE_MAX_MEMORY, else this machine's memory per rank). A search whose estimate\n"
    "  (docs/targets.md, \"Limits\"; headfuse target --span S prints it) exceeds it is\n"
    "  refused before anything is built.\n";

int cli_cmd_search(int argc, char **argv)
{
    const char *family = NULL, *out = NULL, *engine_s = NULL, *max_memory = NULL, *pos[1];
    long span = 0, max_atoms = 0;
    int resume = 0, force = 0, no_prune = 0, quiet = 0, json = 0, help = 0, npos, status;
    cli_opt_t opts[] = {CLI_OPT_STR("--family", &family),
                        CLI_OPT_INT("--span", &span, 1, HF_SPAN_MAX, "S"),
                        CLI_OPT_PATH("--out", &out, "RESULT.h5"),
                        CLI_OPT_INT("--max-atoms", &max_atoms, 1, LONG_MAX, NULL),
                        CLI_OPT_FLAG("--resume", &resume),
                        CLI_OPT_FLAG("--force", &force),
                        CLI_OPT_FLAG("--no-prune", &no_prune),
                        CLI_OPT_FLAG("--quiet", &quiet),
                        CLI_OPT_FLAG("--json", &json),
                        CLI_OPT_STR("--engine", &engine_s),
                        CLI_OPT_STR("--max-memory", &max_memory),
                        CLI_OPT_FLAG("--help", &help),
                        CLI_OPT_END};
    if ((status = cli_parse("search", argc, argv, opts, pos, 1, &npos)))
        return status;
    if (help) {
        char names[128];
        hf_engine_names(names, sizeof names, "|", "|");
        printf(usage_format, names);
        /* the engines from their registry (engine.h): the tests read their list here */
        printf("  --engine: how candidates are generated (docs/search.md); every engine gives\n"
               "  the same table:\n");
        for (int e = 0; e < hf_engine_count(); e++)
            printf("    %-8s %s%s%s\n", hf_engine_name((hf_engine_t)e),
                   e == (int)hf_engine_default() ? "(default) " : "",
                   hf_engine_text((hf_engine_t)e),
                   e == (int)hf_engine_reference() ? "; no pruning: --no-prune" : "");
        return 0;
    }
    if ((status = cli_check_size("search", "--max-memory", max_memory)))
        return status;
    hf_engine_t engine = hf_engine_default();
    if (engine_s && hf_engine_parse(engine_s, "--engine", &engine) != HF_OK) {
        fprintf(stderr, "headfuse search: %s\n", hf_error_msg());
        return 2;
    }
    /* the engine is the one setting: --no-prune is another way to ask for plain */
    if (hf_engine_with_prune(engine, engine_s != NULL, no_prune, &engine) != 0) {
        fprintf(stderr,
                "headfuse search: --no-prune is the plain engine; it contradicts --engine %s\n",
                engine_s);
        return 2;
    }

    int rank, size;
    char start[32];
    cli_mpi_start(&argc, &argv, &rank, &size, start, sizeof start);

    hf_target_t t;
    hf_target_init_empty(&t);
    hf_row_t row;
    int complete = 0;
    char *cmdline = hf_campaign_command_line(argc, argv);

    hf_err_t e = hf_campaign_check_ranks(size);
    if (e != HF_OK)
        goto fail;
    e = cli_load_target(npos ? pos[0] : NULL, family, &t);
    if (e == HF_OK && !cmdline) /* the shards and the result record the command line */
        e = HF_ERR_NOMEM;
    if ((e = hf_agree_all(MPI_COMM_WORLD, e)) != HF_OK)
        goto fail;
    hf_search_opts_t so = {.span = (int)span, .max_atoms = max_atoms, .engine = engine};
    hf_campaign_search_opts_t co = {.out = out,
                                    .force = force,
                                    .resume = resume,
                                    .quiet = quiet,
                                    .command_line = cmdline,
                                    .start = start,
                                    .max_memory = max_memory};
    if ((e = hf_campaign_search(MPI_COMM_WORLD, &t, &so, &co, &row, &complete)) != HF_OK)
        goto fail;
    if (rank == 0 && json)
        cli_json_print(cli_row_json(&row));
    else if (rank == 0) {
        if (complete) /* --resume after the result was written: nothing to do */
            printf("%s: already complete; nothing to do\n", out);
        cli_print_row(stdout, &row, out);
    }
    status = 0;
    goto done;
fail:
    /* every rank agreed on e; the rank that holds its message reports it */
    status = cli_fail_mpi(MPI_COMM_WORLD, "search", e);
done:
    hf_target_clear(&t);
    free(cmdline);
    return cli_mpi_end(status);
}
