/* The orderly stop: SIGUSR1 (or SIGTERM) sets one flag that every module can read, so a
 * long phase anywhere (building P/Q, the cone's rays, one huge exact test, merging the
 * shards, counting orbits) notices a stop within about a second and returns
 * HF_ERR_INTERRUPTED; the scheduler and the campaign then agree on it across the ranks
 * and keep what was finished (docs/reliability.md, "Stopping in every phase"). */
#ifndef HEADFUSE_STOP_H
#define HEADFUSE_STOP_H

#include "headfuse/error.h"

/* Install the SIGTERM/SIGUSR1 handlers (they only set the flag; async-signal-safe).
 * rank: named in the note written once on SIGTERM. */
void hf_stop_install_signals(int rank);

/* Nonzero once a stop was requested (a signal, hf_stop_request or the tests' hook). */
int hf_stop_requested(void);
void hf_stop_request(void);
void hf_stop_reset(void); /* the tests': no stop requested, the hook off */

/* The check a long phase makes every so often: HF_ERR_INTERRUPTED, with the message
 * "stopped on request while <phase>", once a stop was requested, else HF_OK. Counts the
 * calls per phase for the tests' hook below. phase: a constant string. */
hf_err_t hf_stop_check(const char *phase);

/* Cheap form for hot loops: the real check at the first call of this counter (it starts
 * at 0) and then every 2^k calls. */
#define HF_STOP_EVERY(counter, k, phase)                                                           \
    ((((counter)++) & ((1UL << (k)) - 1)) ? HF_OK : hf_stop_check(phase))

/* The tests' hook (HEADFUSE_STOP_AT=PHASE:N, read by the campaign): request the stop at
 * the n-th check of `phase` (n >= 1), as if a signal had come then. NULL: off. */
void hf_stop_at(const char *phase, long n);

/* How many checks of phase this process made (the tests pick a stop point from it). */
long hf_stop_checks(const char *phase);

/* A phase is declared by the module that owns it, in its header, as a list of
 * X(ID, "words") (ID: HEADFUSE_STOP_AT's name, lower-cased; the words: "while <words>"):
 * HF_<MODULE>_STOP_PHASES(HF_STOP_DECLARE) there, HF_<MODULE>_STOP_PHASES(HF_STOP_DEFINE)
 * in one of its sources. The campaign, which sees every module, lists them all for the
 * tests' hook. Core owns the one phase that several modules share: writing a result. */
#define HF_STOP_DECLARE(id, text) extern const char HF_STOP_##id[];
#define HF_STOP_DEFINE(id, text) const char HF_STOP_##id[] = text;

#define HF_CORE_STOP_PHASES(X) X(WRITE, "writing the result")
HF_CORE_STOP_PHASES(HF_STOP_DECLARE)

#endif
