/* headfuse target: what a target is, its lower bound (with the rule that gives it) and
 * product-construction upper bound; builds and verifies the product head when it is
 * small enough; exports the target as JSON. The library computes (headfuse/report.h);
 * this file parses the options and prints. */
#include <stdio.h>

#include "cli/cli.h"
#include "cli/cli_common.h"
#include "headfuse/report.h"

/* The product head is listed atom by atom in the text output up to this many atoms
 * (--json: always). */
#define PRODUCT_HEAD_PRINT_MAX 64

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

/* The plan (docs/cluster.md, "A plan before a run") in words. */
static void print_plan(const hf_report_span_t *r)
{
    const hf_campaign_plan_t *p = &r->plan;
    const hf_campaign_memory_t *lim = &r->lim;
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
           : r->node_fits     ? ", within a node"
                              : ": more than a node holds; run --list and slurm/submit refuse it");
    printf("plan        time %s\n", w.time);
    if (w.warning[0])
        printf("plan        warning: %s\n", w.warning);
}

/* The memory a search at the span would take, against the limit (what search and run
 * check, hf_campaign_check_row), then its plan. */
static void print_span(const hf_report_span_t *r)
{
    const hf_search_memory_t *m = &r->plan.mem;
    char tot[32], lm[32], base[32], pq[32], box[32], held[32], buf[32];
    hf_bytes_text(m->total, tot, sizeof tot);
    hf_bytes_text(r->lim.bytes, lm, sizeof lm);
    hf_bytes_text(m->base, base, sizeof base);
    hf_bytes_text(m->fraction, pq, sizeof pq);
    hf_bytes_text(m->box, box, sizeof box);
    hf_bytes_text(m->held, held, sizeof held);
    hf_bytes_text(m->buffers, buf, sizeof buf);
    const char *within = r->fits ? "within" : "more than",
               *refuse =
                   r->fits ? "" : ": search and run refuse it; --max-memory SIZE raises the limit";
    if (r->refused != HF_OK) {
        printf("memory      span %d: no search can be built: %s\n", r->span, r->why);
        return;
    }
    if (r->shortcut)
        printf("memory      span %d: %s, no search is built\n", r->span,
               r->shortcut == 2 ? "below an extent of Newt(Q), no support fits (infeasible)"
                                : "certified by its bounds");
    else if (m->large)
        printf("memory      about %s per rank for a search at span %d on %d rank(s), a large row "
               "(%s process + %s of P/Q held, a share of %.2f of its slices, + %s buffers), %s "
               "the limit %s (%s)%s\n",
               tot, r->span, m->ranks, base, held, m->share, buf, within, lm, r->lim.source,
               refuse);
    else
        printf("memory      about %s per rank for a search at span %d (%s process + %s P/Q + %s "
               "box + %.0f keys x %.0f B), %s the limit %s (%s)%s\n",
               tot, r->span, base, pq, box, m->keys, m->search_per_key + m->witness_per_key, within,
               lm, r->lim.source, refuse);
    print_plan(r);
}

/* The report in words. */
static void print_report(const hf_target_t *t, const hf_report_target_t *r)
{
    const hf_certificate_t *c = &r->cert;
    char *ls = fmpz_get_str(NULL, 10, r->low.lb), *us = fmpz_get_str(NULL, 10, r->ub);
    char *bs = fmpz_get_str(NULL, 10, r->lb);
    printf("target      %s  (d = %d, dv = %d, %d heads, %ld head-atom terms)\n", t->name, t->d,
           t->dv, t->nheads, hf_target_head_atoms(t));
    printf("lower bound %s  (%s%s)\n", bs, rule_words(r->lb_rule),
           r->low.complete || r->lb_rule != r->low.rule
               ? ""
               : "; capped: may be weaker than the rule allows");
    if (!r->low.newton_known)
        printf("newton      vertex count of the Newton polytope out of reach\n");
    printf("upper bound %s  (product construction%s)\n", us,
           r->ub_exact ? "" : "; too large to merge keys: product of head sizes");
    if (r->lb_ub)
        printf("certified   m* = %s  (LB = UB)\n", ls);
    else if (c->certified)
        printf("certified   m* = %ld over all integer keys  (%s; %s)\n", c->m_star,
               c->dim == 3 ? "three-dimensional face accounting, newton_3d"
                           : "two-dimensional Newton argument",
               c->unique ? "the minimal support is supp(Q), unique up to translation"
                         : "supp(Q) is a minimal support");
    else
        printf("open        %s <= m* <= %s over all integer keys  (no certificate; a "
               "search at span S gives m* within it, docs/math.md §1.4)\n",
               bs, us);
    if (c->dim == 3)
        print_faces3d(c);
    flint_free(bs);
    flint_free(ls);
    flint_free(us);
}

/* The product head and the memory of P/Q in words. */
static void print_product(const hf_report_target_t *r)
{
    const hf_head_t *h = &r->product_head;
    if (r->product)
        printf("product     %ld atoms, verified exactly; max numeric error %.2e\n", h->natoms,
               r->product_err);
    if (r->product && h->natoms <= PRODUCT_HEAD_PRINT_MAX) {
        printf("product head: key -> weight, value\n");
        cli_print_head(stdout, h, "  ");
    } else if (r->product) {
        printf("product head: %ld atoms, listed by --json (product_head)\n", h->natoms);
    }
    /* P/Q is what a search holds: the first thing to know before asking for memory per
     * rank; a large row holds it in slices over the ranks */
    char size[32];
    hf_bytes_text(r->fraction_bytes, size, sizeof size);
    printf("memory      P/Q: about %s (estimate), built on each rank of a search, or dealt in "
           "slices over the ranks on a large row (docs/cluster.md, \"Memory per rank\")\n",
           size);
}

/* --json: the report, the export and the plan at a span, as one object. */
static hf_err_t print_json(const hf_target_t *t, const hf_report_target_t *r,
                           const char *export_path, const hf_report_span_opts_t *so)
{
    json_t *o = hf_report_target_json(t, r);
    if (export_path)
        json_object_set_new(o, "exported", json_string(export_path));
    if (so->span) {
        hf_report_span_t sp;
        hf_err_t e = hf_report_span(t, so, &sp);
        if (e != HF_OK) {
            json_decref(o);
            return e;
        }
        json_object_set_new(o, "memory", hf_report_span_json(&sp));
    }
    cli_json_print(o);
    return HF_OK;
}

/* In words: the report, then the plan at a span (computed after the report is out). */
static hf_err_t print_text(const hf_target_t *t, const hf_report_target_t *r,
                           const char *export_path, const hf_report_span_opts_t *so)
{
    print_report(t, r);
    print_product(r);
    if (export_path)
        printf("exported    %s\n", export_path);
    if (!so->span)
        return HF_OK;
    hf_report_span_t sp;
    hf_err_t e = hf_report_span(t, so, &sp);
    if (e == HF_OK)
        print_span(&sp);
    return e;
}

int cli_cmd_target(int argc, char **argv)
{
    const char *family = NULL, *export_path = NULL, *max_memory = NULL, *node_memory = NULL,
               *pos[1];
    long span = 0, ranks = 0, nodes = 0;
    int json = 0, npos, status;
    cli_opt_t opts[] = {CLI_OPT_STR("--family", &family),
                        CLI_OPT_PATH("--export", &export_path, NULL),
                        CLI_OPT_FLAG("--json", &json),
                        CLI_OPT_INT("--span", &span, 1, HF_SPAN_MAX, NULL),
                        CLI_OPT_INT("--ranks", &ranks, 1, 1L << 20, NULL),
                        CLI_OPT_INT("--nodes", &nodes, 1, 1L << 20, NULL),
                        CLI_OPT_SIZE("--max-memory", &max_memory),
                        CLI_OPT_SIZE("--node-memory", &node_memory),
                        CLI_OPT_END};
    if ((status = cli_parse("target", usage_text, argc, argv, opts, pos, 1, &npos)) != CLI_GO)
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
    hf_report_span_opts_t so = {(int)span, ranks ? (int)ranks : 1, nodes ? (int)nodes : 1,
                                max_memory, node_memory};
    hf_target_t t;
    hf_target_init_empty(&t);
    hf_report_target_t r;
    hf_report_target_init(&r);
    hf_err_t e = cli_load_target(npos ? pos[0] : NULL, family, &t);
    if (e == HF_OK && export_path)
        e = hf_target_save_json(&t, export_path);
    if (e == HF_OK)
        e = hf_report_target(&t, &r);
    if (e == HF_OK)
        e = json ? print_json(&t, &r, export_path, &so) : print_text(&t, &r, export_path, &so);
    status = e != HF_OK ? cli_fail("target", e) : 0;
    hf_report_target_clear(&r);
    hf_target_clear(&t);
    return status;
}
