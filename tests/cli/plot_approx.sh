# tools/hf_plot.py on APPROX.h5 files (headfuse approx): the PNG of error against the atom
# budget exists and is a non-blank image, and the printed Markdown table is exactly
# `headfuse table APPROX.h5 --markdown` (one file, then two).
. "$HF_SOURCE_DIR/tests/lib.sh"

# Debian's h5py and matplotlib belong to Debian's python3
[ -x "$PY" ] || PY=python3
"$PY" -c 'import h5py, matplotlib' 2>/dev/null || fail "$PY lacks h5py or matplotlib (scripts/setup installs python3-h5py python3-matplotlib)"
plot=("$PY" "$SRC/tools/hf_plot.py")

run 0 mpi 2 approx --family wd:d=2 --atoms 2..5 --samples 200 --restarts 4 --out a.h5 --quiet
run 0 mpi 2 approx --family chain:d=2 --atoms 1..3 --samples 200 --restarts 2 --out c.h5 --quiet

run 0 "${plot[@]}" a.h5 -o approx.png
cp out.txt plot-table.md
[ -s approx.png ] || fail "no image"
png_ok approx.png 500 400
run 0 "$HEADFUSE" table a.h5 --markdown
diff -u out.txt plot-table.md >diff.txt || fail "hf_plot's table differs from headfuse table --markdown:
$(cat diff.txt)"
# W_2's product head has 4 atoms: the budgets from 4 on are at rounding level
grep -q "^| wd:d=2 | 4 | .*| exact head reached (rounding level) |$" plot-table.md ||
  fail "budget 4 of W_2 should reach the exact head: $(cat plot-table.md)"
[ "$(grep -c '^| wd:d=2 |' plot-table.md)" = 4 ] || fail "expected 4 budgets: $(cat plot-table.md)"
echo "ok: PNG $(stat -c %s approx.png) bytes; table = headfuse table --markdown"

# two files: two panels, the tables one after the other as headfuse table prints them
run 0 "${plot[@]}" a.h5 c.h5 -o two.png
cp out.txt two-table.md
[ -s two.png ] || fail "no image for two files"
run 0 "$HEADFUSE" table a.h5 c.h5 --markdown
diff -u out.txt two-table.md >diff.txt || fail "two files: hf_plot's table differs:
$(cat diff.txt)"
echo "ok: two APPROX files"

# an APPROX file with a RESULT file is refused (as headfuse table refuses it); no image
run 0 mpi 1 search --family wd:d=1 --span 1 --out r.h5 --quiet
run 2 "${plot[@]}" a.h5 r.h5 -o x.png
[ ! -e x.png ] || fail "an image was written for mixed input"
echo "ok: mixed inputs are refused"
