/* headfuse: command-line entry point; dispatches to the subcommands. */
#include <stdio.h>
#include <string.h>

#include "cli/cli.h"
#include "headfuse/campaign.h"

static const struct {
    const char *name;
    int (*run)(int argc, char **argv);
    const char *help;
} commands[] = {
    {"target", cli_cmd_target, "describe a target: size, lower and upper bounds; export JSON"},
    {"check", cli_cmd_check, "decide exactly whether one key set can represent a target"},
    {"search", cli_cmd_search, "find every minimal key set within a span (MPI, resumable)"},
    {"run", cli_cmd_run, "run every entry of a job file into one result file (MPI, resumable)"},
    {"table", cli_cmd_table, "print the minimal-atom table of result files"},
    {"verify", cli_cmd_verify, "re-check every stored witness with the independent verifier"},
    {"approx", cli_cmd_approx, "best m-atom heads below the exact minimum (PETSc/TAO, MPI)"},
};

static void usage(FILE *out)
{
    fprintf(out, "usage: headfuse COMMAND [options]   (headfuse COMMAND --help)\n\ncommands:\n");
    for (size_t i = 0; i < sizeof commands / sizeof *commands; i++)
        fprintf(out, "  %-8s %s\n", commands[i].name, commands[i].help);
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        usage(stderr);
        return 2;
    }
    if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") || !strcmp(argv[1], "help")) {
        usage(stdout);
        return 0;
    }
    if (!strcmp(argv[1], "--version")) {
        printf("headfuse %s (%s)\n", HF_VERSION, HF_GIT_COMMIT);
        return 0;
    }
    if (hf_campaign_faults_from_env() != HF_OK) {
        fprintf(stderr, "headfuse: %s\n", hf_error_msg());
        return 2;
    }
    for (size_t i = 0; i < sizeof commands / sizeof *commands; i++)
        if (!strcmp(argv[1], commands[i].name))
            return commands[i].run(argc - 1, argv + 1);
    fprintf(stderr, "headfuse: unknown command '%s'\n", argv[1]);
    usage(stderr);
    return 2;
}
