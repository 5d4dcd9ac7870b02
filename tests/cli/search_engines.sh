# Every engine gives the same table: cone, layered and plain (--no-prune) report the same
# m_star, n_min_raw, n_min_sym and minimal supports with the same witnesses, on small
# targets across families and JSON targets, on 2 ranks; cone against layered alone where
# the plain enumerator would take too long.
. "$HF_SOURCE_DIR/tests/lib.sh"

all3=("--family wd:d=1 --span 3" "--family wd:d=2 --span 2" "--family wd:d=3 --span 1"
      "--family chain:d=2 --span 2" "--family multi:d=1,k=3 --span 3"
      "--family wdw:d=2 --span 2" "--family multi:d=2,k=2 --span 2"
      "$SRC/data/cubic_factor.json --span 3" "$SRC/data/two_heads_shared.json --span 2")
two=("--family chain:d=2 --span 4" "--family chain:d=3 --span 3" "--family wd:d=3 --span 2"
     "--family multi:d=2,k=3 --span 3")
strip() { $PY -c '
import json, sys
rows = json.loads(sys.argv[1])
print(json.dumps([{k: r[k] for k in ("name", "m_star", "n_min_raw", "n_min_sym", "supports")} for r in rows], sort_keys=True))' "$1"; }
check() {
  local spec=$1 engines=$2 ref="" first=""
  for e in $engines; do
    rm -rf "$e.h5"*
    # shellcheck disable=SC2086
    mpi 2 search $spec --out "$e.h5" --quiet --engine "$e"
    run 0 "$HEADFUSE" verify "$e.h5"
    a=$(strip "$(table_json "$e.h5")")
    if [ -z "$ref" ]; then
      ref=$a
      first=$e
    else
      [ "$a" = "$ref" ] || fail "$spec: $first and $e differ:
$first: $ref
$e: $a"
    fi
  done
  echo "ok: $spec ($engines): $(echo "$ref" | head -c 160)"
}
# the engines from their registry, as search --help lists them: every engine but the
# default (auto picks one of the others), and the pruning ones for the larger targets
"$HEADFUSE" search --help >help.txt
engines=$(awk '/^  --engine: how candidates/ {on = 1; next} on && /^    [a-z]/ && !/\(default\)/ {print $1}' help.txt | xargs)
pruning=$(awk '/^  --engine: how candidates/ {on = 1; next} on && /^    [a-z]/ && !/\(default\)/ && !/no pruning/ {print $1}' help.txt | xargs)
[ "$engines" = "cone layered plain" ] && [ "$pruning" = "cone layered" ] ||
  echo "engines from the registry: $engines (pruning: $pruning)"
[ -n "$pruning" ] && [ "$engines" != "$pruning" ] || fail "no engines in search --help: $(cat help.txt)"
for spec in "${all3[@]}"; do check "$spec" "$engines"; done
for spec in "${two[@]}"; do check "$spec" "$pruning"; done
# --no-prune is the plain engine, and it contradicts another engine
rm -rf q.h5* p.h5*
mpi 2 search --family wd:d=2 --span 2 --out q.h5 --quiet --no-prune
mpi 2 search --family wd:d=2 --span 2 --out p.h5 --quiet --engine plain
[ "$(strip "$(table_json q.h5)")" = "$(strip "$(table_json p.h5)")" ] ||
  fail "--no-prune and --engine plain differ"
run 2 "$HEADFUSE" search --family wd:d=2 --span 2 --out r.h5 --no-prune --engine cone
grep -q "contradicts --engine cone" err.txt || fail "no-prune with --engine cone: $(cat err.txt)"
# the default engine beside --no-prune is no contradiction (one rule with job files'
# engine: auto beside prune: false): the plain engine's row
mpi 2 search --family wd:d=2 --span 2 --out a.h5 --quiet --no-prune --engine auto
"$HEADFUSE" table a.h5 --json >a.json
grep -q '"engine":"plain"' a.json && [ "$(strip "$(table_json a.h5)")" = "$(strip "$(table_json p.h5)")" ] ||
  fail "--no-prune --engine auto is not the plain engine: $(cat a.json)"
run 2 "$HEADFUSE" search --family wd:d=2 --span 2 --out r.h5 --engine fast
grep -q "must be auto, cone, layered or plain" err.txt || fail "bad engine: $(cat err.txt)"
echo "ok: engine options"
