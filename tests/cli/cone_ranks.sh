# The cone engine across ranks: its double description deals the pair tests of each step
# (HF_CONE_SPLIT_PAIRS_MIN=0: every step, not only the large ones; on 3 and 8 ranks cells of
# 3 negative rays, HF_CONE_CELL_NEGATIVES) and
# exchanges the new rays, so every rank holds the same rays as one process alone; the
# tables (rows, minimal supports, witnesses) are identical on 1, 2, 3 and 8 ranks, and the
# engine line reports the same rays. docs/search.md, "The double description across ranks".
. "$HF_SOURCE_DIR/tests/lib.sh"
export HF_CONE_SPLIT_PAIRS_MIN=0

specs=("--family chain:d=3 --span 4" "--family chain:d=3 --span 5"
       "--family chain:d=4 --span 3" "--family chain:d=5 --span 3" "--family chain:d=6 --span 3"
       "--family chain:d=7 --span 3" "--family multi:d=3,k=3 --span 3"
       "$SRC/data/cubic_factor.json --span 3")
for spec in "${specs[@]}"; do
  ref="" refline=""
  for n in 1 2 3 8; do
    rm -rf "r$n.h5" "r$n.h5.shards"
    # on 3 and 8 ranks cells of 3 negative rays: one positive ray's pairs span many cells
    if [ "$n" -ge 3 ]; then export HF_CONE_CELL_NEGATIVES=3; else unset HF_CONE_CELL_NEGATIVES; fi
    # shellcheck disable=SC2086
    mpi "$n" search $spec --engine cone --out "r$n.h5" 2>"err$n.txt" \
      || fail "$spec: $n ranks: exit $?: $(tail -3 "err$n.txt")"
    run 0 "$HEADFUSE" verify "r$n.h5"
    line=$(sed -n 's/.*\] \(engine cone: .*rays of support <= [0-9]*\).*/\1/p' "err$n.txt" | head -1)
    [ -n "$line" ] || fail "$spec: $n ranks: no engine line: $(head -3 "err$n.txt")"
    got=$(table_json "r$n.h5")
    if [ -z "$ref" ]; then
      ref=$got refline=$line
      rounds1=$(sed -n 's/.*; \([0-9]*\) rounds dealt.*/\1/p' "err$n.txt" | tail -1)
    else
      [ "$got" = "$ref" ] || fail "$spec: $n ranks differ from 1 rank:
$got
$ref"
      [ "$line" = "$refline" ] || fail "$spec: $n ranks: '$line', 1 rank: '$refline'"
      # the steps of the double description were dealt: more rounds than the sizes alone
      rounds=$(sed -n 's/.*; \([0-9]*\) rounds dealt.*/\1/p' "err$n.txt" | tail -1)
      [ "${rounds:-0}" -gt "${rounds1:-0}" ] \
        || fail "$spec: $n ranks: $rounds rounds dealt, no more than one rank's $rounds1"
    fi
  done
  echo "ok: $spec identical on 1, 2, 3 and 8 ranks ($refline)"
done
