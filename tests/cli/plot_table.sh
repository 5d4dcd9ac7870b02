# tools/hf_plot.py on a real RESULT.h5 (a small job of several families): the PNG exists,
# is a non-trivial PNG image, and the printed Markdown table is exactly
# `headfuse table --markdown` of the same files; bad files are reported, not plotted.
. "$HF_SOURCE_DIR/tests/lib.sh"

# Debian's h5py and matplotlib belong to Debian's python3
PY=/usr/bin/python3
[ -x "$PY" ] || PY=python3
"$PY" -c 'import h5py, matplotlib' 2>/dev/null || fail "$PY lacks h5py or matplotlib (scripts/setup installs python3-h5py python3-matplotlib)"
plot=("$PY" "$SRC/tools/hf_plot.py")

cat >p.yaml <<'EOF'
name: p
entries:
  - {family: wd, d: 1..3, span: 1}
  - {family: chain, d: 2, span: 1..2}
  - {family: multi, d: 2, k: 3, span: 2}
  - {family: wdw, d: 2, span: 1, max_atoms: 2}
  - {target: data/two_heads_shared.json, span: 2}
EOF
run 0 mpi 2 run p.yaml --quiet
run 0 mpi 1 search --family wd:d=4 --span 1 --out w4.h5 --quiet

run 0 "${plot[@]}" p.h5 w4.h5 -o atoms.png
cp out.txt plot-table.md
[ -s atoms.png ] || fail "no image"
[ "$(head -c 8 atoms.png | od -An -tx1 | tr -d ' \n')" = 89504e470d0a1a0a ] || fail "not a PNG"
[ "$(stat -c %s atoms.png)" -gt 20000 ] || fail "suspiciously small image: $(stat -c %s atoms.png) bytes"
"$PY" - atoms.png <<'PY' || fail "the image is blank or the wrong size"
import sys
import matplotlib.image as mpimg
img = mpimg.imread(sys.argv[1])
h, w = img.shape[:2]
assert w >= 800 and h >= 400, (w, h)
assert img[..., :3].std() > 0.05, "blank"
PY
run 0 "$HEADFUSE" table p.h5 w4.h5 --markdown
diff -u out.txt plot-table.md >diff.txt || fail "hf_plot's table differs from headfuse table --markdown:
$(cat diff.txt)"
grep -q "open" plot-table.md || fail "the max_atoms row should be open: $(cat plot-table.md)"
echo "ok: PNG $(stat -c %s atoms.png) bytes; table = headfuse table --markdown ($(($(wc -l <plot-table.md) - 2)) rows)"

# errors: a missing file (2) and a file that is not a result (6); no image written
printf 'not hdf5' >junk.h5
run 2 "${plot[@]}" missing.h5 -o x.png
run 6 "${plot[@]}" junk.h5 -o x.png
[ ! -e x.png ] || fail "an image was written for bad input"
echo "ok: bad inputs are reported"
