/* headfuse target: what a target is, its face-rule lower bound and product-construction
 * upper bound; builds and verifies the product head when it is small enough; exports
 * the target as JSON. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/cli_common.h"
#include "headfuse/bounds.h"
#include "headfuse/verify.h"

/* The product head is built and verified exactly up to this many atoms. */
#define PRODUCT_HEAD_MAX (1L << 16)
/* ... and listed atom by atom in the text output up to this many (--json: always). */
#define PRODUCT_HEAD_PRINT_MAX 64

static const char *usage_text =
    "usage: headfuse target (FILE.json | --family NAME:d=N[,k=K]) [--export OUT.json] [--json]\n"
    "  Prints d, dv, heads, head-atom terms, the face-rule lower bound LB and the\n"
    "  product-construction upper bound UB; when UB <= 65536 the product head is built,\n"
    "  checked by the independent exact verifier and printed: its keys, weights and\n"
    "  values (text: up to 64 atoms; --json: always, as product_head). In --json, lb and\n"
    "  ub are numbers below 2^53 and decimal strings from 2^53 on.\n";

/* Build the product head into h (initialised by the caller) and check it exactly and
 * numerically. */
static hf_err_t check_product(const hf_target_t *t, hf_head_t *h, int *ok, double *err)
{
    hf_err_t e = hf_bounds_product_head(t, PRODUCT_HEAD_MAX, h);
    if (e == HF_OK) {
        e = hf_verify_head(t, h, ok, NULL);
        *err = hf_verify_numeric(t, h, 64, 1.0, 1);
    }
    return e;
}

int cli_cmd_target(int argc, char **argv)
{
    const char *family = NULL, *export_path = NULL, *pos[1];
    int json = 0, help = 0, npos, status = 0;
    cli_opt_t opts[] = {{"--family", 1, &family, NULL},
                        {"--export", 1, &export_path, NULL},
                        {"--json", 0, NULL, &json},
                        {"--help", 0, NULL, &help},
                        {NULL, 0, NULL, NULL}};
    if ((status = cli_parse("target", argc, argv, opts, pos, 1, &npos)))
        return status;
    if (help) {
        fputs(usage_text, stdout);
        return 0;
    }
    hf_target_t t;
    hf_head_t product;
    fmpz_t lb, ub;
    fmpz_init(lb);
    fmpz_init(ub);
    int ub_exact = 0, have_target = 0, product_ok = 0;
    double product_err = 0;
    hf_err_t e;
    HF_CHECK(e, cli_load_target(npos ? pos[0] : NULL, family, &t), fail);
    have_target = 1;
    hf_head_init(&product, t.d, t.dv);
    if (export_path)
        HF_CHECK(e, hf_target_save_json(&t, export_path), fail);
    HF_CHECK(e, hf_bounds_lower(&t, lb), fail);
    HF_CHECK(e, hf_bounds_upper(&t, ub, &ub_exact), fail);
    int small = ub_exact && fmpz_cmp_si(ub, PRODUCT_HEAD_MAX) <= 0;
    if (small)
        HF_CHECK(e, check_product(&t, &product, &product_ok, &product_err), fail);
    if (small && !product_ok) {
        e = hf_error(HF_ERR_INTERNAL, "%s: the product head failed exact verification", t.name);
        goto fail;
    }

    if (json) {
        json_t *o = json_object();
        json_object_set_new(o, "name", json_string(t.name));
        json_object_set_new(o, "d", json_integer(t.d));
        json_object_set_new(o, "dv", json_integer(t.dv));
        json_object_set_new(o, "heads", json_integer(t.nheads));
        json_object_set_new(o, "head_atoms", json_integer(hf_target_head_atoms(&t)));
        json_object_set_new(o, "lb", cli_json_bigint(lb));
        json_object_set_new(o, "ub", cli_json_bigint(ub));
        json_object_set_new(o, "ub_exact", json_boolean(ub_exact));
        json_object_set_new(o, "certified", json_boolean(ub_exact && fmpz_equal(lb, ub)));
        if (small) {
            json_t *p = json_object(), *head = cli_json_head(&product);
            json_object_set_new(p, "atoms", json_integer(product.natoms));
            json_object_set_new(p, "verified", json_true());
            json_object_set_new(p, "max_abs_error", json_real(product_err));
            json_object_update(p, head); /* keys, weights, values */
            json_decref(head);
            json_object_set_new(o, "product_head", p);
        } else {
            json_object_set_new(o, "product_head", json_null());
        }
        if (export_path)
            json_object_set_new(o, "exported", json_string(export_path));
        cli_json_print(o);
    } else {
        char *ls = fmpz_get_str(NULL, 10, lb), *us = fmpz_get_str(NULL, 10, ub);
        printf("target      %s  (d = %d, dv = %d, %d heads, %ld head-atom terms)\n", t.name, t.d,
               t.dv, t.nheads, hf_target_head_atoms(&t));
        printf("lower bound %s  (face rule)\n", ls);
        printf("upper bound %s  (product construction%s)\n", us,
               ub_exact ? "" : "; too large to merge keys: product of head sizes");
        if (ub_exact && fmpz_equal(lb, ub))
            printf("certified   m* = %s  (LB = UB)\n", ls);
        if (small)
            printf("product     %ld atoms, verified exactly; max numeric error %.2e\n",
                   product.natoms, product_err);
        if (small && product.natoms <= PRODUCT_HEAD_PRINT_MAX) {
            printf("product head: key -> weight, value\n");
            cli_print_head(stdout, &product, "  ");
        } else if (small) {
            printf("product head: %ld atoms, listed by --json (product_head)\n", product.natoms);
        }
        if (export_path)
            printf("exported    %s\n", export_path);
        flint_free(ls);
        flint_free(us);
    }
    goto done;
fail:
    status = cli_fail("target", e);
done:
    if (have_target) {
        hf_head_clear(&product);
        hf_target_clear(&t);
    }
    fmpz_clear(lb);
    fmpz_clear(ub);
    return status;
}
