/* headfuse check: decide exactly whether one key set can carry a single head equal to
 * the target; print the witness (checked again by the independent verifier) or the
 * reason it is infeasible. */
#include <stdio.h>
#include <stdlib.h>

#include "cli/cli.h"
#include "cli/cli_common.h"
#include "headfuse/exact.h"
#include "headfuse/verify.h"

static const char *usage_text =
    "usage: headfuse check (FILE.json | --family NAME:d=N[,k=K]) --keys \"0,0;1,0;0,1;1,1\" "
    "[--json]\n"
    "  Decides exactly whether the keys (';' between keys, ',' between coordinates) can\n"
    "  carry one head equal to the target. Exit status 0 when feasible, 1 when\n"
    "  infeasible (the answer, as grep and cmp say 1), 2 for bad input, others for errors.\n";

static void print_plain(const hf_target_t *t, long m, int feasible, hf_reason_t reason,
                        const hf_head_t *w, double err)
{
    printf("target    %s\nsupport   %ld keys\n", t->name, m);
    printf("feasible  %s  (%s)\n", feasible ? "yes" : "no", hf_reason_text(reason));
    if (!feasible)
        return;
    printf("witness   key -> weight, value  (verified exactly and independently)\n");
    cli_print_head(stdout, w, "  ");
    printf("max |head - target| at 64 random queries: %.2e\n", err);
}

int cli_cmd_check(int argc, char **argv)
{
    const char *family = NULL, *keys_text = NULL, *pos[1];
    int json = 0, help = 0, npos, status;
    cli_opt_t opts[] = {CLI_OPT_STR("--family", &family),
                        {"--keys", CLI_STR, &keys_text, 0, 0, "KEYS"},
                        CLI_OPT_FLAG("--json", &json),
                        CLI_OPT_FLAG("--help", &help),
                        CLI_OPT_END};
    if ((status = cli_parse("check", argc, argv, opts, pos, 1, &npos)))
        return status;
    if (help) {
        fputs(usage_text, stdout);
        return 0;
    }
    hf_target_t t;
    hf_target_init_empty(&t);
    hf_fraction_t f;
    hf_fraction_init(&f);
    hf_exact_t *ex = NULL;
    hf_head_t w;
    hf_head_init(&w, 0, 0); /* empty until the target gives its dimensions */
    int64_t *keys = NULL;
    long m = 0;
    int feasible = 0, ok = 1;
    hf_reason_t reason = HF_REASON_MODP_RANK;
    double err = 0;
    hf_err_t e;
    HF_CHECK(e, cli_load_target(npos ? pos[0] : NULL, family, &t), fail);
    hf_head_init(&w, t.d, t.dv);
    HF_CHECK(e, hf_keys_parse(keys_text, t.d, "--keys", &keys, &m), fail);
    HF_CHECK(e, hf_fraction_from_target(&f, &t), fail);
    HF_CHECK(e, hf_exact_create(&f, &ex), fail);
    HF_CHECK(e, hf_exact_check(ex, m, keys, &feasible, &reason, &w), fail);
    if (feasible) {
        const char *why = NULL;
        HF_CHECK(e, hf_verify_head(&t, &w, &ok, &why), fail);
        if (!ok) {
            e = hf_error(HF_ERR_INTERNAL,
                         "the exact test's witness failed independent verification (%s)",
                         why ? why : "?");
            goto fail;
        }
        err = hf_verify_numeric(&t, &w, 64, 1.0, 1);
    }
    if (json) {
        json_t *o = json_object();
        json_object_set_new(o, "target", json_string(t.name));
        json_object_set_new(o, "m", json_integer(m));
        json_object_set_new(o, "feasible", json_boolean(feasible));
        json_object_set_new(o, "reason", json_string(hf_reason_name(reason)));
        json_object_set_new(o, "reason_text", json_string(hf_reason_text(reason)));
        if (feasible) {
            json_object_set_new(o, "witness", hf_head_to_json(&w, NULL, 1));
            json_object_set_new(o, "verified", json_true());
            json_object_set_new(o, "max_abs_error", json_real(err));
        }
        cli_json_print(o);
    } else {
        print_plain(&t, m, feasible, reason, &w, err);
    }
    status = feasible ? 0 : HF_EXIT_NO;
    goto done;
fail:
    status = cli_fail("check", e);
done:
    hf_exact_destroy(&ex);
    hf_fraction_clear(&f);
    hf_head_clear(&w);
    hf_target_clear(&t);
    free(keys);
    return status;
}
