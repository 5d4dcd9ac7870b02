/* headfuse target: what a target is, its lower bound (with the rule that gives it) and
 * product-construction upper bound; builds and verifies the product head when it is
 * small enough; exports the target as JSON. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/cli_common.h"
#include "headfuse/algebra.h"
#include "headfuse/bounds.h"
#include "headfuse/campaign.h"
#include "headfuse/report.h"
#include "headfuse/search.h"
#include "headfuse/verify.h"

/* The product head is built and verified exactly up to this many atoms. */
#define PRODUCT_HEAD_MAX (1L << 16)
/* ... and listed atom by atom in the text output up to this many (--json: always). */
#define PRODUCT_HEAD_PRINT_MAX 64
/* The numeric cross-check evaluates the head at up to 64 queries, fewer for large heads
 * so that it stays near 2^22 atom-coordinate products (W_16: 4 queries, 0.04 s instead
 * of 0.6 s); the exact verification decides, this only confirms. */
#define NUMERIC_WORK (1L << 22)

static const char *usage_text =
    "usage: headfuse target (FILE.json | --family NAME:d=N[,k=K]) [--export OUT.json] [--json]\n"
    "                [--span S [--ranks N] [--nodes N] [--max-memory SIZE]\n"
    "                [--node-memory SIZE]]\n"
    "  Prints d, dv, heads, head-atom terms, the lower bound LB with the rule that gives\n"
    "  it (face rule, vertices of the Newton polytope of the reduced denominator, disjoint\n"
    "  faces of it, slices, or the two- or three-dimensional argument: the best bound over\n"
    "  all integer keys), the number of those vertices, the product-construction\n"
    "  upper bound UB, and the minimum over all integer keys when it is proven (two and\n"
    "  three dimensions, docs/search.md); in three dimensions also the face types of the\n"
    "  Newton polytope and the span-free lower bound the face accounting proves; when\n"
    "  UB <= 65536 the product head is built, checked by\n"
    "  the independent exact verifier and printed: its keys, weights and values (text: up\n"
    "  to 64 atoms; --json: always, as product_head). --json adds lb_rule,\n"
    "  newton_vertices (null when out of reach), m_star_certified (null unless\n"
    "  proven) and span_free (the 2-D or 3-D argument's counts, null when none applies,\n"
    "  span_free_note says why). Text: an 'open' line gives LB <= m* <= UB over all keys\n"
    "  when nothing certifies m*;\n"
    "  lb and ub are numbers below 2^53 and decimal strings from 2^53 on. memory (--json:\n"
    "  fraction_bytes_estimate) estimates what building P/Q takes on each rank of a search\n"
    "  (docs/cluster.md, \"Memory per rank\").\n"
    "  --span S adds the memory estimate per rank of a search at span S (docs/targets.md,\n"
    "  \"Limits\") against the limit (--max-memory SIZE, else HEADFUSE_MAX_MEMORY, else this\n"
    "  machine's memory): what headfuse search and run check before they start (--json:\n"
    "  memory). --ranks N: for a search on N ranks (a large row's P/Q is shared among them;\n"
    "  default 1). It also prints the plan of the search (--json: memory.plan): the engine\n"
    "  that will run, the ranks it keeps busy, memory per rank and per node (--nodes N,\n"
    "  default 1; --node-memory SIZE, default this machine's), a time estimate with its\n"
    "  basis (docs/cluster.md, \"A plan before a run\").\n";

/* The rule behind LB, in words (the rule table, bounds.h). */
static const char *rule_words(const char *rule)
{
    const char *w = hf_rule_words(rule);
    return w ? w : rule;
}

/* The counts of the 2-D or 3-D span-free argument (search.h), or null when none ran. */
static json_t *span_free_json(const hf_certificate_t *c)
{
    if (!c->dim)
        return json_null();
    json_t *o = json_object();
    json_object_set_new(o, "dim", json_integer(c->dim));
    json_object_set_new(o, "lb", json_integer(c->lb));
    json_object_set_new(
        o, "rule", json_string(hf_rule_name(c->dim == 3 ? HF_RULE_NEWTON_3D : HF_RULE_NEWTON_2D)));
    json_object_set_new(o, "supp_q", json_integer(c->supp_q));
    json_object_set_new(o, "supp_q_feasible", json_boolean(c->supp_q_feasible));
    json_object_set_new(o, "boundary", json_integer(c->boundary));
    json_object_set_new(o, "other_supports_at_least", json_integer(c->nonpoint));
    if (c->dim == 3) {
        json_object_set_new(o, "faces", json_string(c->faces));
        json_object_set_new(o, "weakest", json_string(c->weakest));
        json_object_set_new(o, "shares_at_least", json_integer(c->shares));
        json_object_set_new(o, "zones_at_least", json_integer(c->zones));
    }
    return o;
}

/* The three-dimensional face accounting in two lines: the face types, and what it proves. */
static void print_faces3d(const hf_certificate_t *c)
{
    printf("faces       Newt(Q): %s\n", c->faces);
    printf("span-free   m* >= %ld over all integer keys  (face accounting: a head whose hull is "
           "a translate of Newt(Q) has the keys supp(Q), %ld, %s; any other hull forces at "
           "least %ld keys, the fewest on %s)\n",
           c->lb, c->supp_q, c->supp_q_feasible ? "feasible" : "infeasible", c->nonpoint,
           c->weakest);
}

/* The memory a search at span would take (span > 0), as JSON (*j) or printed: the
 * estimate and the limit, what search and run check (hf_campaign_check_row). */
/* What a plan is asked for: --span, --max-memory, --node-memory, --ranks, --nodes. */
typedef struct {
    int span, ranks, nodes;
    const char *max_memory, *node_memory;
} plan_opts_t;

/* The plan (docs/cluster.md, "A plan before a run") printed, or into the JSON object o. */
static void plan_report(const hf_campaign_plan_t *p, const hf_campaign_memory_t *lim, json_t *o)
{
    int fits = !lim->node_check || lim->node_bytes <= 0 || p->node_total <= lim->node_bytes;
    if (o) {
        json_t *pj = hf_report_plan_json(p);
        json_object_set_new(pj, "nodes", json_integer(lim->nodes));
        json_object_set_new(pj, "node_memory_bytes",
                            lim->node_bytes > 0 ? json_real(lim->node_bytes) : json_null());
        json_object_set_new(pj, "node_memory_source", json_string(lim->node_source));
        json_object_set_new(pj, "node_fits", json_boolean(fits));
        json_object_set_new(pj, "node_checked", json_boolean(lim->node_check));
        json_object_set_new(o, "plan", pj);
        return;
    }
    hf_report_plan_words_t w;
    char nodes[512];
    hf_report_plan_words(p, &w);
    hf_report_plan_nodes(lim, nodes, sizeof nodes);
    printf("plan        %s\n", nodes);
    printf("plan        engine %s\n", w.engine);
    printf("plan        ranks %s\n", w.ranks);
    printf("plan        memory %s%s\n", w.memory,
           p->shortcut        ? ""
           : !lim->node_check ? " (not checked against this machine's memory: the limit "
                                "per rank was given; --node-memory SIZE checks a node)"
           : fits             ? ", within a node"
                              : ": more than a node holds; run --list and slurm/submit refuse it");
    printf("plan        time %s\n", w.time);
    if (w.warning[0])
        printf("plan        warning: %s\n", w.warning);
}

static hf_err_t memory_report(const hf_target_t *t, const plan_opts_t *po, json_t **j)
{
    hf_bounds_t b;
    hf_bounds_init(&b);
    hf_campaign_memory_t lim;
    hf_campaign_plan_t plan;
    hf_search_opts_t so = {.span = po->span};
    int shortcut = 0, span = po->span;
    hf_err_t e =
        hf_campaign_memory_plan(po->max_memory, po->node_memory, NULL, po->ranks, po->nodes, &lim);
    /* the plan for these ranks, not refused here: printed against the limits */
    hf_campaign_memory_t all = {.bytes = HUGE_VAL, .ranks = lim.ranks};
    all.node_ranks = lim.node_ranks;
    if (e == HF_OK)
        e = hf_bounds_compute(t, &b);
    if (e == HF_OK)
        e = hf_campaign_certified(t, &so, &b, "max_atoms", &shortcut);
    hf_err_t c = e == HF_OK ? hf_campaign_plan_row(t, &so, &b, shortcut, &all, &plan) : e;
    hf_search_memory_t m = plan.mem;
    hf_bounds_clear(&b);
    if (e != HF_OK || c == HF_ERR_NOMEM)
        return e != HF_OK ? e : c;
    char tot[32], lm[32], base[32], pq[32], box[32];
    hf_bytes_text(m.total, tot, sizeof tot);
    hf_bytes_text(lim.bytes, lm, sizeof lm);
    hf_bytes_text(m.base, base, sizeof base);
    hf_bytes_text(m.fraction, pq, sizeof pq);
    hf_bytes_text(m.box, box, sizeof box);
    int fits = m.total <= lim.bytes;
    if (j) {
        json_t *o = json_object();
        json_object_set_new(o, "span", json_integer(span));
        json_object_set_new(o, "search", json_boolean(!shortcut && c == HF_OK));
        if (c != HF_OK)
            json_object_set_new(o, "refused", json_string(hf_error_msg()));
        if (!shortcut && c == HF_OK) {
            json_object_set_new(o, "bytes", json_real(m.total));
            json_object_set_new(o, "ranks", json_integer(m.ranks));
            json_object_set_new(o, "large_row", json_boolean(m.large));
            json_object_set_new(o, "process", json_real(m.base));
            json_object_set_new(o, "fraction", json_real(m.fraction));
            json_object_set_new(o, "box", json_real(m.box));
            json_object_set_new(o, "keys", json_real(m.keys));
            json_object_set_new(o, "bytes_per_key",
                                json_real(m.search_per_key + m.witness_per_key));
            json_object_set_new(o, "fits", json_boolean(fits));
        }
        json_object_set_new(o, "limit", json_real(lim.bytes));
        json_object_set_new(o, "limit_source", json_string(lim.source));
        if (c == HF_OK)
            plan_report(&plan, &lim, o);
        *j = o;
    } else if (c != HF_OK) {
        printf("memory      span %d: no search can be built: %s\n", span, hf_error_msg());
    } else if (shortcut) {
        printf("memory      span %d: %s, no search is built\n", span,
               shortcut == 2 ? "below an extent of Newt(Q), no support fits (infeasible)"
                             : "certified by its bounds");
    } else if (m.large) {
        char held[32], buf[32];
        hf_bytes_text(m.held, held, sizeof held);
        hf_bytes_text(m.buffers, buf, sizeof buf);
        printf("memory      about %s per rank for a search at span %d on %d rank(s), a large row "
               "(%s process + %s of P/Q held, a share of %.2f of its slices, + %s buffers), %s "
               "the limit %s (%s)%s\n",
               tot, span, m.ranks, base, held, m.share, buf, fits ? "within" : "more than", lm,
               lim.source,
               fits ? "" : ": search and run refuse it; --max-memory SIZE raises the limit");
    } else {
        printf("memory      about %s per rank for a search at span %d (%s process + %s P/Q + %s "
               "box + %.0f keys x %.0f B), %s the limit %s (%s)%s\n",
               tot, span, base, pq, box, m.keys, m.search_per_key + m.witness_per_key,
               fits ? "within" : "more than", lm, lim.source,
               fits ? "" : ": search and run refuse it; --max-memory SIZE raises the limit");
    }
    if (!j && c == HF_OK)
        plan_report(&plan, &lim, NULL);
    return HF_OK;
}

/* Build the product head into h (initialised by the caller) and check it exactly and
 * numerically. */
static hf_err_t check_product(const hf_target_t *t, hf_head_t *h, int *ok, double *err)
{
    hf_err_t e = hf_bounds_product_head(t, PRODUCT_HEAD_MAX, h);
    if (e == HF_OK) {
        e = hf_verify_head(t, h, ok, NULL);
        long n = NUMERIC_WORK / (h->natoms * t->d + 1);
        *err = hf_verify_numeric(t, h, n > 64 ? 64 : n < 4 ? 4 : (int)n, 1.0, 1);
    }
    return e;
}

int cli_cmd_target(int argc, char **argv)
{
    const char *family = NULL, *export_path = NULL, *max_memory = NULL, *node_memory = NULL,
               *pos[1];
    long span = 0, ranks = 0, nodes = 0;
    int json = 0, help = 0, npos, status = 0;
    cli_opt_t opts[] = {CLI_OPT_STR("--family", &family),
                        CLI_OPT_PATH("--export", &export_path, NULL),
                        CLI_OPT_FLAG("--json", &json),
                        CLI_OPT_INT("--span", &span, 1, HF_SPAN_MAX, NULL),
                        CLI_OPT_INT("--ranks", &ranks, 1, 1L << 20, NULL),
                        CLI_OPT_INT("--nodes", &nodes, 1, 1L << 20, NULL),
                        CLI_OPT_STR("--max-memory", &max_memory),
                        CLI_OPT_STR("--node-memory", &node_memory),
                        CLI_OPT_FLAG("--help", &help),
                        CLI_OPT_END};
    if ((status = cli_parse("target", argc, argv, opts, pos, 1, &npos)))
        return status;
    if (help) {
        fputs(usage_text, stdout);
        return 0;
    }
    if ((status = cli_check_size("target", "--max-memory", max_memory)) ||
        (status = cli_check_size("target", "--node-memory", node_memory)))
        return status;
    if ((max_memory || ranks || nodes || node_memory) && !span) {
        fprintf(stderr,
                "headfuse target: %s goes with --span S (the estimate of a search at "
                "span S)\n",
                max_memory ? "--max-memory"
                : ranks    ? "--ranks"
                : nodes    ? "--nodes"
                           : "--node-memory");
        return 2;
    }
    plan_opts_t po = {(int)span, ranks ? (int)ranks : 1, nodes ? (int)nodes : 1, max_memory,
                      node_memory};
    hf_target_t t;
    hf_target_init_empty(&t);
    hf_lower_t low;
    hf_head_t product;
    hf_certificate_t cert;
    fmpz_t ub, best;
    const char *best_rule = NULL;
    hf_lower_init(&low);
    fmpz_init(ub);
    fmpz_init(best);
    hf_head_init(&product, 0, 0); /* empty until the target gives its dimensions */
    int ub_exact = 0, product_ok = 0;
    double product_err = 0, pq_bytes = 0;
    hf_err_t e;
    HF_CHECK(e, cli_load_target(npos ? pos[0] : NULL, family, &t), fail);
    HF_CHECK(e, hf_fraction_estimate(&t, &pq_bytes), fail);
    hf_head_init(&product, t.d, t.dv);
    if (export_path)
        HF_CHECK(e, hf_target_save_json(&t, export_path), fail);
    HF_CHECK(e, hf_bounds_lower_info(&t, &low), fail);
    HF_CHECK(e, hf_bounds_upper(&t, ub, &ub_exact), fail);
    HF_CHECK(e, hf_search_certify(&t, &cert), fail);
    hf_search_best_lower(&low, &cert, best, &best_rule);
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
        json_object_set_new(o, "lb", hf_json_bigint(best));
        json_object_set_new(o, "lb_rule", json_string(best_rule));
        json_object_set_new(o, "newton_vertices",
                            low.newton_known ? hf_json_bigint(low.newton_vertices) : json_null());
        json_object_set_new(o, "ub", hf_json_bigint(ub));
        json_object_set_new(o, "ub_exact", json_boolean(ub_exact));
        json_object_set_new(o, "certified",
                            json_boolean((ub_exact && fmpz_equal(low.lb, ub)) || cert.certified));
        /* m* whenever it is proven: by the 2-D or 3-D certificate, or by LB = UB (then the
         * rule is LB's; docs/math.md §1.4) */
        int lb_ub = ub_exact && fmpz_equal(low.lb, ub);
        json_object_set_new(o, "m_star_certified",
                            cert.certified ? json_integer(cert.m_star)
                            : lb_ub        ? hf_json_bigint(ub)
                                           : json_null());
        json_object_set_new(o, "certified_rule",
                            cert.certified ? json_string(cert.rule)
                            : lb_ub        ? json_string(low.rule)
                                           : json_null());
        json_object_set_new(o, "span_free", span_free_json(&cert));
        /* why span_free is null: the arguments are for two and three variables */
        json_object_set_new(o, "span_free_note",
                            cert.dim ? json_null()
                            : t.d == 2 || t.d == 3
                                ? json_string("the 2-D/3-D argument's conditions do not hold "
                                              "(docs/search.md, \"Certified over all keys\")")
                                : json_string("the span-free arguments are for d = 2 and "
                                              "d = 3 (docs/search.md, \"Certified over all "
                                              "keys\")"));
        json_object_set_new(o, "fraction_bytes_estimate", json_real(pq_bytes));
        if (small) {
            json_t *p = json_object(), *head = hf_head_to_json(&product, NULL, 1);
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
        if (span) {
            json_t *mj = NULL;
            if ((e = memory_report(&t, &po, &mj)) != HF_OK) {
                json_decref(o);
                goto fail;
            }
            json_object_set_new(o, "memory", mj);
        }
        cli_json_print(o);
    } else {
        char *ls = fmpz_get_str(NULL, 10, low.lb), *us = fmpz_get_str(NULL, 10, ub);
        char *bs = fmpz_get_str(NULL, 10, best);
        printf("target      %s  (d = %d, dv = %d, %d heads, %ld head-atom terms)\n", t.name, t.d,
               t.dv, t.nheads, hf_target_head_atoms(&t));
        printf("lower bound %s  (%s%s)\n", bs, rule_words(best_rule),
               low.complete || best_rule != low.rule
                   ? ""
                   : "; capped: may be weaker than the rule allows");
        if (!low.newton_known)
            printf("newton      vertex count of the Newton polytope out of reach\n");
        printf("upper bound %s  (product construction%s)\n", us,
               ub_exact ? "" : "; too large to merge keys: product of head sizes");
        if (ub_exact && fmpz_equal(low.lb, ub))
            printf("certified   m* = %s  (LB = UB)\n", ls);
        else if (cert.certified)
            printf("certified   m* = %ld over all integer keys  (%s; %s)\n", cert.m_star,
                   cert.dim == 3 ? "three-dimensional face accounting, newton_3d"
                                 : "two-dimensional Newton argument",
                   cert.unique ? "the minimal support is supp(Q), unique up to translation"
                               : "supp(Q) is a minimal support");
        else
            printf("open        %s <= m* <= %s over all integer keys  (no certificate; a "
                   "search at span S gives m* within it, docs/math.md §1.4)\n",
                   bs, us);
        if (cert.dim == 3)
            print_faces3d(&cert);
        if (small)
            printf("product     %ld atoms, verified exactly; max numeric error %.2e\n",
                   product.natoms, product_err);
        if (small && product.natoms <= PRODUCT_HEAD_PRINT_MAX) {
            printf("product head: key -> weight, value\n");
            cli_print_head(stdout, &product, "  ");
        } else if (small) {
            printf("product head: %ld atoms, listed by --json (product_head)\n", product.natoms);
        }
        /* P/Q is what a search holds: the first thing to know before asking for memory per
         * rank; a large row holds it in slices over the ranks */
        char size[32];
        hf_bytes_text(pq_bytes, size, sizeof size);
        printf("memory      P/Q: about %s (estimate), built on each rank of a search, or dealt in "
               "slices over the ranks on a large row (docs/cluster.md, \"Memory per rank\")\n",
               size);
        if (export_path)
            printf("exported    %s\n", export_path);
        flint_free(bs);
        flint_free(ls);
        flint_free(us);
        if (span && (e = memory_report(&t, &po, NULL)) != HF_OK)
            goto fail;
    }
    goto done;
fail:
    status = cli_fail("target", e);
done:
    hf_head_clear(&product);
    hf_target_clear(&t);
    hf_lower_clear(&low);
    fmpz_clear(best);
    fmpz_clear(ub);
    return status;
}
