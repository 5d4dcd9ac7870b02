# The driver of docs/performance.md §14 (bench/span_free_3d.py) on a small run: three
# random sums of two-atom heads in three variables, searched at span 3 with the cone
# engine on 2 ranks; its checks hold (every certified value is the searched m*, no
# span-free lower bound above it), and a planted lower bound one too high is refuted.
. "$HF_SOURCE_DIR/tests/lib.sh"

build=$(dirname "$HEADFUSE")
run 0 $PY "$SRC/bench/span_free_3d.py" --build "$build" --spans 3 --random 3 --no-families
grep -q '^random targets: 3, ' out.txt || fail "summary: $(cat out.txt)"
grep -q '^FAIL' out.txt && fail "checks: $(cat out.txt)"
run 1 $PY "$SRC/bench/span_free_3d.py" --build "$build" --spans 3 --random 3 --no-families --plant
grep -q '^FAIL: random_3d_0 span 3: span-free LB 17 > m\* 16$' out.txt || fail "planted: $(cat out.txt)"
echo ok
