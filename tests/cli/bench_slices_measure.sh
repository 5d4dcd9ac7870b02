# The driver of docs/performance.md §14, "Slices: what they certify"
# (bench/slices_measure.py) on a small run, with this build standing for both builds: two
# random sums of two-atom heads in three variables searched at span 3, one sum of three
# one-variable blocks at spans 3 and 4 (and its blocks alone), one four-variable sum
# unsearched; its checks hold, and a planted lower bound one too high is refuted.
. "$HF_SOURCE_DIR/tests/lib.sh"

build=$(dirname "$HEADFUSE")
args=(--before "$build" --build "$build" --random 2 --blocks 1 --mixed 1 --spans 3
  --block-spans 3-4)
run 0 $PY "$SRC/bench/slices_measure.py" "${args[@]}"
for want in '^random (all): 2 targets, ' '^blocks (all): 1 targets, ' '^parts (all): 3 targets, ' \
  '^mixed (all): 1 targets, '; do
  grep -q "$want" out.txt || fail "summary $want: $(cat out.txt)"
done
grep -q '^FAIL' out.txt && fail "checks: $(cat out.txt)"
run 1 $PY "$SRC/bench/slices_measure.py" "${args[@]}" --plant
grep -q '^FAIL: random_3d_0 span 3: span-free LB after 17 > m\* 16$' out.txt ||
  fail "planted: $(cat out.txt)"
echo ok
