/* One round of work dealt to the ranks of a communicator (hf_sched_deal): rank 0 hands out
 * batches of ranges of cells on request, and when none is left it splits running ones
 * (work stealing). docs/architecture.md, "The deal", has the protocol.
 *
 * Every rank builds the same queue of ranges from the round's items (the longest cut into
 * equal runs of cells), so a batch travels as two queue indices [qa, qb); batches shrink
 * as the queue empties (guided self-scheduling: what is left over twice the ranks). A
 * range split off a running one travels as (unit, lo, hi). The round starts without a
 * message: rank 0 broadcasts the queue's length, every working rank takes its first batch
 * by its position (the first ones of the queue), and a round with fewer ranges than ranks
 * leaves the others out (a range of one cell cannot be shared).
 *
 * Messages, all between rank 0 and one other rank, in order on one tag each way:
 *   to rank 0:   DONE (unit lo hi nodes found qa qb) | ABANDONED |
 *                STOLEN (unit mid hi, or qa qb) | NOSTEAL (unit; -1: between batches)
 *   from rank 0: BATCH qa qb | ITEM unit lo hi | NONE (the round is over for you) | STEAL |
 *                IDLE_TAKEN (to the last rank: rank 0 runs the idle task)
 * A rank answers every STEAL once, while it runs (in its poll) or between batches, so at
 * the end of a round no message is left in flight. The idle task (hf_sched_idle_t) runs
 * once per split, on the first of two ranks to wait: the last rank at its first wait
 * (after it reported its work, before it reads rank 0's answer, which then waits), or rank
 * 0 when it would park itself before any report of the last rank came in; rank 0 then
 * first sends IDLE_TAKEN to the last rank, which runs it only if nothing from rank 0 is
 * waiting to be read (else it reads on, and runs it at its next wait unless that was
 * IDLE_TAKEN). Both may run it when the two happen together (each makes the same group;
 * the caller takes one). A steal takes the upper half of the
 * batch's ranges not started yet, or, on the batch's last range, the upper half of its
 * cells not started yet. */
#include <assert.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "headfuse/agree.h"
#include "headfuse/sched.h"

enum { TAG_REQ = 101, TAG_ASSIGN = 102 };
enum { TO_DONE, TO_ABANDONED, TO_STOLEN, TO_NOSTEAL };
enum { FROM_BATCH, FROM_ITEM, FROM_NONE, FROM_STEAL, FROM_IDLE_TAKEN };
enum { MSG_LEN = 8 }; /* kind, unit, lo, hi, nodes, found, qa, qb */
enum { W_IDLE, W_BUSY, W_GONE };

/* Ranges per working rank the round's queue starts with: the longest items are cut by
 * cells so that every rank has work before the first steal. */
#define DEAL_PIECES_PER_RANK 4
/* A batch holds what is left of the queue over this many times the working ranks. */
#define DEAL_GUIDED_FACTOR 2
/* A running rank looks for a steal request at most this often (seconds). */
#define DEAL_PROBE_INTERVAL 1e-4

/* What a rank runs: queue[qa, qb) (qa >= 0), or one range split off another (qa < 0). */
typedef struct {
    long qa, qb;
    hf_sched_item_t item;
} work_t;

typedef struct {
    int state;
    double start;      /* when it got its work, or was last stolen from */
    int steal_pending; /* a STEAL was sent and is not answered yet */
    int stealable;     /* its work may have something left to give */
} worker_t;

typedef struct {
    hf_sched_split_t *sp;
    int rank, size, works; /* works: this rank runs ranges (rank 0 unless dedicated) */
    hf_sched_run_fn run;
    void *run_ctx;
    hf_sched_done_fn done;
    void *done_ctx;
    hf_err_t err; /* this rank's own first error or stop */
    /* the queue, the same on every rank */
    hf_sched_item_t *queue;
    long nq, qcap;
    long nwork, npart; /* working ranks, and those taking part in this round */
    long first;        /* ranges in each first batch */
    /* what this rank runs */
    int running;
    work_t cur;
    long qi;                  /* the queue index being run (batches) */
    hf_search_range_t *range; /* the range being run */
    double last_probe;
    /* rank 0 */
    long qhead;    /* queue[qhead..nq) not handed out */
    work_t *extra; /* work split off running work, not handed out */
    long nextra, xcap;
    worker_t *w; /* one per rank; w[0] is rank 0's own work */
    int *parked; /* ranks waiting for work, first come first served */
    long npark;
    long pending; /* steals in flight */
    long gone;    /* ranks told NONE */
    int stopping; /* no more work is handed out */
    int self_parked, self_has_next;
    work_t self_next;
} deal_t;

static void send_msg(deal_t *D, int dest, int tag, const int64_t *msg)
{
    MPI_Send(msg, MSG_LEN, MPI_INT64_T, dest, tag, D->sp->comm);
}

static void send_kind(deal_t *D, int dest, int tag, int64_t kind, int64_t unit)
{
    int64_t msg[MSG_LEN] = {kind, unit, 0, 0, 0, 0, -1, -1};
    send_msg(D, dest, tag, msg);
}

/* ---------------------------------------------------------------- the queue */

/* The round's ranges: the items, the longest cut into equal runs of cells so that there
 * are about DEAL_PIECES_PER_RANK per working rank (a range of one cell is never cut).
 * The same on every rank given the same items. */
static hf_err_t queue_fill(deal_t *D, const hf_sched_item_t *items, long n)
{
    double total = 0; /* cells may add up past 2^63 */
    for (long i = 0; i < n; i++)
        total += (double)(items[i].hi - items[i].lo);
    double aim = total / ((double)DEAL_PIECES_PER_RANK * (double)D->nwork) + 1;
    int64_t piece = aim < 4e18 ? (int64_t)aim : INT64_MAX;
    D->nq = 0;
    for (long i = 0; i < n; i++) {
        int64_t len = items[i].hi - items[i].lo;
        int64_t k = len / piece + (len % piece != 0), q = k ? len / k : 0, rem = k ? len % k : 0;
        for (int64_t j = 0, lo = items[i].lo; j < k; j++) {
            int64_t hi = lo + q + (j < rem);
            HF_TRY(HF_GROW(&D->queue, &D->qcap, D->nq + 1));
            D->queue[D->nq++] = (hf_sched_item_t){items[i].unit, lo, hi};
            lo = hi;
        }
    }
    return HF_OK;
}

/* The first batch of working rank `w` (0 .. npart - 1): queue[w first, (w + 1) first). */
static work_t first_batch(const deal_t *D, long w)
{
    long qa = w * D->first;
    hf_sched_item_t none = {-1, 0, 0};
    return (work_t){qa, qa + D->first, D->queue && qa < D->nq ? D->queue[qa] : none};
}

/* Working rank index of a rank (-1: rank 0 when it only coordinates). */
static long work_index(const deal_t *D, int rank)
{
    return D->works ? rank : rank - 1;
}

/* ---------------------------------------------------------------- rank 0 */

static int can_give(const work_t *wk)
{
    return wk->qa >= 0 ? wk->qb - wk->qa >= 2 || wk->item.hi - wk->item.lo >= 2
                       : wk->item.hi - wk->item.lo >= 2;
}

static void give(deal_t *D, int r, const work_t *wk)
{
    worker_t *w = D->w + r;
    w->state = W_BUSY;
    w->start = MPI_Wtime();
    w->stealable = can_give(wk);
    if (r == 0) {
        D->self_next = *wk;
        D->self_has_next = 1;
        return;
    }
    int64_t msg[MSG_LEN] = {wk->qa >= 0 ? FROM_BATCH : FROM_ITEM,
                            wk->item.unit,
                            wk->item.lo,
                            wk->item.hi,
                            0,
                            0,
                            wk->qa,
                            wk->qb};
    send_msg(D, r, TAG_ASSIGN, msg);
    D->sp->stats.coord_messages++;
}

/* The next work to hand out, if any: a split-off range first, else a batch of the queue. */
static int next_work(deal_t *D, work_t *wk)
{
    if (D->nextra > 0) {
        *wk = D->extra[--D->nextra];
        return 1;
    }
    long left = D->nq - D->qhead;
    if (left <= 0)
        return 0;
    long k = left / (DEAL_GUIDED_FACTOR * D->npart);
    k = k < 1 ? 1 : k;
    *wk = (work_t){D->qhead, D->qhead + k, D->queue[D->qhead]};
    D->qhead += k;
    return 1;
}

static int unpark(deal_t *D)
{
    int r = D->parked[0];
    memmove(D->parked, D->parked + 1, (size_t)--D->npark * sizeof *D->parked);
    if (r == 0)
        D->self_parked = 0;
    return r;
}

/* The running work, among those that may have something to give and no steal in flight,
 * that has run longest since it was handed out or last split (-1: none). */
static int victim(const deal_t *D)
{
    int best = -1;
    for (int r = 0; r < D->size; r++) {
        const worker_t *w = D->w + r;
        if (w->state == W_BUSY && w->stealable && !w->steal_pending && (r != 0 || D->running) &&
            (best < 0 || w->start < D->w[best].start))
            best = r;
    }
    return best;
}

/* Split what this rank runs (rank 0 for a parked rank, any other for rank 0): the upper
 * half of the batch's ranges not started yet, else of the last range's cells not started
 * yet. 0: nothing left to give. */
static int split_own(deal_t *D, work_t *out)
{
    if (!D->running)
        return 0;
    if (D->cur.qa >= 0 && D->cur.qb - D->qi - 1 >= 1) {
        long left = D->cur.qb - D->qi - 1, mid = D->qi + 1 + left / 2;
        *out = (work_t){mid, D->cur.qb, D->queue[mid]};
        D->cur.qb = mid;
        return 1;
    }
    hf_search_range_t *g = D->range;
    int64_t left = g ? g->hi - g->pos - 1 : 0;
    if (left < 1)
        return 0;
    int64_t mid = g->pos + 1 + left / 2;
    long unit = D->cur.qa >= 0 ? D->queue[D->qi].unit : D->cur.item.unit;
    *out = (work_t){-1, -1, {unit, mid, g->hi}};
    g->hi = mid;
    return 1;
}

#ifndef NDEBUG
/* The steals in flight, counted from the workers: D->pending must always be this. */
static long pending_count(const deal_t *D)
{
    long n = 0;
    for (int r = 0; r < D->size; r++)
        n += D->w[r].steal_pending;
    return n;
}
#endif

/* One steal in flight for each parked rank, from the longest-running work. */
static void try_steals(deal_t *D)
{
    while (!D->stopping && D->npark > D->pending) {
        int v = victim(D);
        if (v < 0)
            return;
        if (v == 0) { /* rank 0's own: split at once */
            work_t wk;
            if (!split_own(D, &wk)) {
                D->w[0].stealable = 0;
                continue;
            }
            D->w[0].start = MPI_Wtime();
            D->sp->stats.steals++;
            give(D, unpark(D), &wk);
            continue;
        }
        assert(v != 0 && !D->w[v].steal_pending); /* one STEAL in flight per victim */
        send_kind(D, v, TAG_ASSIGN, FROM_STEAL, -1);
        D->sp->stats.coord_messages++;
        D->w[v].steal_pending = 1;
        D->pending++;
        assert(D->pending == pending_count(D));
    }
}

static void park(deal_t *D, int r)
{
    D->parked[D->npark++] = r;
    if (r == 0)
        D->self_parked = 1;
}

/* Rank r (not 0) wants work. */
static void assign(deal_t *D, int r)
{
    work_t wk;
    D->w[r].state = W_IDLE;
    if (D->stopping) {
        send_kind(D, r, TAG_ASSIGN, FROM_NONE, -1);
        D->sp->stats.coord_messages++;
        D->w[r].state = W_GONE;
        D->gone++;
    } else if (next_work(D, &wk)) {
        give(D, r, &wk);
    } else {
        park(D, r);
        try_steals(D);
    }
}

/* Nothing is running and nothing is left: tell every parked rank. */
static void finish_if_over(deal_t *D)
{
    if (D->pending > 0 || D->running || D->self_has_next ||
        (!D->stopping && (D->qhead < D->nq || D->nextra > 0)))
        return;
    for (int r = 1; r < D->size; r++)
        if (D->w[r].state == W_BUSY)
            return;
    D->stopping = 1; /* from here every request is answered NONE */
    for (long i = 0; i < D->npark; i++)
        if (D->parked[i] != 0)
            assign(D, D->parked[i]);
    D->npark = 0;
    D->self_parked = 0;
}

/* Tell the done hook of finished work: a batch's ranges (its last may have been cut), or a
 * split-off range. */
static void report(deal_t *D, const work_t *wk, long nodes, long found)
{
    if (!D->done)
        return;
    if (wk->qa < 0) {
        D->done(D->done_ctx, &wk->item, nodes, found);
        return;
    }
    for (long q = wk->qa; q < wk->qb; q++) {
        hf_sched_item_t it = D->queue[q];
        if (q == wk->qb - 1)
            it.hi = wk->item.hi;
        D->done(D->done_ctx, &it, q == wk->qa ? nodes : 0, q == wk->qa ? found : 0);
    }
}

static void handle(deal_t *D, const int64_t *msg, int r)
{
    worker_t *w = D->w + r;
    work_t wk = {msg[6], msg[7], {(long)msg[1], msg[2], msg[3]}};
    D->sp->stats.coord_messages++;
    if (r == D->size - 1 && (msg[0] == TO_DONE || msg[0] == TO_ABANDONED))
        D->sp->last_reported = 1; /* from here it runs the idle task, or has */
    switch (msg[0]) {
    case TO_DONE:
        report(D, &wk, (long)msg[4], (long)msg[5]);
        assign(D, r);
        break;
    case TO_ABANDONED:
        D->stopping = 1;
        assign(D, r);
        break;
    case TO_STOLEN:
        /* an answer comes only to a STEAL sent, and each STEAL is answered once */
        assert(w->steal_pending && D->pending > 0);
        w->steal_pending = 0;
        D->pending--;
        w->start = MPI_Wtime();
        D->sp->stats.steals++;
        if (!D->stopping) { /* what was split off goes to the first parked rank */
            /* (the parked rank it was for may have got other work meanwhile) */
            if (D->npark > 0) {
                give(D, unpark(D), &wk);
            } else if (HF_GROW(&D->extra, &D->xcap, D->nextra + 1) == HF_OK) {
                D->extra[D->nextra++] = wk;
            } else {
                D->stopping = 1; /* the work is lost: the round must not look complete */
                if (D->err == HF_OK)
                    D->err = HF_ERR_NOMEM;
            }
        }
        try_steals(D);
        break;
    case TO_NOSTEAL:
        assert(w->steal_pending && D->pending > 0);
        w->steal_pending = 0;
        D->pending--;
        if (msg[1] >= 0 && w->state == W_BUSY) /* its work has nothing left to give */
            w->stealable = 0;
        try_steals(D);
        break;
    }
    assert(D->pending == pending_count(D));
    finish_if_over(D);
}

/* Answer what has arrived (block: wait for one message first). */
static void serve(deal_t *D, int block)
{
    for (;;) {
        int flag = 1;
        MPI_Status st;
        double t0 = MPI_Wtime();
        if (!block)
            MPI_Iprobe(MPI_ANY_SOURCE, TAG_REQ, D->sp->comm, &flag, &st);
        if (!flag)
            return;
        int64_t msg[MSG_LEN];
        MPI_Recv(msg, MSG_LEN, MPI_INT64_T, MPI_ANY_SOURCE, TAG_REQ, D->sp->comm, &st);
        double t1 = MPI_Wtime();
        if (block)
            D->sp->stats.idle += t1 - t0;
        handle(D, msg, st.MPI_SOURCE);
        D->sp->stats.coord_seconds += MPI_Wtime() - (block ? t1 : t0);
        block = 0;
    }
}

static int coordinator_poll(void *ctx)
{
    serve(ctx, 0);
    return 0;
}

/* ---------------------------------------------------------------- running work */

/* Run work on this rank (its batch's ranges in order, or its one range); *last_hi: where
 * the last range ended. */
static hf_err_t run_work(deal_t *D, const work_t *wk, hf_search_poll_fn poll, long *nodes,
                         long *found, int64_t *last_hi)
{
    hf_err_t e = HF_OK;
    D->running = 1;
    D->cur = *wk;
    *nodes = *found = 0;
    for (D->qi = wk->qa >= 0 ? wk->qa : 0; e == HF_OK; D->qi++) {
        if (wk->qa >= 0 && D->qi >= D->cur.qb)
            break;
        const hf_sched_item_t *it = wk->qa >= 0 ? D->queue + D->qi : &wk->item;
        hf_search_range_t range = {it->lo, it->hi};
        long n = 0, f = 0;
        D->range = &range;
        e = D->run(D->run_ctx, it, &range, poll, D, &n, &f);
        D->range = NULL;
        *nodes += n;
        *found += f;
        *last_hi = range.hi;
        if (wk->qa < 0)
            break;
    }
    D->running = 0;
    return e;
}

static void run_self(deal_t *D, const work_t *wk)
{
    D->w[0].state = W_BUSY;
    D->w[0].start = MPI_Wtime();
    D->w[0].stealable = can_give(wk);
    long nodes = 0, found = 0;
    int64_t last_hi = wk->item.hi;
    hf_err_t e = run_work(D, wk, coordinator_poll, &nodes, &found, &last_hi);
    work_t fin = D->cur;
    fin.item.hi = last_hi;
    D->w[0].state = W_IDLE;
    if (e != HF_OK) {
        D->stopping = 1;
        if (D->err == HF_OK)
            D->err = e;
    } else {
        report(D, &fin, nodes, found);
    }
    assert(D->pending == pending_count(D));
    finish_if_over(D);
}

void hf_sched_idle_run(hf_sched_idle_t *it)
{
    if (!it->ran) {
        it->ran = 1;
        it->status = it->run(it->ctx); /* its time is not idle time */
    }
}

hf_err_t hf_sched_idle_agree(MPI_Comm comm, const hf_sched_idle_t *it)
{
    return hf_agree_all(comm, it->ran ? it->status : HF_OK);
}

/* Rank 0 takes the idle task if the last rank cannot have started it yet, and tells it. */
static int idle_claim(deal_t *D)
{
    hf_sched_idle_t *it = D->sp->idle;
    int last = D->size - 1;
    if (!it || it->ran || it->taken || D->sp->last_reported || D->err != HF_OK)
        return 0;
    it->taken = 1;
    if (work_index(D, last) < D->npart) { /* it takes part in this round: it reads the news */
        send_kind(D, last, TAG_ASSIGN, FROM_IDLE_TAKEN, -1);
        D->sp->stats.coord_messages++;
    }
    return 1;
}

static void coordinate(deal_t *D)
{
    for (;;) {
        work_t wk;
        serve(D, 0);
        if (D->self_has_next) {
            wk = D->self_next;
            D->self_has_next = 0;
            run_self(D, &wk);
            continue;
        }
        if (D->works && !D->stopping && !D->self_parked && next_work(D, &wk)) {
            run_self(D, &wk);
            continue;
        }
        if (D->works && !D->stopping && !D->self_parked && idle_claim(D)) {
            hf_sched_idle_run(D->sp->idle);
            continue;
        }
        if (D->works && !D->stopping && !D->self_parked) {
            park(D, 0);
            try_steals(D);
            finish_if_over(D);
            continue;
        }
        if (D->gone == D->size - 1 && D->pending == 0) {
            /* the round is over: no STEAL is left unanswered, no rank is still parked */
            assert(pending_count(D) == 0 && D->npark == 0);
            return;
        }
        serve(D, 1);
    }
}

/* ---------------------------------------------------------------- the other ranks */

static void answer_steal(deal_t *D)
{
    work_t wk;
    if (!split_own(D, &wk)) {
        send_kind(D, 0, TAG_REQ, TO_NOSTEAL, D->running ? 0 : -1);
        return;
    }
    int64_t msg[MSG_LEN] = {TO_STOLEN, wk.item.unit, wk.item.lo, wk.item.hi, 0, 0, wk.qa, wk.qb};
    send_msg(D, 0, TAG_REQ, msg);
}

/* On the last rank: run the idle task at a wait, unless rank 0 took it. */
static void worker_idle(deal_t *D)
{
    hf_sched_idle_t *it = D->sp->idle;
    if (!it || it->ran || it->taken || D->rank != D->size - 1 || D->err != HF_OK)
        return;
    int flag = 0;
    MPI_Iprobe(0, TAG_ASSIGN, D->sp->comm, &flag, MPI_STATUS_IGNORE);
    if (!flag) /* IDLE_TAKEN, had it been sent, would be waiting here */
        hf_sched_idle_run(D->sp->idle);
}

static int worker_poll(void *ctx)
{
    deal_t *D = ctx;
    double now = MPI_Wtime();
    if (now - D->last_probe < DEAL_PROBE_INTERVAL)
        return 0;
    D->last_probe = now;
    int flag = 0;
    MPI_Iprobe(0, TAG_ASSIGN, D->sp->comm, &flag, MPI_STATUS_IGNORE);
    if (flag) {
        int64_t msg[MSG_LEN];
        MPI_Recv(msg, MSG_LEN, MPI_INT64_T, 0, TAG_ASSIGN, D->sp->comm, MPI_STATUS_IGNORE);
        if (msg[0] == FROM_IDLE_TAKEN)
            D->sp->idle->taken = 1;
        else
            answer_steal(D); /* the only other message that comes unasked */
    }
    return 0;
}

/* Run work and report it: DONE, or ABANDONED after a failure (then no more work runs). */
static void run_and_report(deal_t *D, const work_t *wk)
{
    long nodes = 0, found = 0;
    int64_t last_hi = wk->item.hi;
    hf_err_t e = D->err == HF_OK ? run_work(D, wk, worker_poll, &nodes, &found, &last_hi)
                                 : HF_ERR_INTERRUPTED;
    if (e != HF_OK && D->err == HF_OK)
        D->err = e;
    int64_t out[MSG_LEN] = {e == HF_OK ? TO_DONE : TO_ABANDONED,
                            wk->item.unit,
                            wk->item.lo,
                            last_hi,
                            nodes,
                            found,
                            D->cur.qa,
                            D->cur.qb};
    send_msg(D, 0, TAG_REQ, out);
}

static void work(deal_t *D)
{
    /* the first batch is this rank's by its position: no request for it */
    work_t wk = first_batch(D, work_index(D, D->rank));
    D->cur = wk;
    run_and_report(D, &wk);
    for (;;) {
        int64_t msg[MSG_LEN];
        worker_idle(D);
        double t0 = MPI_Wtime();
        MPI_Recv(msg, MSG_LEN, MPI_INT64_T, 0, TAG_ASSIGN, D->sp->comm, MPI_STATUS_IGNORE);
        D->sp->stats.idle += MPI_Wtime() - t0;
        if (msg[0] == FROM_STEAL) {
            answer_steal(D);
            continue;
        }
        if (msg[0] == FROM_NONE)
            return;
        if (msg[0] == FROM_IDLE_TAKEN) {
            D->sp->idle->taken = 1;
            continue;
        }
        wk = (work_t){msg[0] == FROM_BATCH ? msg[6] : -1,
                      msg[0] == FROM_BATCH ? msg[7] : -1,
                      {(long)msg[1], msg[2], msg[3]}};
        run_and_report(D, &wk);
    }
}

/* ---------------------------------------------------------------- one round */

static int no_poll(void *ctx)
{
    (void)ctx;
    return 0;
}

/* One process: every range in order, stopping at the first failure. */
static hf_err_t deal_alone(deal_t *D, const hf_sched_item_t *items, long n)
{
    for (long i = 0; i < n && D->err == HF_OK; i++) {
        hf_search_range_t range = {items[i].lo, items[i].hi};
        long nodes = 0, found = 0;
        D->err = D->run(D->run_ctx, items + i, &range, no_poll, NULL, &nodes, &found);
        if (D->err == HF_OK && D->done)
            D->done(D->done_ctx, items + i, nodes, found);
    }
    return D->err;
}

hf_err_t hf_sched_deal(hf_sched_split_t *sp, hf_err_t status, const hf_sched_item_t *items,
                       long nitems, hf_sched_run_fn run, void *run_ctx, hf_sched_done_fn done,
                       void *done_ctx)
{
    deal_t D;
    memset(&D, 0, sizeof D);
    D.sp = sp;
    D.run = run;
    D.run_ctx = run_ctx;
    D.done = done;
    D.done_ctx = done_ctx;
    D.err = status;
    MPI_Comm_rank(sp->comm, &D.rank);
    MPI_Comm_size(sp->comm, &D.size);
    sp->stats.rounds++;
    if (D.size == 1)
        return deal_alone(&D, items, nitems);
    D.works = !sp->dedicated;
    D.nwork = D.size - (D.works ? 0 : 1);
    /* the round's length, from rank 0 (-1: it failed, nobody takes part); a rank whose
     * queue is not rank 0's (it failed to build it) takes part only to say it failed */
    if (D.err == HF_OK)
        D.err = queue_fill(&D, items, nitems);
    int64_t head = D.rank == 0 && D.err == HF_OK ? (int64_t)D.nq : -1;
    MPI_Bcast(&head, 1, MPI_INT64_T, 0, sp->comm);
    long nq = (long)head;
    if (nq >= 0 && D.nq != nq && D.err == HF_OK)
        D.err = hf_error(HF_ERR_INTERNAL, "deal: %ld ranges here, %ld on rank 0", D.nq, nq);
    D.npart = nq < D.nwork ? (nq > 0 ? nq : 0) : D.nwork;
    D.first = D.npart > 0 ? nq / ((long)DEAL_GUIDED_FACTOR * D.npart) : 0;
    D.first = D.first < 1 ? 1 : D.first;
    if (nq <= 0 || (D.rank != 0 && work_index(&D, D.rank) >= D.npart)) {
        free(D.queue);
        return D.err; /* nothing for this rank in this round */
    }
    if (D.rank != 0) {
        work(&D);
    } else {
        D.w = hf_calloc((size_t)D.size, sizeof *D.w);
        D.parked = hf_malloc((size_t)D.size * sizeof *D.parked);
        if (!D.w || !D.parked) {
            /* the others run their first batches: wait for each and tell it NONE */
            D.err = HF_ERR_NOMEM;
            for (int r = 1; r < D.size; r++) {
                if (work_index(&D, r) >= D.npart)
                    continue;
                int64_t msg[MSG_LEN];
                do
                    MPI_Recv(msg, MSG_LEN, MPI_INT64_T, r, TAG_REQ, sp->comm, MPI_STATUS_IGNORE);
                while (msg[0] != TO_DONE && msg[0] != TO_ABANDONED);
                send_kind(&D, r, TAG_ASSIGN, FROM_NONE, -1);
            }
        } else {
            double now = MPI_Wtime();
            D.qhead = D.npart * D.first;
            for (int r = 0; r < D.size; r++) {
                long wi = work_index(&D, r);
                if (r == 0 && !D.works)
                    continue;
                if (wi >= D.npart) {
                    D.w[r].state = W_GONE;
                    D.gone += r != 0;
                    continue;
                }
                work_t wk = first_batch(&D, wi);
                D.w[r] = (worker_t){W_BUSY, now, 0, can_give(&wk)};
                if (r == 0) {
                    D.self_next = wk;
                    D.self_has_next = 1;
                }
            }
            coordinate(&D);
        }
        free(D.extra);
        free(D.parked);
        free(D.w);
    }
    free(D.queue);
    return D.err;
}
