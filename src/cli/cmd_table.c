/* headfuse table: print the minimal-atom table of one or more result files, as an
 * aligned text table, one JSON array, CSV or a GitHub Markdown table. All files are
 * read (and validated) before anything is printed. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/cli_common.h"
#include "headfuse/report.h"

static const char *usage_text =
    "usage: headfuse table RESULT.h5 [MORE.h5 ...] [--json|--csv|--markdown] [--supports]\n"
    "  Prints the rows of all files in order: name, d, span, m_star, lb, lb_rule, ub,\n"
    "  status, engine, max_atoms, n_min_raw, n_min_sym, group_order, nodes, units, seconds\n"
    "  (and the file). lb_rule names what gives lb (newton_2d, newton_3d: m* proven over all\n"
    "  keys).\n"
    "  engine is how the row was searched (cone, layered: pruned; plain: --no-prune; none:\n"
    "  no search ran: LB = UB certified the row, or, infeasible, the span is below an\n"
    "  extent of Newt(Q) and holds no support),\n"
    "  max_atoms the largest support size tried (0: no limit, up to UB).\n"
    "  --supports adds the keys of every minimal support (--json: also the witnesses'\n"
    "  exact weights and values). Unknown values print as '-' (JSON null, empty in CSV);\n"
    "  a group the search could not compute as 'n/c' in text, with the reason below the\n"
    "  table (JSON: group_order null, group_note the reason).\n"
    "  m_star is exact at any size (wd:d=64: 18446744073709551616), in --json an integer;\n"
    "  lb and ub there are numbers below 2^53 and decimal strings from 2^53 on.\n"
    "  A file that does not exist is skipped with a warning while another exists (none\n"
    "  existing: exit 4); a damaged one fails the whole table (exit 6).\n";

static void print_json(const hf_report_table_t *tab, int supports)
{
    json_t *rows = json_array();
    for (int f = 0; f < tab->n; f++)
        for (long i = 0; i < tab->res[f].nrows; i++) {
            json_t *o = hf_report_row_json(&tab->res[f].rows[i]);
            json_object_set_new(o, "file", json_string(tab->paths[f]));
            if (supports)
                hf_report_supports_json(o, &tab->res[f].supports[i]);
            json_array_append_new(rows, o);
        }
    cli_json_print(rows); /* m_star as an integer at any size */
}

/* ---- CSV ---- */

/* A CSV field, quoted when it holds a separator, quote or newline. */
static void csv_field(const char *s, int first)
{
    if (!first)
        putchar(',');
    if (!strpbrk(s, ",\"\n\r")) {
        fputs(s, stdout);
        return;
    }
    putchar('"');
    for (; *s; s++) {
        if (*s == '"')
            putchar('"');
        putchar(*s);
    }
    putchar('"');
}

static int print_csv(const hf_report_table_t *tab, int supports)
{
    const hf_result_t *res = tab->res;
    char buf[HF_BIGINT_LEN];
    for (int i = 0; i < HF_FIELD_COUNT; i++)
        csv_field(hf_report_row_fields[i], i == 0);
    csv_field("file", 0);
    if (supports)
        csv_field("supports", 0);
    putchar('\n');
    for (int f = 0; f < tab->n; f++)
        for (long r = 0; r < res[f].nrows; r++) {
            for (int i = 0; i < HF_FIELD_COUNT; i++)
                csv_field(hf_report_row_field(&res[f].rows[r], i, buf, sizeof buf), i == 0);
            csv_field(tab->paths[f], 0);
            if (supports) {
                char *s = hf_report_supports_text(&res[f].supports[r]);
                if (!s)
                    return -1;
                csv_field(s, 0);
                free(s);
            }
            putchar('\n');
        }
    return 0;
}

/* ---- aligned text and Markdown ---- */

/* The cells of the text/Markdown table, header row first. */
typedef struct {
    char **cells; /* nrows x ncols */
    int ncols;
    long nrows;
} grid_t;

static void grid_clear(grid_t *g)
{
    for (long i = 0; i < g->nrows * g->ncols; i++)
        free(g->cells[i]);
    free(g->cells);
}

/* Build the cells: header row, then one row per table row ('-' for null; in text, 'n/c'
 * for a group not computed, whose reason print_group_notes gives). */
static int grid_build(grid_t *g, const hf_report_table_t *tab, int supports, int text)
{
    const hf_result_t *res = tab->res;
    int with_file = tab->n > 1;
    long n = 1;
    for (int f = 0; f < tab->n; f++)
        n += res[f].nrows;
    g->ncols = HF_FIELD_COUNT + (with_file ? 1 : 0) + (supports ? 1 : 0);
    g->cells = hf_calloc((size_t)(n * g->ncols), sizeof *g->cells);
    if (!g->cells)
        return -1;
    g->nrows = n; /* grid_clear frees the cells from here */
    char buf[HF_BIGINT_LEN];
    int c = 0;
    for (int i = 0; i < HF_FIELD_COUNT; i++)
        g->cells[c++] = hf_strdup(hf_report_row_fields[i]); /* one name in every format */
    if (with_file)
        g->cells[c++] = hf_strdup("file");
    if (supports)
        g->cells[c++] = hf_strdup("supports");
    long row = 1;
    for (int f = 0; f < tab->n; f++)
        for (long r = 0; r < res[f].nrows; r++, row++) {
            char **cell = g->cells + row * g->ncols;
            for (int i = 0; i < HF_FIELD_COUNT; i++) {
                const char *t = hf_report_row_field(&res[f].rows[r], i, buf, sizeof buf);
                if (text && res[f].rows[r].group_note[0] &&
                    (i == HF_FIELD_GROUP_ORDER ||
                     (i == HF_FIELD_N_MIN_SYM && res[f].rows[r].n_min_sym < 0)))
                    t = "n/c";
                cell[i] = hf_strdup(t[0] ? t : "-");
            }
            int k = HF_FIELD_COUNT;
            if (with_file)
                cell[k++] = hf_strdup(tab->paths[f]);
            if (supports)
                cell[k++] = hf_report_supports_text(&res[f].supports[r]);
        }
    for (long i = 0; i < n * g->ncols; i++)
        if (!g->cells[i])
            return -1;
    return 0;
}

/* Columns holding numbers are right-aligned in the text table. */
static int numeric_column(int c)
{
    return c >= 1 && c < HF_FIELD_COUNT && c != HF_FIELD_STATUS && c != HF_FIELD_ENGINE &&
           c != HF_FIELD_LB_RULE;
}

static void print_text(const grid_t *g)
{
    size_t width[HF_FIELD_COUNT + 2] = {0};
    for (long r = 0; r < g->nrows; r++)
        for (int c = 0; c < g->ncols; c++) {
            size_t w = strlen(g->cells[r * g->ncols + c]);
            if (w > width[c])
                width[c] = w;
        }
    for (long r = 0; r < g->nrows; r++) {
        for (int c = 0; c < g->ncols; c++) {
            const char *s = g->cells[r * g->ncols + c];
            int last = c == g->ncols - 1;
            if (numeric_column(c))
                printf("%s%*s", c ? "  " : "", (int)width[c], s);
            else if (last && s[0])
                printf("%s%s", c ? "  " : "", s);
            else if (last)
                ; /* no trailing blanks */
            else
                printf("%s%-*s", c ? "  " : "", (int)width[c], s);
        }
        putchar('\n');
    }
}

/* Below the text table: why each 'n/c' group was not computed. */
static void print_group_notes(const hf_result_t *res, int nfiles)
{
    for (int f = 0; f < nfiles; f++)
        for (long r = 0; r < res[f].nrows; r++) {
            const hf_row_t *w = &res[f].rows[r];
            if (w->group_note[0])
                printf("n/c: %s span %d: group not computed: %s%s\n", w->name, w->span,
                       w->group_note,
                       w->n_min_sym < 0 ? "; minimal supports not counted up to symmetry" : "");
        }
}

/* A Markdown cell: '|' escaped so it does not split the cell. */
static void md_cell(const char *s)
{
    fputs("| ", stdout);
    for (; *s; s++) {
        if (*s == '|')
            putchar('\\');
        putchar(*s);
    }
    putchar(' ');
}

static void print_markdown(const grid_t *g)
{
    for (long r = 0; r < g->nrows; r++) {
        for (int c = 0; c < g->ncols; c++)
            md_cell(g->cells[r * g->ncols + c]);
        puts("|");
        if (r == 0) {
            for (int c = 0; c < g->ncols; c++)
                fputs(numeric_column(c) ? "| ---: " : "| --- ", stdout);
            puts("|");
        }
    }
}

/* The rows of search results in the chosen format (all read before any is printed). */
static int print_results(const hf_report_table_t *tab, int json, int csv, int markdown,
                         int supports)
{
    int status = 0;
    if (json) {
        print_json(tab, supports);
    } else if (csv) {
        if (print_csv(tab, supports) < 0)
            status = cli_fail("table", HF_ERR_NOMEM);
    } else {
        grid_t g = {0};
        if (grid_build(&g, tab, supports, !markdown) < 0)
            status = cli_fail("table", HF_ERR_NOMEM);
        else if (markdown)
            print_markdown(&g);
        else
            print_text(&g);
        if (!markdown && status == 0)
            print_group_notes(tab->res, tab->n);
        grid_clear(&g);
    }
    fflush(stdout);
    return status;
}

/* The files that were skipped because they do not exist (while another does). */
static void print_missing(const hf_report_table_t *tab)
{
    for (int i = 0; i < tab->nmissing; i++)
        fprintf(stderr, "headfuse table: warning: %s: no such file, skipped%s\n", tab->missing[i],
                tab->missing_shards[i] ? " (its .shards/ holds a stopped run: rerun it with "
                                         "--resume to write it)"
                                       : "");
}

/* APPROX.h5 files (headfuse approx) have a table of their own, each read and printed in
 * turn. */
static int print_approx(const hf_report_table_t *tab, int fmt, int supports)
{
    int status = 0;
    if (tab->napprox < tab->n || supports) {
        fprintf(stderr, "headfuse table: %s\n",
                supports ? "--supports applies to search results, not APPROX files"
                         : "give either search results or APPROX files, not both");
        return 2;
    }
    for (int i = 0; i < tab->n && status == 0; i++)
        status = cli_table_approx(tab->paths[i], fmt);
    return status;
}

int cli_cmd_table(int argc, char **argv)
{
    int json = 0, csv = 0, markdown = 0, supports = 0, npos = 0, status;
    const char **pos = hf_calloc((size_t)(argc > 1 ? argc : 1), sizeof *pos);
    if (!pos)
        return cli_fail("table", HF_ERR_NOMEM);
    cli_opt_t opts[] = {CLI_OPT_FLAG("--json", &json), CLI_OPT_FLAG("--csv", &csv),
                        CLI_OPT_FLAG("--markdown", &markdown),
                        CLI_OPT_FLAG("--supports", &supports), CLI_OPT_END};
    status = cli_parse("table", usage_text, argc, argv, opts, pos, argc, &npos);
    if (status == CLI_GO && (json + csv + markdown > 1 || npos == 0)) {
        fprintf(stderr, "headfuse table: %s\n%s",
                npos ? "give at most one of --json, --csv, --markdown" : "no result file given",
                usage_text);
        status = 2;
    }
    if (status != CLI_GO) {
        free(pos);
        return status;
    }
    hf_report_table_t tab;
    hf_report_table_init(&tab);
    hf_err_t e = hf_report_table(pos, npos, &tab);
    print_missing(&tab);
    if (e == HF_OK)
        e = hf_report_table_read(&tab);
    if (e != HF_OK)
        status = cli_fail("table", e);
    else if (tab.napprox > 0)
        status = print_approx(&tab, json ? 1 : csv ? 2 : markdown ? 3 : 0, supports);
    else
        status = print_results(&tab, json, csv, markdown, supports);
    hf_report_table_clear(&tab);
    free(pos);
    return status;
}
