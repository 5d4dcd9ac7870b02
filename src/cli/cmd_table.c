/* headfuse table: print the minimal-atom table of one or more result files, as an
 * aligned text table, one JSON array, CSV or a GitHub Markdown table. All files are
 * read (and validated) before anything is printed. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cli/cli.h"
#include "headfuse/approx_store.h"
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

/* The table fields, in the documented order. */
static const char *const fields[] = {
    "name",   "d",         "span",      "m_star",    "lb",          "lb_rule", "ub",    "status",
    "engine", "max_atoms", "n_min_raw", "n_min_sym", "group_order", "nodes",   "units", "seconds"};
#define NFIELDS (int)(sizeof fields / sizeof *fields)
enum { F_LB_RULE = 5, F_STATUS = 7, F_ENGINE = 8, F_MAX_ATOMS = 9, F_N_SYM = 11, F_GROUP = 12 };

/* Field i of a row as text; "" for null (-1) values. buf holds HF_BIGINT_LEN bytes. */
static const char *field_text(const hf_row_t *r, int i, char *buf, size_t n)
{
    int64_t v;
    switch (i) {
    case 0:
        return r->name;
    case 1:
        v = r->d;
        break;
    case 2:
        v = r->span;
        break;
    case 3: /* exactly, at any size */
        return strcmp(hf_row_m_star(r, buf), "-1") ? hf_row_m_star(r, buf) : "";
    case 4:
        return strcmp(r->lb, "-1") ? r->lb : "";
    case F_LB_RULE:
        return r->lb_rule;
    case 6:
        return strcmp(r->ub, "-1") ? r->ub : "";
    case F_STATUS:
        return r->status;
    case F_ENGINE:
        return r->engine;
    case F_MAX_ATOMS:
        v = r->max_atoms;
        break;
    case 10:
        v = r->n_min_raw;
        break;
    case 11:
        v = r->n_min_sym;
        break;
    case 12:
        v = r->group_order;
        break;
    case 13:
        v = r->nodes;
        break;
    case 14:
        v = r->units;
        break;
    default:
        if (r->seconds < 0)
            return "";
        snprintf(buf, n, "%.3f", r->seconds);
        return buf;
    }
    if (v < 0)
        return "";
    snprintf(buf, n, "%" PRId64, v);
    return buf;
}

/* Support j as a head (weights and values exact; read from its file when it is held in
 * one); NULL when it cannot be read or is a bad witness (the message says why). */
static hf_head_t *support_head(const hf_supports_t *s, long j)
{
    hf_head_t *h = hf_malloc(sizeof *h);
    if (!h)
        return NULL;
    hf_head_init(h, s->d, s->dv);
    const char *why = NULL;
    if (hf_supports_head(s, j, h, &why) != HF_OK || why) {
        if (why)
            hf_error(HF_ERR_CORRUPT, "support %ld: %s", j, why);
        hf_head_clear(h);
        free(h);
        return NULL;
    }
    return h;
}

static void support_head_free(hf_head_t *h)
{
    if (h)
        hf_head_clear(h);
    free(h);
}

/* Keys of a head in the --keys syntax "0,0;1,0;0,1" (malloc'd). */
static char *support_keys_text(const hf_head_t *h)
{
    long cap = 64, len = 0;
    char *out = hf_malloc((size_t)cap);
    if (!out)
        return NULL;
    out[0] = '\0';
    for (long a = 0; a < h->natoms; a++)
        for (int c = 0; c < h->d; c++) {
            char num[32];
            int k = snprintf(num, sizeof num, "%s%" PRId64, c ? "," : (a ? ";" : ""),
                             h->keys[a * h->d + c]);
            if (HF_GROW(&out, &cap, len + k + 1) != HF_OK) {
                free(out);
                return NULL;
            }
            memcpy(out + len, num, (size_t)k + 1);
            len += k;
        }
    return out;
}

/* All supports of a row: "keys | keys | ..." (malloc'd). */
static char *supports_text(const hf_supports_t *s)
{
    char *out = hf_strdup("");
    for (long j = 0; out && j < s->n; j++) {
        hf_head_t *h = support_head(s, j);
        char *k = h ? support_keys_text(h) : NULL;
        support_head_free(h);
        char *joined = k ? hf_malloc(strlen(out) + strlen(k) + 4) : NULL;
        if (joined)
            sprintf(joined, "%s%s%s", out, j ? " | " : "", k);
        free(k);
        free(out);
        out = joined;
    }
    return out;
}

/* ---- JSON ---- */

/* The supports' keys and their witnesses as check --json prints heads (values flat when
 * dv = 1), into the row object o. */
static void json_supports(json_t *o, const hf_supports_t *s)
{
    json_t *all = json_array(), *wit = json_array();
    for (long j = 0; j < s->n; j++) {
        hf_head_t *h = support_head(s, j);
        if (!h)
            continue;
        json_t *jh = hf_head_to_json(h, NULL, 1);
        if (jh) {
            json_array_append(all, json_object_get(jh, "keys"));
            json_t *w = json_object();
            json_object_set(w, "weights", json_object_get(jh, "weights"));
            json_object_set(w, "values", json_object_get(jh, "values"));
            json_array_append_new(wit, w);
            json_decref(jh);
        }
        support_head_free(h);
    }
    json_object_set_new(o, "supports", all);
    json_object_set_new(o, "witnesses", wit);
}

static void print_json(const hf_result_t *res, const char *const *paths, int nfiles, int supports)
{
    json_t *rows = json_array();
    for (int f = 0; f < nfiles; f++)
        for (long i = 0; i < res[f].nrows; i++) {
            json_t *o = hf_report_row_json(&res[f].rows[i]);
            json_object_set_new(o, "file", json_string(paths[f]));
            if (supports)
                json_supports(o, &res[f].supports[i]);
            json_array_append_new(rows, o);
        }
    char *s = hf_json_dumps(rows); /* m_star as an integer at any size */
    if (s) {
        puts(s);
        free(s);
    }
    json_decref(rows);
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

static int print_csv(const hf_result_t *res, const char *const *paths, int nfiles, int supports)
{
    char buf[HF_BIGINT_LEN];
    for (int i = 0; i < NFIELDS; i++)
        csv_field(fields[i], i == 0);
    csv_field("file", 0);
    if (supports)
        csv_field("supports", 0);
    putchar('\n');
    for (int f = 0; f < nfiles; f++)
        for (long r = 0; r < res[f].nrows; r++) {
            for (int i = 0; i < NFIELDS; i++)
                csv_field(field_text(&res[f].rows[r], i, buf, sizeof buf), i == 0);
            csv_field(paths[f], 0);
            if (supports) {
                char *s = supports_text(&res[f].supports[r]);
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
static int grid_build(grid_t *g, const hf_result_t *res, const char *const *paths, int nfiles,
                      int with_file, int supports, int text)
{
    long n = 1;
    for (int f = 0; f < nfiles; f++)
        n += res[f].nrows;
    g->ncols = NFIELDS + (with_file ? 1 : 0) + (supports ? 1 : 0);
    g->cells = hf_calloc((size_t)(n * g->ncols), sizeof *g->cells);
    if (!g->cells)
        return -1;
    g->nrows = n; /* grid_clear frees the cells from here */
    char buf[HF_BIGINT_LEN];
    int c = 0;
    for (int i = 0; i < NFIELDS; i++)
        g->cells[c++] = hf_strdup(fields[i]); /* one name in every format */
    if (with_file)
        g->cells[c++] = hf_strdup("file");
    if (supports)
        g->cells[c++] = hf_strdup("supports");
    long row = 1;
    for (int f = 0; f < nfiles; f++)
        for (long r = 0; r < res[f].nrows; r++, row++) {
            char **cell = g->cells + row * g->ncols;
            for (int i = 0; i < NFIELDS; i++) {
                const char *t = field_text(&res[f].rows[r], i, buf, sizeof buf);
                if (text && res[f].rows[r].group_note[0] &&
                    (i == F_GROUP || (i == F_N_SYM && res[f].rows[r].n_min_sym < 0)))
                    t = "n/c";
                cell[i] = hf_strdup(t[0] ? t : "-");
            }
            int k = NFIELDS;
            if (with_file)
                cell[k++] = hf_strdup(paths[f]);
            if (supports)
                cell[k++] = supports_text(&res[f].supports[r]);
        }
    for (long i = 0; i < n * g->ncols; i++)
        if (!g->cells[i])
            return -1;
    return 0;
}

/* Columns holding numbers are right-aligned in the text table. */
static int numeric_column(int c)
{
    return c >= 1 && c < NFIELDS && c != F_STATUS && c != F_ENGINE && c != F_LB_RULE;
}

static void print_text(const grid_t *g)
{
    size_t width[NFIELDS + 2] = {0};
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

int cli_cmd_table(int argc, char **argv)
{
    int json = 0, csv = 0, markdown = 0, supports = 0, help = 0, npos = 0, status;
    const char **pos = hf_calloc((size_t)(argc > 1 ? argc : 1), sizeof *pos);
    if (!pos)
        return cli_fail("table", HF_ERR_NOMEM);
    cli_opt_t opts[] = {
        CLI_OPT_FLAG("--json", &json),         CLI_OPT_FLAG("--csv", &csv),
        CLI_OPT_FLAG("--markdown", &markdown), CLI_OPT_FLAG("--supports", &supports),
        CLI_OPT_FLAG("--help", &help),         CLI_OPT_END};
    if ((status = cli_parse("table", argc, argv, opts, pos, argc, &npos))) {
        free(pos);
        return status;
    }
    if (help) {
        fputs(usage_text, stdout);
        free(pos);
        return 0;
    }
    if (json + csv + markdown > 1 || npos == 0) {
        fprintf(stderr, "headfuse table: %s\n%s",
                npos ? "give at most one of --json, --csv, --markdown" : "no result file given",
                usage_text);
        free(pos);
        return 2;
    }

    /* A missing file is skipped with a warning while another file exists: a sweep's table
     * prints while some of its files are still to come. None existing: the reader's own
     * message (exit 4, and the hint when FILE.shards/ holds a stopped run). A damaged file
     * still fails the whole table. */
    int kept = 0;
    for (int i = 0; i < npos; i++) {
        struct stat st;
        if (stat(pos[i], &st) != 0 && errno == ENOENT)
            continue;
        kept++;
    }
    if (kept > 0) {
        kept = 0;
        for (int i = 0; i < npos; i++) {
            struct stat st;
            char shards[4200];
            if (stat(pos[i], &st) == 0 || errno != ENOENT) {
                pos[kept++] = pos[i];
                continue;
            }
            snprintf(shards, sizeof shards, "%s.shards", pos[i]);
            fprintf(stderr, "headfuse table: warning: %s: no such file, skipped%s\n", pos[i],
                    stat(shards, &st) == 0 ? " (its .shards/ holds a stopped run: rerun it with "
                                             "--resume to write it)"
                                           : "");
        }
        npos = kept;
    }

    /* APPROX.h5 files (headfuse approx) have a table of their own */
    int napprox = 0;
    for (int i = 0; i < npos; i++) {
        int kind = hf_approx_file_detect(pos[i]);
        if (kind < 0) {
            free(pos);
            return cli_fail("table", HF_ERR_CORRUPT);
        }
        napprox += kind;
    }
    if (napprox > 0) {
        if (napprox < npos || supports) {
            fprintf(stderr, "headfuse table: %s\n",
                    supports ? "--supports applies to search results, not APPROX files"
                             : "give either search results or APPROX files, not both");
            free(pos);
            return 2;
        }
        int fmt = json ? 1 : csv ? 2 : markdown ? 3 : 0;
        for (int i = 0; i < npos && status == 0; i++)
            status = cli_table_approx(pos[i], fmt);
        free(pos);
        return status;
    }

    hf_result_t *res = hf_calloc((size_t)npos, sizeof *res);
    hf_err_t e = res ? HF_OK : HF_ERR_NOMEM;
    int nread = 0;
    for (; e == HF_OK && nread < npos; nread++)
        e = hf_campaign_result_read(pos[nread], &res[nread]); /* messages name the file */
    if (e != HF_OK) {
        status = cli_fail("table", e);
        goto done;
    }
    status = 0;
    if (json) {
        print_json(res, pos, npos, supports);
    } else if (csv) {
        if (print_csv(res, pos, npos, supports) < 0)
            status = cli_fail("table", HF_ERR_NOMEM);
    } else {
        grid_t g = {0};
        if (grid_build(&g, res, pos, npos, npos > 1, supports, !markdown) < 0)
            status = cli_fail("table", HF_ERR_NOMEM);
        else if (markdown)
            print_markdown(&g);
        else
            print_text(&g);
        if (!markdown && status == 0)
            print_group_notes(res, npos);
        grid_clear(&g);
    }
    fflush(stdout);
done:
    for (int i = 0; i < nread && res; i++)
        hf_result_clear(&res[i]);
    free(res);
    free(pos);
    return status;
}
