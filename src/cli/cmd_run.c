/* headfuse run: a job file (docs/jobs.md) run entry by entry across the ranks into one
 * RESULT.h5 (hf_campaign_job_run); this file parses the options and prints. Collective:
 * run it under mpirun or srun. */
#include <limits.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/cli_common.h"
#include "headfuse/agree.h"
#include "headfuse/campaign.h"
#include "headfuse/report.h"

static const char *usage_text =
    "usage: mpirun -n N headfuse run JOB.yaml [--out RESULT.h5] [--resume] [--force] [--quiet]\n"
    "                [--json] [--list [--ranks N] [--nodes N] [--node-memory SIZE]]\n"
    "                [--entry I] [--collect]\n"
    "                [--max-memory SIZE]\n"
    "  Runs every entry of the job file (a target at a span; docs/jobs.md) and writes one\n"
    "  RESULT.h5 with one table row per entry. State goes to RESULT.h5.shards/; after\n"
    "  a stop (kill -USR1 on mpirun: exit status 75) or a kill, rerun the same command with\n"
    "  --resume: finished entries and finished units are skipped, and entries added to the\n"
    "  job file since are run.\n"
    "  --out F     the result file (default: the job's `output:`, else JOBNAME.h5); an\n"
    "              existing one is kept: --resume keeps its rows, --force overwrites it\n"
    "  --list      check the job and print its entries and output (no MPI needed): every\n"
    "              entry as the run's preflight checks it, and its plan: the engine that\n"
    "              will run, the ranks it keeps busy, memory per rank and per node, a time\n"
    "              estimate with its basis (docs/cluster.md, \"A plan before a run\")\n"
    "  --ranks N   with --list: plan for N ranks (a large row's P/Q is shared among them;\n"
    "              default 1)\n"
    "  --nodes N   with --list: the ranks spread over N nodes (default 1: all on one node);\n"
    "              the ranks of a node times the estimate per rank must fit the node\n"
    "  --node-memory SIZE  with --list: a node's memory (default SLURM_MEM_PER_NODE, else\n"
    "              this machine's; slurm/submit passes sbatch's --mem); also the default\n"
    "              limit per rank, over the ranks of a node\n"
    "  --max-memory SIZE  the memory a rank may take (4G, 512M; default the job's\n"
    "              max_memory, HEADFUSE_MAX_MEMORY, else this machine's memory per rank):\n"
    "              an entry whose estimate exceeds it is refused before any work\n"
    "  --entry I   run only entry I (0-based), keeping its row in the state directory\n"
    "              (one Slurm array task per entry); then --collect writes RESULT.h5\n"
    "  --collect   write RESULT.h5 from the finished entries; fails if one is missing\n"
    "  The environment variable HF_EXPECT_RANKS=N makes a run with another number of\n"
    "  MPI ranks fail at once (batch scripts set it to SLURM_NTASKS).\n";

/* ------------------------------------------------------------------ the command */

/* The listing's last line: the largest estimate (entry r->big, or none) against the limit. */
static void print_memory_line(const hf_report_job_t *r)
{
    const hf_job_t *job = &r->job;
    const hf_campaign_memory_t *lim = &r->lim;
    long big = r->big;
    char a[32], b[32];
    hf_bytes_text(lim->bytes, b, sizeof b);
    if (big < 0) {
        printf("memory: every entry is certified by its bounds (no search), limit %s (%s)\n", b,
               lim->source);
        return;
    }
    char *d = hf_job_entry_describe(job, big);
    hf_bytes_text(r->plan[big].mem.total, a, sizeof a);
    printf("memory: at most %s per rank on %d rank(s) (entry %ld, %s), limit %s (%s)\n", a,
           lim->ranks, big, d ? d : job->entries[big].label, b, lim->source);
    free(d);
}

static void print_list(const hf_report_job_t *r)
{
    const hf_job_t *job = &r->job;
    char nodes[512];
    printf("job %s: %ld entries -> %s\n", job->name, job->nentries, job->output);
    for (long i = 0; i < job->nentries; i++) {
        char *d = hf_job_entry_describe(job, i);
        printf("%ld\t%s\n", i, d ? d : job->entries[i].label);
        free(d);
    }
    hf_report_plan_nodes(&r->lim, nodes, sizeof nodes);
    printf("plan: %s\n", nodes);
    for (long i = 0; i < job->nentries; i++) {
        hf_report_plan_words_t w;
        hf_report_plan_words(r->plan + i, &w);
        printf("plan %ld: engine %s; ranks %s; memory %s; time %s\n", i, w.engine, w.ranks,
               w.memory, w.time);
        if (w.warning[0])
            printf("plan %ld: warning: %s\n", i, w.warning);
    }
    print_memory_line(r);
}

/* --list: the checked job without MPI (a login node may not start MPI programs), each
 * entry checked as the preflight checks it and planned (hf_campaign_plan_row) for `ranks`
 * ranks on `nodes` nodes. Text: "job NAME: N entries -> OUTPUT", "INDEX<TAB>DESCRIPTION"
 * per entry, "plan: NODES", "plan I: ..." per entry, then "memory: ..." (the largest
 * estimate and the limit). */
static int list_job(const char *path, const char *out, const char *max_memory,
                    const char *node_memory, long ranks, long nodes, int json)
{
    hf_report_job_t r;
    hf_report_job_init(&r);
    hf_err_t e = hf_report_job(path, out, max_memory, node_memory, ranks ? (int)ranks : 1,
                               nodes ? (int)nodes : 1, &r);
    if (e == HF_OK && json)
        cli_json_print(hf_report_job_json(&r));
    else if (e == HF_OK)
        print_list(&r);
    fflush(stdout);
    hf_report_job_clear(&r);
    return e == HF_OK ? 0 : cli_fail("run", e);
}

/* One line per entry finished in this run: "[i/n] " and the row. */
static void print_row(void *ctx, long i, long n, const hf_row_t *row)
{
    (void)ctx;
    printf("[%ld/%ld] ", i + 1, n);
    cli_print_row(stdout, row, NULL);
}

int cli_cmd_run(int argc, char **argv)
{
    const char *out_opt = NULL, *max_memory = NULL, *node_memory = NULL, *pos[1];
    long entry = -1, ranks = 0, nodes = 0;
    int resume = 0, force = 0, quiet = 0, json = 0, list = 0, collect = 0, npos, status;
    cli_opt_t opts[] = {CLI_OPT_PATH("--out", &out_opt, NULL),
                        CLI_OPT_INT("--entry", &entry, 0, LONG_MAX, NULL),
                        CLI_OPT_INT("--ranks", &ranks, 1, 1L << 20, NULL),
                        CLI_OPT_INT("--nodes", &nodes, 1, 1L << 20, NULL),
                        CLI_OPT_SIZE("--max-memory", &max_memory),
                        CLI_OPT_SIZE("--node-memory", &node_memory),
                        CLI_OPT_FLAG("--resume", &resume),
                        CLI_OPT_FLAG("--force", &force),
                        CLI_OPT_FLAG("--collect", &collect),
                        CLI_OPT_FLAG("--list", &list),
                        CLI_OPT_FLAG("--quiet", &quiet),
                        CLI_OPT_FLAG("--json", &json),
                        CLI_OPT_END};
    if ((status = cli_parse("run", usage_text, argc, argv, opts, pos, 1, &npos)) != CLI_GO)
        return status;
    if (npos != 1) {
        fprintf(stderr, "headfuse run: give one job file (see headfuse run --help)\n");
        return 2;
    }
    if (entry >= 0 && collect) {
        fprintf(stderr, "headfuse run: --entry and --collect exclude each other\n");
        return 2;
    }
    if ((ranks || nodes || node_memory) && !list) {
        fprintf(stderr, "headfuse run: --ranks, --nodes and --node-memory go with --list (a run "
                        "has the ranks and nodes mpirun gives it)\n");
        return 2;
    }
    if (list)
        return list_job(pos[0], out_opt, max_memory, node_memory, ranks, nodes, json);

    int rank, size;
    char start[32];
    cli_mpi_start(&argc, &argv, &rank, &size, start, sizeof start);

    hf_job_t job;
    hf_job_init(&job);
    hf_result_t res;
    hf_result_init(&res);
    char *cmdline = hf_campaign_command_line(argc, argv);
    hf_campaign_job_opts_t o = {.resume = resume,
                                .force = force,
                                .quiet = quiet,
                                .collect = collect,
                                .entry = entry,
                                .command_line = cmdline,
                                .start = start,
                                .max_memory = max_memory};
    hf_campaign_job_outcome_t oc = {0};
    /* every rank checks the whole job before any work (the same files, the same answer) */
    hf_err_t e = hf_agree_all(MPI_COMM_WORLD, hf_job_load(&job, pos[0], out_opt));
    if (e == HF_OK)
        e = hf_campaign_job_run(MPI_COMM_WORLD, &job, &o, json ? NULL : print_row, NULL, &res, &oc);
    if (e != HF_OK) {
        /* every rank agreed on e; the rank that holds its message reports it */
        status = cli_fail_mpi(MPI_COMM_WORLD, "run", e);
    } else {
        status = 0;
        if (rank == 0 && json) {
            json_t *rows = json_array();
            for (long i = 0; i < res.nrows; i++)
                json_array_append_new(rows, hf_report_row_json(res.rows + i));
            cli_json_print(rows);
        } else if (rank == 0 && oc.complete)
            printf("%s: already complete (%ld rows); nothing to do\n", job.output, job.nentries);
        else if (rank == 0 && entry >= 0 && oc.entry_done)
            printf("entry %ld: already finished in %s.shards\n", entry, job.output);
        else if (rank == 0 && entry < 0)
            printf("%s: %ld rows (%ld run now, %ld finished earlier)\n", job.output, job.nentries,
                   oc.ran, oc.skipped);
    }
    fflush(stdout);
    hf_result_clear(&res);
    hf_job_clear(&job);
    free(cmdline);
    return cli_mpi_end(status);
}
