/* The error agreement across MPI ranks (headfuse/agree.h). */
#include <limits.h>
#include <stdio.h>

#include "headfuse/agree.h"

/* One exchange: the lowest-ranked own error, else the lowest-ranked relayed one, else (with
 * stops apart) the lowest-ranked stop. MINLOC over (priority, code): own errors rank first,
 * relayed errors after all ranks, stops after those. *prio: the winner's priority class
 * (0 own error, 1 relayed, 2 stop; -1 none). */
static hf_err_t exchange(MPI_Comm comm, hf_err_t e, int stops_apart, int *from, int *prio)
{
    int rank, size;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    struct {
        int prio, code;
    } mine = {INT_MAX, (int)HF_OK}, best;
    if (stops_apart && e == HF_ERR_INTERRUPTED)
        mine.prio = 2 * size + rank;
    else if (e != HF_OK)
        mine.prio = hf_error_is_relayed() ? size + rank : rank;
    mine.code = (int)e;
    MPI_Allreduce(&mine, &best, 1, MPI_2INT, MPI_MINLOC, comm);
    *from = best.prio == INT_MAX ? -1 : best.prio % size;
    *prio = best.prio == INT_MAX ? -1 : best.prio / size;
    return best.prio == INT_MAX ? HF_OK : (hf_err_t)best.code;
}

static hf_err_t winner(MPI_Comm comm, hf_err_t e, int *from)
{
    int prio;
    return exchange(comm, e, 0, from, &prio);
}

/* The stop rides on the error's exchange as a third class of priority, after every own
 * and relayed error: one collective call where an agreement and a maximum took two. */
hf_err_t hf_agree_stop(MPI_Comm comm, hf_err_t e, int *any_stop)
{
    int from, prio;
    hf_err_t w = exchange(comm, e, 1, &from, &prio);
    *any_stop = prio == 2;
    if (prio < 0 || prio == 2)
        return HF_OK;
    if (e == HF_OK || e == HF_ERR_INTERRUPTED)
        hf_error_relay(w, "rank %d failed", from);
    return w;
}

hf_err_t hf_agree_all(MPI_Comm comm, hf_err_t e)
{
    int from;
    hf_err_t w = winner(comm, e, &from);
    if (w != HF_OK && e == HF_OK)
        hf_error_relay(w, "rank %d failed", from);
    return w;
}

hf_err_t hf_agree_first(MPI_Comm comm, hf_err_t e, long key)
{
    int rank;
    MPI_Comm_rank(comm, &rank);
    struct {
        long key;
        int rank;
    } mine = {e != HF_OK ? key : LONG_MAX, rank}, best;
    if (e != HF_OK && key == LONG_MAX)
        mine.key = LONG_MAX - 1; /* an error is never taken for no error */
    MPI_Allreduce(&mine, &best, 1, MPI_LONG_INT, MPI_MINLOC, comm);
    if (best.key == LONG_MAX)
        return HF_OK;
    int code = (int)e;
    MPI_Bcast(&code, 1, MPI_INT, best.rank, comm);
    if (rank != best.rank)
        hf_error_relay((hf_err_t)code, "rank %d failed", best.rank);
    return (hf_err_t)code;
}

hf_err_t hf_agree_root(MPI_Comm comm, hf_err_t e)
{
    int code = (int)e;
    MPI_Bcast(&code, 1, MPI_INT, 0, comm);
    if (code != HF_OK && e == HF_OK)
        hf_error_relay((hf_err_t)code, "rank 0 failed");
    return (hf_err_t)code;
}

hf_err_t hf_agree_all_message(MPI_Comm comm, hf_err_t e)
{
    int from, rank;
    MPI_Comm_rank(comm, &rank);
    hf_err_t w = winner(comm, e, &from);
    if (w == HF_OK)
        return HF_OK;
    char msg[1024];
    snprintf(msg, sizeof msg, "%s", rank == from ? hf_error_msg() : "");
    MPI_Bcast(msg, sizeof msg, MPI_CHAR, from, comm);
    if (!msg[0])
        snprintf(msg, sizeof msg, "%s", hf_err_str(w));
    return hf_error(w, "%s", msg);
}

int hf_agree_reporter(MPI_Comm comm)
{
    int rank, first;
    MPI_Comm_rank(comm, &rank);
    int mine = hf_error_is_relayed() ? INT_MAX : rank;
    MPI_Allreduce(&mine, &first, 1, MPI_INT, MPI_MIN, comm);
    return first == INT_MAX ? 0 : first;
}
