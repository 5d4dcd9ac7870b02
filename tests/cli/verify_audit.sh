# Exactness audit: every stored witness of several searches re-verifies with the
# independent verifier, and a planted bad witness in a copy of a RESULT.h5 is rejected.
. "$HF_SOURCE_DIR/tests/lib.sh"

specs=("--family wd:d=2 --span 2" "--family chain:d=2 --span 2" "--family wdw:d=2 --span 2"
       "$SRC/data/cubic_factor.json --span 3")
i=0
for spec in "${specs[@]}"; do
  # shellcheck disable=SC2086
  mpi 2 search $spec --out "r$i.h5" --quiet
  run 0 "$HEADFUSE" verify "r$i.h5"
  grep -q "verified exactly" out.txt || fail "$spec: verify printed: $(cat out.txt)"
  i=$((i + 1))
done

# plant a wrong weight (and separately a wrong value) in copies: verify must fail
for field in weights values; do
  cp r1.h5 bad.h5
  $PY - "$field" <<'PY'
import sys, h5py
field = sys.argv[1]
with h5py.File("bad.h5", "r+") as f:
    ds = f["rows/0/" + field]
    idx = (0, 0) if ds.ndim == 2 else (0, 0, 0)
    old = ds[idx]
    old = old.decode() if isinstance(old, bytes) else old
    ds[idx] = "7/3" if old != "7/3" else "5/3"
PY
  run 1 "$HEADFUSE" verify bad.h5
  cat out.txt err.txt | grep -q "row 0" || fail "planted $field: the failing row is not named: $(cat out.txt err.txt)"
  echo "ok: planted bad $field rejected"
done
echo "audit: ${#specs[@]} results verified, planted witnesses rejected"
