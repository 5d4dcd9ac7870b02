# valgrind memcheck (label memcheck): headfuse check, a 1-rank search (singleton MPI
# init, no mpirun) and verify, and the deal's unit tests on 2 real ranks (ranges handed
# out and stolen, a rank that fails), with no memory errors and no definite leaks outside
# the Open MPI/PMIx allocations suppressed in tests/valgrind/openmpi.supp.
. "$HF_SOURCE_DIR/tests/lib.sh"

vg() { # run headfuse under valgrind; status 1 on any error or definite leak
  timeout 300 valgrind -q --error-exitcode=1 --leak-check=full --errors-for-leak-kinds=definite \
    --suppressions="$SRC/tests/valgrind/openmpi.supp" "$HEADFUSE" "$@"
}

run 0 vg check --family wd:d=2 --keys "0,0;1,0;0,1;1,1" --json
[ "$(json_get "$(cat out.txt)" 'o["feasible"]')" = True ] || fail "check: $(cat out.txt)"
echo "ok: check clean under valgrind"

run 0 vg search --family chain:d=2 --span 2 --out r.h5 --quiet
grep -q "m\* = 7" out.txt || fail "search: unexpected result: $(cat out.txt)"
[ -s r.h5 ] || fail "search wrote no r.h5"
echo "ok: 1-rank search clean under valgrind"

run 0 vg verify r.h5
grep -q "verified exactly" out.txt || fail "verify: $(cat out.txt)"
echo "ok: verify clean under valgrind"

# The deal runs only on several ranks: its CUnit tests under mpirun, each rank under
# valgrind (CUnit exits nonzero on a failed assertion too).
sched_ranks=$(dirname "$HEADFUSE")/test_sched_ranks
[ -x "$sched_ranks" ] || fail "no $sched_ranks"
timeout 300 mpirun --oversubscribe -n 2 valgrind -q --error-exitcode=1 --leak-check=full \
  --errors-for-leak-kinds=definite --suppressions="$SRC/tests/valgrind/openmpi.supp" \
  "$sched_ranks" >vg_sched.txt 2>&1 || { tail -40 vg_sched.txt >&2; fail "test_sched_ranks on 2 ranks under valgrind"; }
grep -q "asserts .* 0 *n/a" vg_sched.txt || fail "test_sched_ranks: no CUnit summary: $(tail -5 vg_sched.txt)"
echo "ok: the deal's tests on 2 ranks clean under valgrind"
