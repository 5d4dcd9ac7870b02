/* headfuse check: decide exactly whether one key set can carry a single head equal to
 * the target; print the witness (checked again by the independent verifier) or the
 * reason it is infeasible. The library decides (hf_report_check); this file parses the
 * options and prints. */
#include <stdio.h>
#include <stdlib.h>

#include "cli/cli.h"
#include "cli/cli_common.h"
#include "headfuse/exact.h"
#include "headfuse/report.h"

static const char *usage_text =
    "usage: headfuse check (FILE.json | --family NAME:d=N[,k=K]) --keys \"0,0;1,0;0,1;1,1\" "
    "[--json]\n"
    "  Decides exactly whether the keys (';' between keys, ',' between coordinates) can\n"
    "  carry one head equal to the target. Exit status 0 when feasible, 1 when\n"
    "  infeasible (the answer, as grep and cmp say 1), 2 for bad input, others for errors.\n";

static void print_plain(const hf_target_t *t, const hf_report_check_t *r)
{
    printf("target    %s\nsupport   %ld keys\n", t->name, r->m);
    printf("feasible  %s  (%s)\n", r->feasible ? "yes" : "no",
           hf_reason_text((hf_reason_t)r->reason));
    if (!r->feasible)
        return;
    printf("witness   key -> weight, value  (verified exactly and independently)\n");
    cli_print_head(stdout, &r->witness, "  ");
    printf("max |head - target| at 64 random queries: %.2e\n", r->err);
}

int cli_cmd_check(int argc, char **argv)
{
    const char *family = NULL, *keys_text = NULL, *pos[1];
    int json = 0, npos, status;
    cli_opt_t opts[] = {CLI_OPT_STR("--family", &family),
                        {"--keys", CLI_STR, &keys_text, 0, 0, "KEYS"},
                        CLI_OPT_FLAG("--json", &json),
                        CLI_OPT_END};
    if ((status = cli_parse("check", usage_text, argc, argv, opts, pos, 1, &npos)) != CLI_GO)
        return status;
    hf_target_t t;
    hf_target_init_empty(&t);
    hf_report_check_t r;
    hf_report_check_init(&r);
    int64_t *keys = NULL;
    long m = 0;
    hf_err_t e = cli_load_target(npos ? pos[0] : NULL, family, &t);
    if (e == HF_OK)
        e = hf_keys_parse(keys_text, t.d, "--keys", &keys, &m);
    if (e == HF_OK)
        e = hf_report_check(&t, m, keys, &r);
    if (e == HF_OK && json)
        cli_json_print(hf_report_check_json(&t, &r));
    else if (e == HF_OK)
        print_plain(&t, &r);
    status = e != HF_OK ? cli_fail("check", e) : r.feasible ? 0 : HF_EXIT_NO;
    hf_report_check_clear(&r);
    hf_target_clear(&t);
    free(keys);
    return status;
}
