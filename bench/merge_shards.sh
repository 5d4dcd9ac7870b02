#!/usr/bin/env bash
# Time the merge of one run's units spread over N shards (real, this machine): the run's
# shards are kept by failing the write of its RESULT.h5 (HEADFUSE_FAIL_H5_WRITE at the
# last write, counted first), spread round-robin over N shards by build/shard_split
# (which keeps the run's fingerprint), then `headfuse search ... --resume` on one rank
# finds every unit done and only merges; its table must equal the run's.
#   bench/merge_shards.sh [N ...]            (default: 1 1024)
#   HF_MERGE_SEARCH="--family chain:d=3 --span 3 --engine layered"   the search
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
hf=${HEADFUSE:-$root/build/headfuse}
split=${HF_SHARD_SPLIT:-$root/build/shard_split}
read -r -a search <<<"${HF_MERGE_SEARCH:---family chain:d=3 --span 3 --engine layered}"
counts=("$@")
[ ${#counts[@]} -gt 0 ] || counts=(1 1024)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cd "$tmp"
"$hf" search "${search[@]}" --out ref.h5 --quiet >/dev/null
writes=$(HEADFUSE_FAULT_COUNT=1 "$hf" search "${search[@]}" --out count.h5 --quiet 2>&1 >/dev/null \
  | sed -n 's/.*h5_write=\([0-9]*\).*/\1/p')
HEADFUSE_FAIL_H5_WRITE=$writes "$hf" search "${search[@]}" --out run.h5 --quiet >/dev/null 2>&1 || true
shard=$(ls run.h5.shards/run-*.h5)
attr() { h5dump -a "/$1" "$shard" | sed -n 's/^ *(0): "\(.*\)"$/\1/p'; }
fp=$(attr fingerprint)
about=$(attr about)
ref=$("$hf" table ref.h5 --json | sed 's/"seconds":[^,]*,//; s/"file":"[^"]*"//')
for n in "${counts[@]}"; do
  rm -rf merge.h5 merge.h5.shards
  mkdir merge.h5.shards
  "$split" "$fp" "$about" merge.h5.shards "$n" "$shard" 2>/dev/null
  t=$( { /usr/bin/time -f "%e %U %S" "$hf" search "${search[@]}" --out merge.h5 --resume --quiet >/dev/null; } 2>&1 | tail -1)
  got=$("$hf" table merge.h5 --json | sed 's/"seconds":[^,]*,//; s/"file":"[^"]*"//')
  same=identical
  [ "$got" = "$ref" ] || same=DIFFERENT
  read -r wall user sys <<<"$t"
  echo "merge: shards=$n wall=${wall}s user=${user}s sys=${sys}s table=$same"
done
