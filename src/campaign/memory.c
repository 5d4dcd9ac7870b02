/* The memory limit per rank and the checks of a row before anything is built: the same
 * for `headfuse search`, `run`, `run --list`, `slurm/submit --dry-run` and a job's
 * preflight (docs/targets.md, "Limits"; docs/cluster.md, "Memory"). The estimate itself
 * is the search's (hf_search_memory, src/search/memory.c). */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <flint/fmpz.h>

#include "campaign/campaign_impl.h"
#include "headfuse/control.h"
#include "headfuse/store.h"

#define SIZE_WORDS "a size in bytes such as 4G, 512M or 1500000000 (K, M, G, T: powers of 1024)"

/* A Slurm variable in MB (a positive integer), else 0. */
static double slurm_mb(hf_env_t name)
{
    const char *v = hf_env(name);
    long mb;
    if (!v || hf_parse_long(v, -1, 1, LONG_MAX / 2, &mb) != HF_PARSE_OK)
        return 0;
    return (double)mb * 1048576;
}

/* The limit given by the user: option, the job's max_memory or HEADFUSE_MAX_MEMORY (*given
 * = 1), else nothing (*given = 0). */
static hf_err_t limit_given(const char *option, const hf_job_t *job, hf_campaign_memory_t *out,
                            int *given)
{
    const char *env = hf_env(HF_ENV_MAX_MEMORY);
    *given = 1;
    if (option) {
        if (hf_parse_bytes(option, &out->bytes) != HF_PARSE_OK)
            return hf_error(HF_ERR_INPUT, "--max-memory %s: must be %s", option, SIZE_WORDS);
        snprintf(out->source, sizeof out->source, "--max-memory %s", option);
    } else if (job && job->max_memory) {
        out->bytes = job->max_memory_bytes;
        snprintf(out->source, sizeof out->source, "max_memory: %s, %s:%d", job->max_memory,
                 job->path, job->max_memory_line);
    } else if (env && *env) {
        if (hf_parse_bytes(env, &out->bytes) != HF_PARSE_OK)
            return hf_error(HF_ERR_INPUT, "HEADFUSE_MAX_MEMORY=%s: must be %s", env, SIZE_WORDS);
        snprintf(out->source, sizeof out->source, "HEADFUSE_MAX_MEMORY=%s", env);
    } else {
        *given = 0;
    }
    return HF_OK;
}

/* This machine's physical memory (sysconf), or 0 when unknown. */
static double machine_bytes(void)
{
    long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGE_SIZE);
    return pages > 0 && page > 0 ? (double)pages * (double)page : 0;
}

hf_err_t hf_campaign_memory_limit(const char *option, const hf_job_t *job, int node_ranks,
                                  hf_campaign_memory_t *out)
{
    char a[32];
    int given = 0;
    memset(out, 0, sizeof *out);
    out->ranks = 1;
    if (node_ranks < 1)
        node_ranks = 1;
    HF_TRY(limit_given(option, job, out, &given));
    if (given)
        return HF_OK;
    double cpu = slurm_mb(HF_ENV_SLURM_MEM_PER_CPU), node = slurm_mb(HF_ENV_SLURM_MEM_PER_NODE);
    long cpus = 1;
    const char *c = hf_env(HF_ENV_SLURM_CPUS_PER_TASK);
    if (c && hf_parse_long(c, -1, 1, 1L << 20, &cpus) != HF_PARSE_OK)
        cpus = 1;
    if (cpu > 0) {
        out->bytes = cpu * (double)cpus;
        hf_bytes_text(cpu, a, sizeof a);
        snprintf(out->source, sizeof out->source,
                 "the Slurm job's memory per rank: SLURM_MEM_PER_CPU %s x %ld CPU(s)", a, cpus);
    } else if (node > 0) {
        out->bytes = node / node_ranks;
        hf_bytes_text(node, a, sizeof a);
        snprintf(out->source, sizeof out->source,
                 "the Slurm job's memory per rank: SLURM_MEM_PER_NODE %s / %d rank(s) on "
                 "the node",
                 a, node_ranks);
    } else {
        double phys = machine_bytes();
        if (phys <= 0)
            return hf_error(HF_ERR_INPUT,
                            "the memory of this machine is unknown (sysconf): give the "
                            "limit per rank with --max-memory SIZE or HEADFUSE_MAX_MEMORY");
        out->bytes = phys / node_ranks;
        hf_bytes_text(phys, a, sizeof a);
        snprintf(out->source, sizeof out->source,
                 "this machine's memory per rank: %s / %d rank(s) on the node", a, node_ranks);
    }
    return HF_OK;
}

hf_err_t hf_campaign_memory_plan(const char *max_memory, const char *node_memory,
                                 const hf_job_t *job, int ranks, int nodes,
                                 hf_campaign_memory_t *out)
{
    char a[32];
    double node = 0;
    ranks = ranks < 1 ? 1 : ranks;
    nodes = nodes < 1 ? 1 : nodes > ranks ? ranks : nodes;
    int per = (ranks + nodes - 1) / nodes, given = 0;
    if (node_memory && hf_parse_bytes(node_memory, &node) != HF_PARSE_OK)
        return hf_error(HF_ERR_INPUT, "--node-memory %s: must be %s", node_memory, SIZE_WORDS);
    HF_TRY(hf_campaign_memory_limit(max_memory, job, per, out));
    HF_TRY(limit_given(max_memory, job, out, &given));
    out->ranks = ranks;
    out->nodes = nodes;
    out->node_ranks = per;
    out->node_check = node_memory || slurm_mb(HF_ENV_SLURM_MEM_PER_NODE) > 0 || !given;
    if (node_memory) {
        out->node_bytes = node;
        snprintf(out->node_source, sizeof out->node_source,
                 "--node-memory %s; slurm/submit passes sbatch's --mem", node_memory);
        if (!given && !hf_env(HF_ENV_SLURM_MEM_PER_CPU)) { /* the node's, not this machine's */
            out->bytes = node / per;
            hf_bytes_text(node, a, sizeof a);
            snprintf(out->source, sizeof out->source,
                     "the node's memory per rank: %s / %d rank(s) on the node (--node-memory %s)",
                     a, per, node_memory);
        }
    } else if ((node = slurm_mb(HF_ENV_SLURM_MEM_PER_NODE)) > 0) {
        out->node_bytes = node;
        hf_bytes_text(node, a, sizeof a);
        snprintf(out->node_source, sizeof out->node_source, "SLURM_MEM_PER_NODE %s", a);
    } else if ((node = machine_bytes()) > 0) {
        out->node_bytes = node;
        snprintf(out->node_source, sizeof out->node_source,
                 "this machine's memory; --node-memory SIZE for another node's");
    }
    return HF_OK;
}

int hf_campaign_node_ranks(MPI_Comm comm)
{
    MPI_Comm node;
    int n = 1;
    if (MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node) != MPI_SUCCESS)
        return 1;
    MPI_Comm_size(node, &n);
    MPI_Comm_free(&node);
    return n;
}

/* Digits of x in decimal. */
static size_t digits(const fmpz_t x)
{
    char *s = fmpz_get_str(NULL, 10, x);
    size_t n = strlen(s);
    flint_free(s);
    return n;
}

/* The ranks of the fullest node times the estimate m against a node's memory, when lim
 * plans nodes and knows it (hf_campaign_memory_plan; docs/cluster.md, "A plan before a
 * run"). */
static hf_err_t check_node(const hf_target_t *t, const hf_search_opts_t *so,
                           const hf_search_memory_t *m, const hf_campaign_memory_t *lim)
{
    if (!lim || lim->nodes < 1 || !lim->node_check || lim->node_bytes <= 0 ||
        lim->node_ranks * m->total <= lim->node_bytes)
        return HF_OK;
    char one[32], all[32], node[32], where[64] = "";
    hf_bytes_text(m->total, one, sizeof one);
    hf_bytes_text(lim->node_ranks * m->total, all, sizeof all);
    hf_bytes_text(lim->node_bytes, node, sizeof node);
    if (lim->nodes > 1)
        snprintf(where, sizeof where, " (%d ranks on %d nodes)", lim->ranks, lim->nodes);
    return hf_error(HF_ERR_LIMIT,
                    "%s span %d: %d ranks x %s = %s on one node%s, over the node's %s (%s); "
                    "put fewer ranks on a node (more nodes, or fewer ranks) or ask for a node "
                    "with more memory (docs/cluster.md, \"A plan before a run\")",
                    t->name, so->span, lim->node_ranks, one, all, where, node, lim->node_source);
}

hf_err_t hf_campaign_check_row(const hf_target_t *t, const hf_search_opts_t *so,
                               const hf_bounds_t *b, int shortcut, const hf_campaign_memory_t *lim,
                               hf_search_memory_t *est)
{
    hf_search_memory_t m;
    memset(&m, 0, sizeof m);
    if (est)
        *est = m;
    /* a table row holds LB, UB and m* as decimals of HF_BIGINT_LEN - 1 digits (store.h):
     * a representation limit of RESULT.h5 */
    size_t dl = digits(b->low.lb), du = digits(b->ub);
    if (dl >= HF_BIGINT_LEN || du >= HF_BIGINT_LEN)
        return hf_error(HF_ERR_LIMIT,
                        "%s: LB has %zu digits and UB %zu: a table row holds at most %d "
                        "(RESULT.h5's fixed-length fields, docs/hdf5-format.md)",
                        t->name, dl, du, HF_BIGINT_LEN - 1);
    if (shortcut) /* certified by its bounds: no search is built */
        return HF_OK;
    /* the one check of the options (search.h), before anything is estimated or built */
    HF_TRY(hf_search_check(t, so));
    HF_TRY(hf_search_memory(t, so, b, lim ? lim->ranks : 1, &m));
    if (est)
        *est = m;
    if (!lim || m.total <= lim->bytes)
        return check_node(t, so, &m, lim);
    char tot[32], limit[32], pq[32], base[32], box[32], cmd[HF_NAME_LEN + 32], parts[256];
    hf_bytes_text(m.total, tot, sizeof tot);
    hf_bytes_text(lim->bytes, limit, sizeof limit);
    hf_bytes_text(m.fraction, pq, sizeof pq);
    hf_bytes_text(m.base, base, sizeof base);
    hf_bytes_text(m.box, box, sizeof box);
    if (m.large) {
        char held[32], buf[32];
        hf_bytes_text(m.held, held, sizeof held);
        hf_bytes_text(m.buffers, buf, sizeof buf);
        snprintf(parts, sizeof parts,
                 "%s process + %s of P/Q held (a share of %.2f of its slices) + %s buffers", base,
                 held, m.share, buf);
    } else {
        snprintf(parts, sizeof parts, "%s process + %s P/Q + %s box + %.0f keys x %.0f B", base, pq,
                 box, m.keys, m.search_per_key + m.witness_per_key);
    }
    if (strchr(t->name, ':'))
        snprintf(cmd, sizeof cmd, "headfuse target --family %s", t->name);
    else
        snprintf(cmd, sizeof cmd, "headfuse target FILE.json");
    return hf_error(HF_ERR_LIMIT,
                    "%s span %d: the search needs about %s per rank on %d rank(s) (%s; "
                    "docs/targets.md, \"Limits\"), more than the limit of %s (%s); raise it with "
                    "--max-memory SIZE (job key max_memory, or HEADFUSE_MAX_MEMORY), or see the "
                    "target's bounds without a search: %s",
                    t->name, so->span, tot, m.ranks, parts, limit, lim->source, cmd);
}
