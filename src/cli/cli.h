/* Subcommands of the headfuse executable. Each returns the process exit status. */
#ifndef HF_CLI_H
#define HF_CLI_H

int cli_cmd_target(int argc, char **argv);
int cli_cmd_check(int argc, char **argv);

#endif
