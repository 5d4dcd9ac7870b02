/* Agreement on errors across MPI ranks: the one protocol every collective step uses.
 *
 * Every rank runs the same steps, so an error must stop all of them at the same step,
 * or a rank that went on would wait forever in the next collective call. Before the
 * next collective step the ranks exchange their error codes here.
 *
 * Which error wins (docs/architecture.md, "Errors across ranks"): the lowest rank that
 * holds an error of its own; an error that only relays another rank's failure
 * (hf_error_relay) loses to any own error, and among relayed errors the lowest rank's
 * wins. Every rank returns the winner's code; a rank without an error records a relayed
 * message naming the winning rank, and a rank whose own error lost keeps its message. */
#ifndef HEADFUSE_AGREE_H
#define HEADFUSE_AGREE_H

#include <mpi.h>

#include "headfuse/error.h"

/* Collective: the winning code of e over comm (see above); HF_OK when no rank failed. */
hf_err_t hf_agree_all(MPI_Comm comm, hf_err_t e);

/* Collective: hf_agree_all in which a stop (e == HF_ERR_INTERRUPTED) is not an error. The
 * winning error as hf_agree_all's (a stop counted as HF_OK), and, when no rank failed,
 * *any_stop = 1 if some rank stopped (else 0). One collective call. */
hf_err_t hf_agree_stop(MPI_Comm comm, hf_err_t e, int *any_stop);

/* Collective, for work spread over the ranks in an order of its own (the entries of a
 * job checked before a run): the error with the lowest key wins, whichever rank holds
 * it (ties: the lower rank). A rank without an error passes any key. Every other rank
 * records a relayed message, even one that failed too, so that the winner is the one
 * that reports (hf_agree_reporter). */
hf_err_t hf_agree_first(MPI_Comm comm, hf_err_t e, long key);

/* Collective, for steps only rank 0 takes: rank 0's code on every rank (the others
 * pass HF_OK or their own code, which is ignored). */
hf_err_t hf_agree_root(MPI_Comm comm, hf_err_t e);

/* hf_agree_all, and every rank also takes the winner's message (for code that reports
 * the error on any rank, such as a library caller that prints on rank 0 only). */
hf_err_t hf_agree_all_message(MPI_Comm comm, hf_err_t e);

/* Collective, after the ranks agreed on an error: the rank whose message should be
 * reported, the lowest rank holding a message of its own, else rank 0. */
int hf_agree_reporter(MPI_Comm comm);

#endif
