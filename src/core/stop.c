/* The stop flag and its signal handlers (headfuse/stop.h). */
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "headfuse/stop.h"

HF_CORE_STOP_PHASES(HF_STOP_DEFINE)

static volatile sig_atomic_t stop_flag;
/* Said once on SIGTERM, which may be the last thing this rank does: mpirun sends it to the
 * surviving ranks when one dies, and kills them a moment later, before they can report
 * anything themselves. SIGUSR1 is the orderly stop, reported by the campaign. */
static char term_note[160];
static size_t term_note_len;

static void on_stop_signal(int sig)
{
    if (sig == SIGTERM && !stop_flag && term_note_len > 0) {
        ssize_t w = write(STDERR_FILENO, term_note, term_note_len);
        (void)w;
    }
    stop_flag = 1;
}

void hf_stop_install_signals(int rank)
{
    int n = snprintf(term_note, sizeof term_note,
                     "headfuse: rank %d: SIGTERM: stopping; finished units are saved in the "
                     "shards (rerun with --resume)\n",
                     rank);
    term_note_len = n > 0 && (size_t)n < sizeof term_note ? (size_t)n : 0;
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_stop_signal;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGUSR1, &sa, NULL);
}

int hf_stop_requested(void)
{
    return stop_flag != 0;
}

void hf_stop_request(void)
{
    stop_flag = 1;
}

static const char *at_phase; /* the tests' hook */
static long at_count;

void hf_stop_reset(void)
{
    stop_flag = 0;
    at_phase = NULL;
    at_count = 0;
}

/* The checks made per phase, for the tests to pick a point inside each: the phases in the
 * order of their first check (each module declares its own, stop.h), by their constant. */
enum { NPHASES = 32 };
static const char *phase_seen[NPHASES];
static long checks[NPHASES];
static int nseen;

long hf_stop_checks(const char *phase)
{
    for (int i = 0; i < nseen; i++)
        if (!strcmp(phase_seen[i], phase))
            return checks[i];
    return 0;
}

void hf_stop_at(const char *phase, long n)
{
    at_phase = phase;
    at_count = n;
}

hf_err_t hf_stop_check(const char *phase)
{
    int i = 0;
    while (i < nseen && phase_seen[i] != phase)
        i++;
    if (i == nseen && nseen < NPHASES)
        phase_seen[nseen++] = phase;
    if (i < nseen)
        checks[i]++;
    if (at_phase && at_count > 0 && strcmp(phase, at_phase) == 0 && --at_count == 0)
        stop_flag = 1;
    if (!stop_flag)
        return HF_OK;
    return hf_error(HF_ERR_INTERRUPTED, "stopped on request while %s", phase);
}
