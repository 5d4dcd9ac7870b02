#!/usr/bin/env bash
# How long a real run takes to answer SIGUSR1 (docs/reliability.md, "Stopping in every
# phase"): start `mpirun -n RANKS headfuse search ...`, send SIGUSR1 to mpirun after a
# delay, and time from the signal to mpirun's exit. The delays step evenly through the
# run's unstopped length, so the signals land in every phase the run goes through.
# Prints one line per trial (delay, phase named by the last progress line, latency, exit
# status) and then the maximum latency over the trials that were stopped (exit 75).
#   bench/stop_latency.sh [TRIALS] -- SEARCH-ARGS...
#   bench/stop_latency.sh 10 -- --family chain:d=12 --span 3
# HF_BUILD_DIR (default build), HF_STOP_RANKS (default 2).
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=${HF_BUILD_DIR:-$root/build}
ranks=${HF_STOP_RANKS:-2}
trials=10
if [ "${1:-}" != "--" ]; then trials=$1; shift; fi
[ "${1:-}" = "--" ] || { echo "usage: $0 [TRIALS] -- SEARCH-ARGS..." >&2; exit 2; }
shift
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
work=$(mktemp -d /tmp/hf-stoplat.XXXXXX)
trap 'rm -rf "$work"' EXIT
now() { date +%s.%N; }
since() { awk -v a="$(now)" -v b="$1" 'BEGIN { print a - b }'; } # seconds since now() gave $1

# the unstopped length, once
t0=$(now)
mpirun -n "$ranks" --oversubscribe "$build/headfuse" search "$@" --out "$work/full.h5" \
  >"$work/full.log" 2>&1
full=$(since "$t0")
printf 'unstopped run: %.2f s\n' "$full"

max=0
stopped=0
for i in $(seq 1 "$trials"); do
  rm -rf "$work/r.h5" "$work/r.h5.shards"
  delay=$(awk -v f="$full" -v i="$i" -v n="$trials" 'BEGIN { printf "%.3f", f * (i - 0.5) / n }')
  mpirun -n "$ranks" --oversubscribe "$build/headfuse" search "$@" --out "$work/r.h5" \
    >"$work/r.log" 2>&1 &
  pid=$!
  sleep "$delay"
  ts=$(now)
  kill -USR1 "$pid" 2>/dev/null || true
  status=0
  wait "$pid" || status=$?
  lat=$(since "$ts")
  phase=$(grep -E '^\[' "$work/r.log" | tail -1 | cut -c1-70 || true)
  printf 'trial %2d: signal at %6.2f s  latency %5.2f s  exit %3d  last: %s\n' \
    "$i" "$delay" "$lat" "$status" "$phase"
  if [ "$status" = 75 ]; then
    stopped=$((stopped + 1))
    max=$(awk -v a="$lat" -v m="$max" 'BEGIN { print (a > m) ? a : m }')
  elif [ "$status" != 0 ]; then
    echo "stop_latency: trial $i exited $status (neither 75 nor finished):" >&2
    tail -5 "$work/r.log" >&2
  fi
done
printf 'stop_latency: %d of %d trials stopped (exit 75), max latency %.2f s\n' \
  "$stopped" "$trials" "$max"
