/* Placeholder subcommands until the CLI lands (removed then). */
#include <stdio.h>

#include "cli/cli.h"

int cli_cmd_target(int argc, char **argv)
{
    (void)argc;
    (void)argv;
    fprintf(stderr, "headfuse target: not built yet\n");
    return 1;
}

int cli_cmd_check(int argc, char **argv)
{
    (void)argc;
    (void)argv;
    fprintf(stderr, "headfuse check: not built yet\n");
    return 1;
}
