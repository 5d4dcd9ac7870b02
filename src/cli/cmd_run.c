/* headfuse run: a job file (docs/jobs.md) run entry by entry across the ranks into one
 * RESULT.h5 with one table row per entry (row index = entry index).
 *
 * State lives in RESULT.h5.shards/ until the result is written:
 *   job.txt        what the job is (entries and a hash of each target), so the state of
 *                  one job is never continued by another
 *   entry-<i>/     the shards of entry i while it runs (cli_search_entry)
 *   entry-<i>.h5   entry i's finished row: a one-row result file, written atomically
 * A resumed run skips entries with a finished row and, inside the entry it was running,
 * the finished units. Collective: run it under mpirun or srun. */
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli/cli.h"
#include "cli/cli_common.h"
#include "cli/cli_search_run.h"
#include "headfuse/job.h"
#include "headfuse/sched.h"

_Static_assert(HF_JOB_SPAN_MAX == HF_SPAN_MAX, "job and search must agree on the span range");

static const char *usage_text =
    "usage: mpirun -n N headfuse run JOB.yaml [--out RESULT.h5] [--resume] [--force] [--quiet]\n"
    "                [--json] [--list] [--entry I] [--collect]\n"
    "  Runs every entry of the job file (a target at a span; docs/jobs.md) and writes one\n"
    "  RESULT.h5 with one table row per entry. State goes to RESULT.h5.shards/; after\n"
    "  SIGTERM/SIGUSR1 (exit status 75) or a kill, rerun the same command with --resume:\n"
    "  finished entries and finished units are skipped.\n"
    "  --out F     the result file (default: the job's `output:`, else JOBNAME.h5); an\n"
    "              existing one is kept: --resume keeps its rows, --force overwrites it\n"
    "  --list      check the job and print its entries and output (no MPI needed)\n"
    "  --entry I   run only entry I (0-based), keeping its row in the state directory\n"
    "              (one Slurm array task per entry); then --collect writes RESULT.h5\n"
    "  --collect   write RESULT.h5 from the finished entries; fails if one is missing\n"
    "  The environment variable HF_EXPECT_RANKS=N makes a run with another number of\n"
    "  MPI ranks fail at once (batch scripts set it to SLURM_NTASKS).\n";

/* ------------------------------------------------------------------ state files */

typedef struct {
    const hf_job_t *job;
    char dir[4096];       /* RESULT.h5.shards */
    char file[4096 + 32]; /* scratch for path building */
} state_t;

static const char *entry_dir(state_t *st, long i)
{
    snprintf(st->file, sizeof st->file, "%s/entry-%ld", st->dir, i);
    return st->file;
}

static const char *entry_row(state_t *st, long i)
{
    snprintf(st->file, sizeof st->file, "%s/entry-%ld.h5", st->dir, i);
    return st->file;
}

static int path_exists(const char *p)
{
    struct stat sb;
    return stat(p, &sb) == 0;
}

static uint64_t fnv1a(const char *s)
{
    uint64_t h = 1469598103934665603ULL;
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 1099511628211ULL;
    return h;
}

/* The description of the job in job.txt: one line per entry with a hash of its target
 * (so a changed data file is noticed too). Malloc'd. */
static hf_err_t job_text(const hf_job_t *job, char **out)
{
    size_t cap = 256, len = 0;
    char *s = hf_malloc(cap);
    hf_err_t e = s ? HF_OK : HF_ERR_NOMEM;
    if (s)
        len = (size_t)snprintf(s, cap, "headfuse job state 1\nentries %ld\n", job->nentries);
    for (long i = 0; e == HF_OK && i < job->nentries; i++) {
        hf_target_t t;
        if ((e = hf_job_entry_target(job, i, &t)) != HF_OK)
            break;
        char *json = hf_target_to_json(&t), *desc = hf_job_entry_describe(job, i);
        hf_target_clear(&t);
        char line[1024];
        int n = json && desc ? snprintf(line, sizeof line, "%ld %s %016llx\n", i, desc,
                                        (unsigned long long)fnv1a(json))
                             : -1;
        free(json);
        free(desc);
        if (n < 0) {
            e = hf_error(HF_ERR_NOMEM, "out of memory");
            break;
        }
        if (len + (size_t)n + 1 > cap) {
            cap = 2 * (len + (size_t)n + 1);
            char *g = hf_realloc(s, cap);
            if (!g) {
                e = HF_ERR_NOMEM;
                break;
            }
            s = g;
        }
        memcpy(s + len, line, (size_t)n + 1);
        len += (size_t)n;
    }
    if (e != HF_OK) {
        free(s);
        s = NULL;
    }
    *out = s;
    return e;
}

static char *read_file(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    char *s = NULL;
    size_t len = 0, cap = 0, n;
    char buf[4096];
    while ((n = fread(buf, 1, sizeof buf, f)) > 0) {
        if (len + n + 1 > cap) {
            cap = 2 * (len + n + 1);
            char *g = realloc(s, cap);
            if (!g) {
                free(s);
                fclose(f);
                return NULL;
            }
            s = g;
        }
        memcpy(s + len, buf, n);
        len += n;
    }
    fclose(f);
    if (!s)
        s = calloc(1, 1);
    else
        s[len] = '\0';
    return s;
}

/* job.txt: written once (atomically: concurrent array tasks may race to write it),
 * afterwards only compared. */
static hf_err_t claim_state(state_t *st, const char *text)
{
    char path[4200], tmp[4300];
    snprintf(path, sizeof path, "%s/job.txt", st->dir);
    snprintf(tmp, sizeof tmp, "%s.%ld.tmp", path, (long)getpid());
    if (!path_exists(path)) {
        FILE *f = fopen(tmp, "wb");
        if (!f || fputs(text, f) < 0 || fclose(f) != 0) {
            if (f)
                fclose(f);
            unlink(tmp);
            return hf_error(HF_ERR_IO, "%s: cannot write: %s", tmp, strerror(errno));
        }
        int rc = link(tmp, path); /* fails with EEXIST when another task was first */
        int err = errno;
        unlink(tmp);
        if (rc != 0 && err != EEXIST)
            return hf_error(HF_ERR_IO, "%s: cannot create: %s", path, strerror(err));
    }
    char *old = read_file(path);
    if (!old)
        return hf_error(HF_ERR_IO, "%s: cannot read: %s", path, strerror(errno));
    int same = !strcmp(old, text);
    free(old);
    if (!same)
        return hf_error(HF_ERR_INPUT,
                        "%s: holds the state of another job (or of this job before it was "
                        "changed); remove %s to start over",
                        path, st->dir);
    return HF_OK;
}

/* Rank 0, before any work: make the state directory and check it against the job.
 * Without --resume, state of the selected entries is refused (never mixed silently). */
static hf_err_t prepare_state(state_t *st, long first, long last, int resume, int whole, int *done)
{
    if (mkdir(st->dir, 0777) != 0 && errno != EEXIST)
        return hf_error(HF_ERR_IO, "%s: cannot create the state directory: %s", st->dir,
                        strerror(errno));
    char path[4200];
    snprintf(path, sizeof path, "%s/job.txt", st->dir);
    int earlier = whole && path_exists(path);
    for (long i = first; i <= last; i++) {
        done[i] = path_exists(entry_row(st, i));
        if (done[i] || path_exists(entry_dir(st, i)))
            earlier = 1;
    }
    if (earlier && !resume)
        return hf_error(HF_ERR_INPUT,
                        "%s: holds the state of an earlier run; rerun with --resume to continue "
                        "it, or remove the directory to start over",
                        st->dir);
    char *text;
    HF_TRY(job_text(st->job, &text));
    hf_err_t e = claim_state(st, text);
    free(text);
    return e;
}

/* Remove the state directory once RESULT.h5 holds everything. */
static void remove_state(state_t *st)
{
    DIR *d = opendir(st->dir);
    if (!d)
        return;
    struct dirent *de;
    char path[4400];
    while ((de = readdir(d))) {
        size_t n = strlen(de->d_name);
        if (!strcmp(de->d_name, "job.txt") ||
            (!strncmp(de->d_name, "entry-", 6) && n > 3 && !strcmp(de->d_name + n - 3, ".h5"))) {
            snprintf(path, sizeof path, "%s/%s", st->dir, de->d_name);
            unlink(path);
        } else if (!strncmp(de->d_name, "entry-", 6)) {
            snprintf(path, sizeof path, "%s/%s", st->dir, de->d_name);
            cli_remove_shards(path);
        }
    }
    closedir(d);
    rmdir(st->dir);
}

/* ------------------------------------------------------------------ rows */

/* Read entry i's finished row and check it belongs to that entry. */
static hf_err_t read_row(state_t *st, long i, hf_result_t *r)
{
    const char *path = entry_row(st, i);
    hf_result_init(r);
    HF_TRY(hf_result_read(path, r));
    hf_target_t t;
    HF_TRY(hf_job_entry_target(st->job, i, &t));
    char *json = hf_target_to_json(&t);
    hf_target_clear(&t);
    if (!json)
        return HF_ERR_NOMEM;
    int ok = r->nrows == 1 && r->rows[0].span == st->job->entries[i].span &&
             !strcmp(r->target_json[0], json);
    free(json);
    if (!ok)
        return hf_error(HF_ERR_CORRUPT, "%s: is not the row of entry %ld of %s", path, i,
                        st->job->path);
    return HF_OK;
}

/* Rank 0: keep entry i's finished row (atomically) and drop its shards. */
static hf_err_t save_row(state_t *st, long i, const hf_target_t *t, const hf_row_t *row,
                         const hf_supports_t *sup, hf_unit_record_t *units, long nunits,
                         const char *cmdline, const char *start, int ranks)
{
    hf_result_t r;
    hf_result_init(&r);
    char *json = hf_target_to_json(t);
    hf_err_t e = json ? hf_result_add_row(&r, row, sup, json) : HF_ERR_NOMEM;
    free(json);
    if (e == HF_OK && nunits) {
        r.units = hf_malloc((size_t)nunits * sizeof *r.units);
        if (!r.units)
            e = HF_ERR_NOMEM;
        else {
            memcpy(r.units, units, (size_t)nunits * sizeof *units);
            r.nunits = nunits;
            /* the row file has one row; its units point at it (assemble renumbers) */
            for (long k = 0; k < nunits; k++)
                r.units[k].row = 0;
        }
    }
    if (e == HF_OK)
        e = cli_result_provenance(&r, cmdline, start, ranks);
    if (e == HF_OK)
        e = hf_result_write(entry_row(st, i), &r);
    if (e == HF_OK)
        cli_remove_shards(entry_dir(st, i));
    hf_result_clear(&r);
    return e;
}

/* Rank 0: RESULT.h5 from every entry's finished row, in entry order. */
static hf_err_t assemble(state_t *st, const char *out, const char *cmdline, const char *start,
                         int ranks, hf_result_t *res)
{
    char first[32];
    snprintf(first, sizeof first, "%s", start);
    for (long i = 0; i < st->job->nentries; i++) {
        hf_result_t r;
        hf_err_t e = read_row(st, i, &r);
        if (e == HF_OK)
            e = hf_result_add_row(res, r.rows, r.supports, r.target_json[0]);
        if (e == HF_OK && r.nunits) {
            hf_unit_record_t *u =
                hf_realloc(res->units, (size_t)(res->nunits + r.nunits) * sizeof *u);
            if (!u)
                e = HF_ERR_NOMEM;
            else {
                memcpy(u + res->nunits, r.units, (size_t)r.nunits * sizeof *u);
                for (long k = 0; k < r.nunits; k++)
                    u[res->nunits + k].row = (int32_t)i; /* row index = entry index */
                res->units = u;
                res->nunits += r.nunits;
            }
        }
        /* the campaign started when its first entry did (ISO times sort as text) */
        if (e == HF_OK && r.start_time && strcmp(r.start_time, first) < 0)
            snprintf(first, sizeof first, "%s", r.start_time);
        hf_result_clear(&r);
        if (e != HF_OK)
            return e;
    }
    HF_TRY(cli_result_provenance(res, cmdline, first, ranks));
    /* the job as it was when its rows were put together: what the rows mean */
    free(res->job_text);
    if (!(res->job_text = hf_strdup(st->job->text)))
        return HF_ERR_NOMEM;
    return hf_result_write(out, res);
}

/* A finished RESULT.h5 that matches the job (rows in order): a resumed run after the
 * result was written has nothing left to do. */
static int result_complete(state_t *st, const char *out)
{
    if (path_exists(st->dir) || !path_exists(out))
        return 0;
    hf_result_t r;
    hf_result_init(&r);
    int ok = hf_result_read(out, &r) == HF_OK && r.nrows == st->job->nentries;
    for (long i = 0; ok && i < r.nrows; i++) {
        hf_target_t t;
        if (hf_job_entry_target(st->job, i, &t) != HF_OK) {
            ok = 0;
            break;
        }
        char *json = hf_target_to_json(&t);
        hf_target_clear(&t);
        ok = json && r.rows[i].span == st->job->entries[i].span && !strcmp(json, r.target_json[i]);
        free(json);
    }
    hf_result_clear(&r);
    hf_error_clear();
    return ok;
}

/* ------------------------------------------------------------------ preflight */

/* Whether entry i's search can be set up (the search has limits of its own, such as the
 * size of the box); the message names the job file, line and entry. */
static hf_err_t check_entry(const hf_job_t *job, long i)
{
    hf_target_t t;
    HF_TRY(hf_job_entry_target(job, i, &t));
    const hf_job_entry_t *je = job->entries + i;
    hf_search_opts_t so = {.span = je->span, .prune = je->prune, .max_atoms = je->max_atoms};
    hf_search_t *s = NULL;
    char lb[HF_BIGINT_LEN], ub[HF_BIGINT_LEN];
    int shortcut = 0;
    /* rows certified by the bounds alone never build a search */
    hf_err_t e = cli_certified_shortcut(&t, je->span, &shortcut, lb, ub, sizeof lb);
    if (e == HF_OK && !shortcut)
        e = hf_search_create(&t, &so, &s);
    hf_search_destroy(&s);
    hf_target_clear(&t);
    if (e != HF_OK) {
        char *d = hf_job_entry_describe(job, i);
        hf_error_prefix("%s:%d: entries[%d] (%s)", job->path, je->line, je->index,
                        d ? d : je->label);
        free(d);
    }
    return e;
}

/* Collective, before any work: every selected entry's search can be set up. The entries
 * are spread over the ranks; the rank that checked the first failing one keeps its
 * message (cli_fail_mpi prints it) and every rank returns its error code. */
static hf_err_t preflight(const hf_job_t *job, long first, long last, int rank, int size)
{
    long bad = LONG_MAX, worst;
    hf_err_t e = HF_OK;
    for (long i = first + rank; i <= last; i += size)
        if ((e = check_entry(job, i)) != HF_OK) {
            bad = i;
            break;
        }
    MPI_Allreduce(&bad, &worst, 1, MPI_LONG, MPI_MIN, MPI_COMM_WORLD);
    if (worst == LONG_MAX)
        return HF_OK;
    int owner = (int)((worst - first) % size), code = (int)e;
    MPI_Bcast(&code, 1, MPI_INT, owner, MPI_COMM_WORLD);
    if (rank != owner)
        hf_error_relay((hf_err_t)code, "entry %ld could not be set up on rank %d", worst, owner);
    return (hf_err_t)code;
}

/* ------------------------------------------------------------------ the command */

/* --list: the checked job without MPI (a login node may not start MPI programs). Text:
 * "job NAME: N entries -> OUTPUT" then "INDEX<TAB>DESCRIPTION" per entry. */
static int list_job(const char *path, const char *out, int json)
{
    hf_job_t job;
    hf_err_t e = hf_job_load(&job, path, out);
    if (e != HF_OK) {
        hf_job_clear(&job);
        return cli_fail("run", e);
    }
    json_t *arr = json ? json_array() : NULL;
    if (!json)
        printf("job %s: %ld entries -> %s\n", job.name, job.nentries, job.output);
    for (long i = 0; i < job.nentries; i++) {
        const hf_job_entry_t *en = job.entries + i;
        if (json) {
            json_t *o = json_object();
            json_object_set_new(o, "index", json_integer(i));
            json_object_set_new(o, "target", json_string(en->label));
            json_object_set_new(o, "span", json_integer(en->span));
            json_object_set_new(o, "max_atoms", json_integer(en->max_atoms));
            json_object_set_new(o, "prune", json_boolean(en->prune));
            json_object_set_new(o, "line", json_integer(en->line));
            json_array_append_new(arr, o);
        } else {
            char *d = hf_job_entry_describe(&job, i);
            printf("%ld\t%s\n", i, d ? d : en->label);
            free(d);
        }
    }
    if (json) {
        json_t *o = json_object();
        json_object_set_new(o, "job", json_string(job.name));
        json_object_set_new(o, "output", json_string(job.output));
        json_object_set_new(o, "entries", arr);
        cli_json_print(o);
    }
    fflush(stdout);
    hf_job_clear(&job);
    return 0;
}

int cli_cmd_run(int argc, char **argv)
{
    const char *out_opt = NULL, *entry_s = NULL, *pos[1];
    int resume = 0, force = 0, quiet = 0, json = 0, help = 0, list = 0, collect = 0, npos, status;
    cli_opt_t opts[] = {{"--out", 1, &out_opt, NULL},     {"--entry", 1, &entry_s, NULL},
                        {"--resume", 0, NULL, &resume},   {"--force", 0, NULL, &force},
                        {"--collect", 0, NULL, &collect}, {"--list", 0, NULL, &list},
                        {"--quiet", 0, NULL, &quiet},     {"--json", 0, NULL, &json},
                        {"--help", 0, NULL, &help},       {NULL, 0, NULL, NULL}};
    if ((status = cli_parse("run", argc, argv, opts, pos, 1, &npos)))
        return status;
    if (help) {
        fputs(usage_text, stdout);
        return 0;
    }
    if (npos != 1) {
        fprintf(stderr, "headfuse run: give one job file (see headfuse run --help)\n");
        return 2;
    }
    char *end;
    long entry = entry_s ? strtol(entry_s, &end, 10) : -1;
    if (entry_s && (*end || !*entry_s || entry < 0)) {
        fprintf(stderr, "headfuse run: --entry: must be an entry index 0, 1, ...\n");
        return 2;
    }
    if (entry_s && collect) {
        fprintf(stderr, "headfuse run: --entry and --collect exclude each other\n");
        return 2;
    }
    if (collect)
        resume = 1; /* collecting means continuing the state of earlier runs */
    if (list)
        return list_job(pos[0], out_opt, json);

    int rank, size;
    char start[32];
    cli_mpi_start(&argc, &argv, &rank, &size, start, sizeof start);

    hf_job_t job;
    hf_result_t res;
    hf_result_init(&res);
    state_t st;
    int *done = NULL, complete = 0;
    char *cmdline = cli_join_argv(argc, argv);
    long first = 0, last = -1, ran = 0, skipped = 0;
    json_t *rows_json = json ? json_array() : NULL;

    /* every rank checks the whole job before any work (the same files, the same answer) */
    hf_err_t e = hf_job_load(&job, pos[0], out_opt);
    if (e == HF_OK && !cmdline) /* every row records the command line */
        e = HF_ERR_NOMEM;
    if ((e = cli_agree_all(MPI_COMM_WORLD, e)) != HF_OK)
        goto fail;
    if ((e = cli_check_ranks(size)) != HF_OK)
        goto fail;
    if (entry_s && entry >= job.nentries) {
        e = hf_error(HF_ERR_INPUT, "--entry %ld: the job has %ld entries (0..%ld)", entry,
                     job.nentries, job.nentries - 1);
        goto fail;
    }
    first = entry_s ? entry : 0;
    last = entry_s ? entry : job.nentries - 1;
    if (!collect && (e = preflight(&job, first, last, rank, size)) != HF_OK)
        goto fail;
    st.job = &job;
    snprintf(st.dir, sizeof st.dir, "%s.shards", job.output);
    done = hf_calloc((size_t)job.nentries, sizeof *done);
    if (!done) {
        e = HF_ERR_NOMEM;
        goto fail;
    }

    if (rank == 0 && resume && !entry_s)
        complete = result_complete(&st, job.output);
    MPI_Bcast(&complete, 1, MPI_INT, 0, MPI_COMM_WORLD);
    if (complete) {
        if (rank == 0 && !json)
            printf("%s: already complete (%ld rows); nothing to do\n", job.output, job.nentries);
        if (rank == 0 && json)
            e = hf_result_read(job.output, &res);
        goto report;
    }

    /* a finished RESULT.h5 (hours of work) is never replaced silently */
    if (!entry_s && !resume && !force && rank == 0 && path_exists(job.output))
        e = hf_error(HF_ERR_INPUT,
                     "%s: exists; rerun with --resume to keep its rows (entries not in it are "
                     "run), or with --force to overwrite it",
                     job.output);
    if (collect && rank == 0 && !path_exists(st.dir))
        e = hf_error(HF_ERR_INPUT,
                     "--collect: %s does not exist: no entry of this job has finished (run them "
                     "with --entry I, or run without --collect)",
                     st.dir);
    if ((e = cli_agree_root(MPI_COMM_WORLD, e)) != HF_OK)
        goto fail;
    e = cli_agree_root(MPI_COMM_WORLD,
                       rank == 0 ? prepare_state(&st, first, last, resume, !entry_s, done) : HF_OK);
    if (e != HF_OK)
        goto fail;
    MPI_Bcast(done, (int)job.nentries, MPI_INT, 0, MPI_COMM_WORLD);
    if (collect && rank == 0) {
        char missing[256] = "";
        long nmissing = 0;
        for (long i = 0; i < job.nentries; i++)
            if (!done[i] && nmissing++ < 8)
                snprintf(missing + strlen(missing), sizeof missing - strlen(missing), "%s%ld",
                         nmissing > 1 ? ", " : "", i);
        if (nmissing)
            e = hf_error(HF_ERR_INPUT,
                         "--collect: %ld of %ld entries have no finished row in %s (entries %s%s); "
                         "run them with --entry I, or run without --collect",
                         nmissing, job.nentries, st.dir, missing, nmissing > 8 ? ", ..." : "");
    }
    if ((e = cli_agree_root(MPI_COMM_WORLD, e)) != HF_OK)
        goto fail;

    for (long i = first; i <= last; i++) {
        if (done[i]) {
            skipped++;
            continue;
        }
        /* a stop signal between entries: nothing in flight, stop here */
        int stop = hf_sched_stop_requested(), any;
        MPI_Allreduce(&stop, &any, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
        if (any) {
            e = hf_error(HF_ERR_INTERRUPTED,
                         "interrupted before entry %ld; finished entries are kept in %s; rerun "
                         "the same command with --resume to continue",
                         i, st.dir);
            goto fail;
        }
        hf_target_t t;
        hf_err_t te = hf_job_entry_target(&job, i, &t);
        /* a rank that cannot build the target must not leave the others searching */
        if ((e = cli_agree_all(MPI_COMM_WORLD, te)) != HF_OK) {
            if (te == HF_OK)
                hf_target_clear(&t);
            goto fail;
        }
        const hf_job_entry_t *je = job.entries + i;
        hf_search_opts_t so = {.span = je->span, .prune = je->prune, .max_atoms = je->max_atoms};
        char edir[sizeof st.file], estart[32];
        snprintf(edir, sizeof edir, "%s", entry_dir(&st, i));
        cli_iso_time(estart, sizeof estart);
        cli_search_cfg_t cfg = {.shard_dir = edir,
                                .resume = resume,
                                .quiet = quiet,
                                .row = (int)i,
                                .command_line = cmdline};
        hf_row_t row;
        hf_supports_t sup;
        hf_unit_record_t *units = NULL;
        long nunits = 0;
        e = cli_search_entry(MPI_COMM_WORLD, &t, &so, &cfg, &row, &sup, &units, &nunits);
        if (e == HF_OK && rank == 0)
            e = save_row(&st, i, &t, &row, &sup, units, nunits, cmdline, estart, size);
        e = cli_agree_root(MPI_COMM_WORLD, e);
        hf_supports_clear(&sup);
        free(units);
        hf_target_clear(&t);
        if (e != HF_OK) {
            char *d = hf_job_entry_describe(&job, i);
            hf_error_prefix("entry %ld (%s)", i, d ? d : je->label);
            free(d);
            goto fail;
        }
        ran++;
        if (rank == 0 && !json) {
            printf("[%ld/%ld] ", i + 1, job.nentries);
            cli_print_row(stdout, &row, NULL);
        }
    }

    if (entry_s) {
        if (rank == 0 && !json && done[entry])
            printf("entry %ld: already finished in %s\n", entry, st.dir);
        if (rank == 0 && json)
            e = hf_result_read(entry_row(&st, entry), &res);
        goto report;
    }
    if (rank == 0) {
        e = assemble(&st, job.output, cmdline, start, size, &res);
        if (e == HF_OK)
            remove_state(&st);
    }
    if ((e = cli_agree_root(MPI_COMM_WORLD, e)) != HF_OK)
        goto fail;
    if (rank == 0 && !json)
        printf("%s: %ld rows (%ld run now, %ld finished earlier)\n", job.output, job.nentries, ran,
               skipped);

report:
    if ((e = cli_agree_root(MPI_COMM_WORLD, e)) != HF_OK)
        goto fail;
    if (rank == 0 && json) {
        for (long i = 0; i < res.nrows; i++)
            json_array_append_new(rows_json, cli_row_json(res.rows + i));
        cli_json_print(rows_json);
        rows_json = NULL;
    }
    status = 0;
    goto done;
fail:
    /* every rank agreed on e; the rank that holds its message reports it */
    status = cli_fail_mpi(MPI_COMM_WORLD, "run", e);
done:
    json_decref(rows_json);
    free(done);
    hf_result_clear(&res);
    hf_job_clear(&job);
    free(cmdline);
    MPI_Finalize();
    return status;
}
