# tools/hf_plot.py on real RESULT.h5 files (the demo campaign and a row left open): the
# PNG exists and is a non-blank image whose figure passes the object checks of
# tests/python/test_hf_plot.py (check_figure), the printed Markdown table is exactly `headfuse
# table --markdown` of the same files, bad files are reported; and the Python examples of
# docs/analysis.md run as written and print what the page says.
. "$HF_SOURCE_DIR/tests/lib.sh"

# Debian's h5py and matplotlib belong to Debian's python3
PY=/usr/bin/python3
[ -x "$PY" ] || PY=python3
"$PY" -c 'import h5py, matplotlib' 2>/dev/null || fail "$PY lacks h5py or matplotlib (scripts/setup installs python3-h5py python3-matplotlib)"
plot=("$PY" "$SRC/tools/hf_plot.py")

# the demo campaign (real rows of every family) and a row left open by max_atoms
run 0 mpi 2 run "$SRC/jobs/demo.yaml" --out demo.h5 --quiet
cat >p.yaml <<'EOF'
name: p
entries:
  - {family: chain, d: 3, span: 3, max_atoms: 22}
  - {family: wd, d: 6, span: 1}
EOF
run 0 mpi 2 run p.yaml --quiet

# the demo shows large d (issue 24, point 5): chain up to d = 8, multi up to d = 9
run 0 "$HEADFUSE" table demo.h5 --json
got=$($PY -c 'import json, sys
print(sorted((r["name"], r["span"], r["m_star"]) for r in json.load(sys.stdin) if r["name"] in ("chain:d=8", "multi:d=9,k=3")))' <out.txt)
[ "$got" = "[('chain:d=8', 3, 11144), ('multi:d=9,k=3', 2, 19683)]" ] || fail "the demo's large rows: $got"
run 0 "${plot[@]}" demo.h5 p.h5 -o atoms.png
cp out.txt plot-table.md
[ -s atoms.png ] || fail "no image"
[ "$(stat -c %s atoms.png)" -gt 20000 ] || fail "suspiciously small image: $(stat -c %s atoms.png) bytes"
png_ok atoms.png 800 400
# the figure of these real rows, by its objects: every row's marker, none inside another,
# one colour per span, 2^k labels apart, the legend (tests/python/test_hf_plot.py)
run 0 "$PY" "$SRC/tests/python/test_hf_plot.py" --check demo.h5 p.h5
grep -q "^checked the figure of $(($("$HEADFUSE" table demo.h5 --csv | wc -l) + 1)) rows of demo.h5, p.h5$" out.txt ||
  fail "the figure check: $(cat out.txt err.txt)"
run 0 "$HEADFUSE" table demo.h5 p.h5 --markdown
diff -u out.txt plot-table.md >diff.txt || fail "hf_plot's table differs from headfuse table --markdown:
$(cat diff.txt)"
grep -q "| chain:d=3 | 3 | 3 | - | 21 | slices | 24 | open |" plot-table.md ||
  fail "the max_atoms row should be open: $(cat plot-table.md)"
echo "ok: PNG $(stat -c %s atoms.png) bytes; table = headfuse table --markdown ($(($(wc -l <plot-table.md) - 2)) rows)"

# the Python examples of docs/analysis.md run as written on the demo's result (the
# pandas one only where pandas is installed) and print what the page says
"$PY" - "$SRC/docs/analysis.md" <<'PY' >doc-blocks.txt || fail "cannot extract the examples"
import re, sys
blocks = re.findall(r"```python\n(.*?)```", open(sys.argv[1]).read(), re.S)
for i, b in enumerate(blocks):
    open(f"doc{i}.py", "w").write(b)
print(len(blocks))
PY
[ "$(cat doc-blocks.txt)" -ge 4 ] || fail "docs/analysis.md: expected at least 4 examples"
for f in doc*.py; do
  if grep -q "import pandas" "$f" && ! "$PY" -c 'import pandas' 2>/dev/null; then
    echo "skip: $f needs pandas (not installed)"
    continue
  fi
  "$PY" "$f" >"$f.out" 2>&1 || fail "docs/analysis.md example $f failed: $(cat "$f.out")"
done
grep -q "chain:d=2 6 head-atom terms" doc*.py.out || fail "docs example output changed: $(cat doc*.py.out)"
grep -q "^\[1, 1\] 2 3/2$" doc*.py.out || fail "docs example output changed: $(cat doc*.py.out)"
grep -q "chain:d=2        span 2: m\* = 7  \[certified\]  LB 7  UB 7" doc*.py.out ||
  fail "docs example output changed: $(cat doc*.py.out)"
# the /units example says what its seconds are: the plain cross-check of wd:d=3 (the
# demo's row 18, on 2 ranks) has its unit seconds summed over both ranks, more than its
# wall time (issue 24, point 4)
line=$(grep "^wd:d=3 wall .* s, unit seconds summed over 2 rank(s) .* s, {" doc*.py.out | tail -1)
[ -n "$line" ] || fail "the /units example: $(cat doc*.py.out)"
$PY -c 'import re, sys
w, s = map(float, re.search(r"wall ([0-9.]+) s, unit seconds summed over 2 rank\(s\) ([0-9.]+) s", sys.argv[1]).groups())
assert s > 1.2 * w, (w, s)' "$line" || fail "unit seconds of the 2-rank row not above its wall time: $line"
echo "ok: the examples of docs/analysis.md run and print what they say"

# errors: a missing file (2) and a file that is not a result (6); no image written
printf 'not hdf5' >junk.h5
run 2 "${plot[@]}" missing.h5 -o x.png
run 6 "${plot[@]}" junk.h5 -o x.png
[ ! -e x.png ] || fail "an image was written for bad input"
echo "ok: bad inputs are reported"
