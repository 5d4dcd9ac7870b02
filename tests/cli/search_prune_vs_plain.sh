# The pruned search equals the plain enumerator (--no-prune): m_star, n_min_raw and the
# minimal supports themselves, on small targets across families and JSON targets.
. "$HF_SOURCE_DIR/tests/lib.sh"

specs=("--family wd:d=1 --span 3" "--family wd:d=2 --span 2" "--family wd:d=3 --span 1"
       "--family chain:d=2 --span 2" "--family multi:d=1,k=3 --span 3"
       "--family wdw:d=2 --span 2" "--family multi:d=2,k=2 --span 2"
       "$SRC/data/cubic_factor.json --span 3" "$SRC/data/two_heads_shared.json --span 2")
strip() { $PY -c '
import json, sys
rows = json.loads(sys.argv[1])
print(json.dumps([{k: r[k] for k in ("name", "m_star", "n_min_raw", "n_min_sym", "supports")} for r in rows], sort_keys=True))' "$1"; }
for spec in "${specs[@]}"; do
  rm -rf p.h5* q.h5*
  # shellcheck disable=SC2086
  mpi 2 search $spec --out p.h5 --quiet
  # shellcheck disable=SC2086
  mpi 2 search $spec --out q.h5 --quiet --no-prune
  a=$(strip "$(table_json p.h5)")
  b=$(strip "$(table_json q.h5)")
  [ "$a" = "$b" ] || fail "$spec: pruned and plain differ:
pruned: $a
plain:  $b"
  run 0 "$HEADFUSE" verify p.h5
  echo "ok: $spec: $(echo "$a" | head -c 200)"
done
