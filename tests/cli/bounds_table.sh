# tools/hf_bounds.py: the LB/UB table of chain, multi (k = 3) and wdw at small d, with
# the rule of each LB; the PNG exists and is not blank; bad arguments exit 2.
. "$HF_SOURCE_DIR/tests/lib.sh"

"$PY" -c 'import matplotlib' 2>/dev/null || fail "$PY lacks matplotlib (scripts/setup installs python3-matplotlib)"
tool=("$PY" "$SRC/tools/hf_bounds.py" --headfuse "$HEADFUSE")

# generous time limit per row: the machine is shared (docs/performance.md has the figures)
run 0 "${tool[@]}" --dmin 2 --dmax 5 -o bounds.png --max-seconds 5
cp out.txt table.md
# LB is what headfuse target reports: the best span-free bound (the slices for chain:d=2
# and multi, the 3-D argument for chain:d=3, the end slices for chain:d=4, 5), with its rule
for row in "| chain | 2 | 7 | slices | 7 |" "| chain | 3 | 24 | newton_3d | 24 |" \
  "| chain | 4 | 69 | end_slices | 82 |" "| chain | 5 | 201 | end_slices | 280 |" \
  "| multi | 2 | 9 | slices | 9 |" "| multi | 5 | 243 | slices | 243 |" \
  "| wdw | 2 | 4 | newton_vertices | 4 |" "| wdw | 5 | 32 | newton_vertices | 32 |"; do
  grep -qF "$row" table.md || fail "missing row $row in: $(cat table.md)"
done
[ "$(grep -c '^| [a-z]* | [0-9]* |' table.md)" = 12 ] || fail "expected 12 rows: $(cat table.md)"
grep -q "^slowest row: " table.md || fail "no slowest row: $(cat table.md)"
png_ok bounds.png 800 300

# large d without the plot: exact UB strings above 2^53 are kept as integers
# (UB of chain_d follows a_d = 4 a_(d-1) - 2 a_(d-2) from 7, 24: checked here at d = 60)
run 0 "${tool[@]}" --families chain --dmin 60 --dmax 60 --no-plot
grep -qF "| chain | 60 | 65799393450617577060886904832 | slices | 60000750714323713974813287514112 |" out.txt ||
  fail "chain 60: $(cat out.txt)"

run 2 "${tool[@]}" --families chain,nope
grep -q "unknown nope" err.txt || fail "bad family message: $(cat err.txt)"
run 2 "${tool[@]}" --dmin 5 --dmax 3 -o bounds2.png
[ ! -e bounds2.png ] || fail "an image was written for bad input"
echo "hf_bounds: table and plot ok ($(grep '^slowest' table.md))"
