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

# plant a wrong weight (and separately a wrong weighted value) in copies: verify must fail,
# on the witness (exit 1), not on a damaged file. The witnesses are integers (int64 where
# they fit, docs/hdf5-format.md): the planted one is read back to be sure.
for field in weights weighted_values; do
  cp r1.h5 bad.h5
  $PY - "$field" <<'PY' || fail "planting a bad $field failed"
import sys, h5py
field = sys.argv[1]
with h5py.File("bad.h5", "r+") as f:
    ds = f["rows/0/" + field]
    idx = (0, 0) if ds.ndim == 2 else (0, 0, 0)
    assert ds.dtype.kind == "i", ds.dtype
    old = int(ds[idx])
    new = old + 7
    ds[idx] = new
    back = int(ds[idx])
    assert back == new, (back, new)
    print(f"planted {field}{list(idx)}: {old} -> {new}")
PY
  run 1 "$HEADFUSE" verify bad.h5
  # grep reads the files itself: "cat | grep -q" fails under pipefail when grep stops
  # early and cat gets SIGPIPE
  grep -q "row 0" out.txt err.txt || fail "planted $field: the failing row is not named: $(cat out.txt err.txt)"
  grep -q "FAILED" out.txt || fail "planted $field: not rejected as a failed witness: $(cat out.txt err.txt)"
  echo "ok: planted bad $field rejected"
done
echo "audit: ${#specs[@]} results verified, planted witnesses rejected"
