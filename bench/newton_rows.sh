#!/usr/bin/env bash
# The rows of issue 14 on 2 ranks, one search each (engine auto unless given), with wall
# time: chain d = 4..8 at span 3, multi:d=5,6,k=3 at span 2, chain:d=3 at spans 4 and 5,
# chain:d=3 at span 6 (engine cone: 100 unknowns, above auto's 64), W_d at span 2 for
# d = 7..10 (minimal supports counted). Prints a Markdown table.
#   bench/newton_rows.sh [BUILD_DIR]          (default: build)
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=${1:-$root/build}
hf=$build/headfuse
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
work=$(mktemp -d /tmp/hf-newton-rows.XXXXXX)
trap 'rm -rf "$work"' EXIT
rows=("chain:d=4 3" "chain:d=5 3" "chain:d=6 3" "chain:d=7 3" "chain:d=8 3"
      "multi:d=5,k=3 2" "multi:d=6,k=3 2" "chain:d=3 4" "chain:d=3 5" "chain:d=3 6 cone"
      "wd:d=7 2" "wd:d=8 2" "wd:d=9 2" "wd:d=10 2")
echo "| target | span | engine | m* | status | LB | minimal supports | wall s (2 ranks) |"
echo "|---|---|---|---|---|---|---|---|"
for r in "${rows[@]}"; do
  set -- $r
  engine=${3:-auto}
  out=$work/r.h5
  rm -rf "$out" "$out.shards"
  t0=$(date +%s.%N)
  mpirun --oversubscribe -n 2 "$hf" search --family "$1" --span "$2" --engine "$engine" --out "$out" --quiet >/dev/null
  t1=$(date +%s.%N)
  "$hf" verify "$out" >/dev/null
  "$hf" table "$out" --json | /usr/bin/python3 -c '
import json, sys
r = json.load(sys.stdin)[0]
print("| %s | %s | %s | %s | %s | %s | %s | %.1f |" % (r["name"], r["span"], r.get("engine", "?"),
      r["m_star"], r["status"], r["lb"], r["n_min_raw"], float(sys.argv[1])))' "$(echo "$t1 - $t0" | bc)"
done
