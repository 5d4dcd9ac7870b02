#!/usr/bin/env bash
# Two commands timed in alternate runs (A B A B ...), whole process, with /usr/bin/time:
# the ratio A/B is taken pair by pair, so a drift of the machine's speed during the call
# moves both halves of a pair alike (docs/performance.md quotes medians of such ratios).
#   bench/paired.sh N 'COMMAND_A' 'COMMAND_B'
# Each command is one string run by sh -c. Prints every pair, then the medians:
#   pair=1 a_wall=.. b_wall=.. ratio=.. a_peak_mib=.. b_peak_mib=..
#   median ratio=R (min - max) a_wall=.. b_wall=..
set -euo pipefail
[ $# = 3 ] || { echo "usage: bench/paired.sh N 'COMMAND_A' 'COMMAND_B'" >&2; exit 2; }
n=$1 a=$2 b=$3
[[ $n =~ ^[1-9][0-9]*$ ]] || { echo "paired: N must be a positive integer, not '$n'" >&2; exit 2; }
[ -x /usr/bin/time ] || { echo "paired: /usr/bin/time is missing (Debian package time)" >&2; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# One run: wall seconds and peak resident KiB of the largest process, from GNU time.
run() {
  /usr/bin/time -f "%e %M" -o "$tmp/t" sh -c "$1" >/dev/null 2>"$tmp/err" \
    || { echo "paired: command failed: $1" >&2; tail -5 "$tmp/err" >&2; exit 1; }
}

for i in $(seq 1 "$n"); do
  run "$a"
  read -r aw am <"$tmp/t"
  run "$b"
  read -r bw bm <"$tmp/t"
  echo "$i $aw $bw $am $bm" >>"$tmp/pairs"
  awk -v i="$i" -v aw="$aw" -v bw="$bw" -v am="$am" -v bm="$bm" 'BEGIN {
    printf "pair=%d a_wall=%.2f b_wall=%.2f ratio=%.3f a_peak_mib=%.1f b_peak_mib=%.1f\n",
      i, aw, bw, aw / bw, am / 1024, bm / 1024 }'
done
# Medians (the middle value; the mean of the two middle ones for an even N).
awk '{ r[NR] = $2 / $3; a[NR] = $2; b[NR] = $3 }
  function median(v, k,   i, j, t) {
    for (i = 2; i <= k; i++) for (j = i; j > 1 && v[j - 1] > v[j]; j--) { t = v[j]; v[j] = v[j - 1]; v[j - 1] = t }
    return k % 2 ? v[(k + 1) / 2] : (v[k / 2] + v[k / 2 + 1]) / 2
  }
  END {
    lo = hi = r[1]; for (i = 2; i <= NR; i++) { if (r[i] < lo) lo = r[i]; if (r[i] > hi) hi = r[i] }
    printf "median ratio=%.3f (%.3f - %.3f) a_wall=%.2f b_wall=%.2f\n", median(r, NR), lo, hi, median(a, NR), median(b, NR)
  }' "$tmp/pairs"
