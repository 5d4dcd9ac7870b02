/* Shared by the commands that write result files (search, run): MPI start and end, a
 * table row as one printed line and what it proves. */
#include <mpi.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/cli_common.h"
#include "headfuse/campaign.h"
#include "headfuse/report.h"
#include "headfuse/sched.h"
#include "headfuse/search.h"

/* A count for the one-line summary: "?" when unknown (-1). */
static const char *count_text(int64_t v, char *buf, size_t n)
{
    if (v < 0)
        return "?";
    snprintf(buf, n, "%lld", (long long)v);
    return buf;
}

/* What the row proves, in words. */
static void print_scope(FILE *f, const hf_row_t *row)
{
    char m[HF_BIGINT_LEN];
    const char *exact = hf_row_m_star(row, m);
    if (!strcmp(row->status, "certified")) {
        fprintf(f, "  over all integer keys: m* = %s (certified)\n",
                strcmp(exact, "-1") ? exact : row->lb);
        return;
    }
    char u[HF_BIGINT_LEN];
    const char *hi = hf_report_row_upper(row, u);
    if (!strcmp(row->status, "exhaustive"))
        fprintf(f, "  within span %d: m* = %s (every smaller support decided)", row->span, exact);
    else if (!strcmp(row->status, "infeasible"))
        fprintf(f, "  within span %d: no head equals the target", row->span);
    else
        fprintf(f, "  within span %d: no head up to max_atoms %lld", row->span,
                (long long)row->max_atoms);
    if (!strcmp(row->lb, hi))
        fprintf(f, "; over all integer keys: m* = %s (LB = UB)\n", hi);
    else
        fprintf(f, "; over all integer keys: %s <= m* <= %s (not decided by this row)\n", row->lb,
                hi);
}

void cli_print_row(FILE *f, const hf_row_t *row, const char *out)
{
    char a[32], b[32], c[32], m[HF_BIGINT_LEN];
    const char *exact = hf_row_m_star(row, m); /* any size */
    const char *mstar = strcmp(exact, "-1")                  ? exact
                        : !strcmp(row->status, "certified")  ? row->lb
                        : !strcmp(row->status, "infeasible") ? "none in this span"
                                                             : "none found";
    fprintf(f, "%s span %d: m* = %s  [%s]  LB %s (%s)  UB %s  engine %s", row->name, row->span,
            mstar, row->status, row->lb, row->lb_rule, row->ub, row->engine);
    if (!strcmp(row->engine, HF_ENGINE_NONE))
        fprintf(f, " (no search: %s)",
                !strcmp(row->status, "infeasible") ? "the span is below an extent of Newt(Q)"
                                                   : "LB = UB");
    if (row->max_atoms > 0)
        fprintf(f, ", max_atoms %lld", (long long)row->max_atoms);
    if (row->n_min_raw >= 0 && row->group_order < 0 && row->n_min_sym >= 0)
        fprintf(f, "  minimal supports %s (%s up to symmetry; group not computed%s%s)",
                count_text(row->n_min_raw, a, sizeof a), count_text(row->n_min_sym, b, sizeof b),
                row->group_note[0] ? ": " : "", row->group_note);
    else if (row->n_min_raw >= 0 && row->group_order < 0)
        fprintf(f, "  minimal supports %s (not counted up to symmetry: group not computed%s%s)",
                count_text(row->n_min_raw, a, sizeof a), row->group_note[0] ? ": " : "",
                row->group_note);
    else if (row->n_min_raw >= 0)
        fprintf(f, "  minimal supports %s (%s up to symmetry, group order %s)",
                count_text(row->n_min_raw, a, sizeof a), count_text(row->n_min_sym, b, sizeof b),
                count_text(row->group_order, c, sizeof c));
    else
        fprintf(f, "  minimal supports not counted (too large to enumerate)");
    fprintf(f, "  %lld nodes  %.2fs", (long long)row->nodes, row->seconds);
    if (out)
        fprintf(f, "  -> %s", out);
    fputc('\n', f);
    print_scope(f, row);
    fflush(f);
}

int cli_mpi_end(int status)
{
    /* every rank has reported before any exits, and a nonzero status is not turned into
     * SIGTERM's 143: mpirun stops the other ranks when the first one exits nonzero, and a
     * rank still in MPI_Finalize then died by the signal instead of returning 75 */
    MPI_Barrier(MPI_COMM_WORLD);
    if (status != 0)
        signal(SIGTERM, SIG_IGN);
    MPI_Finalize();
    return status;
}

void cli_mpi_start(int *argc, char ***argv, int *rank, int *size, char *start, size_t n)
{
    /* the handlers before MPI_Init too: mpirun forwards SIGUSR1 at once, and a rank still
     * in MPI_Init (a few tenths of a second) died of it; again after, to name the rank */
    hf_sched_install_signals();
    MPI_Init(argc, argv);
    MPI_Comm_rank(MPI_COMM_WORLD, rank);
    MPI_Comm_size(MPI_COMM_WORLD, size);
    hf_sched_install_signals();
    hf_campaign_iso_time(start, n);
}
