/* Internal to the campaign module. */
#ifndef HF_CAMPAIGN_IMPL_H
#define HF_CAMPAIGN_IMPL_H

#include "headfuse/core.h"

/* Fingerprints of searches (shard files) and of job entries (job.txt) are FNV-1a hashes
 * started from this value, not from FNV's offset basis HF_HASH_INIT: files written by
 * earlier versions hold them, and they must keep matching (--resume). */
#define HF_CAMPAIGN_HASH_INIT UINT64_C(1469598103934665603)

#endif
