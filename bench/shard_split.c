/* Spread a finished run's shards over N shards, as if N ranks had run it, to time the
 * merge of many shards on one machine (bench/merge_shards.sh): units go round-robin to
 * run-0-0-rNNNN.h5, each with its found records; the fingerprint and description are the
 * original ones, so `headfuse search ... --resume` takes them as its own.
 *   shard_split FINGERPRINT ABOUT OUTDIR N SHARD.h5... */
#include <stdio.h>
#include <stdlib.h>

#include "headfuse/store.h"

int main(int argc, char **argv)
{
    if (argc < 6) {
        fprintf(stderr, "usage: %s FINGERPRINT ABOUT OUTDIR N SHARD.h5...\n", argv[0]);
        return 2;
    }
    const char *fp = argv[1], *about = argv[2], *dir = argv[3];
    int n = atoi(argv[4]);
    if (n < 1)
        return 2;
    hf_shard_t **out = calloc((size_t)n, sizeof *out);
    if (!out)
        return 1;
    hf_err_t err = HF_OK;
    for (int r = 0; r < n && err == HF_OK; r++) {
        char path[4096];
        snprintf(path, sizeof path, "%s/run-0-0-r%04d.h5", dir, r);
        err = hf_shard_create(path, fp, about, &out[r]);
    }
    long k = 0;
    for (int a = 5; a < argc && err == HF_OK; a++) {
        hf_shard_data_t d;
        hf_shard_data_init(&d);
        if ((err = hf_shard_read(argv[a], fp, &d)) != HF_OK)
            break;
        for (long i = 0; i < d.nunits && err == HF_OK; i++, k++) {
            hf_unit_record_t u = d.units[i];
            int r = (int)(k % n);
            u.rank = r;
            for (long j = 0; j < d.nfound && err == HF_OK; j++)
                if (d.found_m[j] == u.m && d.found_unit[j] == u.unit && d.found_lo[j] == u.lo &&
                    d.found_row[j] == u.row)
                    err = hf_shard_add_found(out[r], u.row, u.m, u.unit, u.lo, d.found_record[j]);
            if (err == HF_OK)
                err = hf_shard_finish_unit(out[r], &u);
        }
        hf_shard_data_clear(&d);
    }
    for (int r = 0; r < n; r++) {
        hf_err_t e = hf_shard_destroy(&out[r]);
        if (err == HF_OK)
            err = e;
    }
    free(out);
    if (err != HF_OK) {
        fprintf(stderr, "shard_split: %s\n", hf_error_msg());
        return 1;
    }
    fprintf(stderr, "shard_split: %ld units into %d shards\n", k, n);
    return 0;
}
