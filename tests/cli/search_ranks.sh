# Determinism across rank counts (1, 2, and 3, 4, 8 oversubscribed): the same rows and
# the same minimal supports in the same canonical order; every witness re-verified. The
# layered case deals each size's preparation (its face tables) across the ranks, and its
# units' cells: on several ranks its units are split into ranges (RESULT.h5 /units) and
# running ranges are stolen from.
. "$HF_SOURCE_DIR/tests/lib.sh"

specs=("--family chain:d=2 --span 2" "--family wd:d=3 --span 2" "--family multi:d=2,k=3 --span 2"
       "$SRC/data/two_heads_shared.json --span 2"
       "--family chain:d=3 --span 3 --engine layered")
for spec in "${specs[@]}"; do
  ref=""
  for n in 1 2 3 4 8; do
    rm -rf "r$n.h5" "r$n.h5.shards"
    # shellcheck disable=SC2086
    mpi "$n" search $spec --out "r$n.h5" 2>"err$n.txt"
    run 0 "$HEADFUSE" verify "r$n.h5"
    if [ "$n" -gt 1 ] && [[ $spec == *layered* ]]; then
      # Whether a steal lands in a unit depends on timing: a run on a loaded machine may
      # steal only in the preparation (seen once with a simulation on the other core), so
      # a run without a split unit is repeated once before the check fails.
      for attempt in 1 2; do
        steals=$(sed -n 's/.* \([0-9]*\) steals.*/\1/p' "err$n.txt" | tail -1)
        split=0
        $PY - "r$n.h5" <<'EOF' && split=1
import collections, h5py, sys
u = h5py.File(sys.argv[1], "r")["units"][:]
ranges = collections.Counter((int(x["m"]), int(x["unit"])) for x in u)
assert max(ranges.values()) > 1
EOF
        { [ "${steals:-0}" -gt 0 ] && [ "$split" = 1 ]; } || [ "$attempt" = 2 ] && break
        rm -rf "r$n.h5" "r$n.h5.shards"
        # shellcheck disable=SC2086
        mpi "$n" search $spec --out "r$n.h5" 2>"err$n.txt"
        run 0 "$HEADFUSE" verify "r$n.h5"
      done
      [ "${steals:-0}" -gt 0 ] || fail "$spec: $n ranks: no range was stolen: $(tail -2 "err$n.txt")"
      [ "$split" = 1 ] || fail "$spec: $n ranks: no unit was split into ranges of cells"
    fi
    got=$(table_json "r$n.h5")
    if [ -z "$ref" ]; then
      ref=$got
      $PY -c 'import json,sys; r=json.loads(sys.argv[1])[0]; assert r["m_star"] and r["n_min_raw"] >= 1, r' "$got" \
        || fail "$spec: no minimal support found: $got"
    else
      [ "$got" = "$ref" ] || fail "$spec: $n ranks differ from 1 rank:
$got
$ref"
    fi
  done
  echo "ok: $spec identical on 1, 2, 3, 4 and 8 ranks: $(echo "$ref" | head -c 300)"
done
