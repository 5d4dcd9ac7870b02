# A stop in every phase (issue 21 item 3; docs/reliability.md, "Stopping in every phase"):
# HEADFUSE_STOP_AT=PHASE:N requests the stop at the N-th check of PHASE, exactly as if
# SIGUSR1 had come then (the same flag, headfuse/stop.h). For each phase a search on 2
# ranks passes through, at a random check inside it (the counts come from an
# uninterrupted run): exit 75, one message naming the phase and saying what was kept, no
# result file, and --resume gives the uninterrupted table. Rows: chain:d=3 span 5 (the
# cone engine: P/Q, its rows, its rays, the sizes of its faces, units, exact tests, the
# merge, the write) and chain:d=2 span 3 layered (its face tables). HF_STOP_SEED picks the points.
. "$HF_SOURCE_DIR/tests/lib.sh"

seed=${HF_STOP_SEED:-$RANDOM}
echo "seed $seed (HF_STOP_SEED=$seed reruns these points)"
RANDOM=$seed

# reach PHASE COUNTS: a check number that some rank reaches in every run. A rank's count
# of a dealt phase (units, exact tests, the rays of dealt steps) varies from run to run
# with what the deal gave it (rank 0: 29 to 31 units' checks of 48), but the two ranks'
# total hardly does, so one of them reaches 95 % of half the total; a phase that every
# rank passes alike (P/Q, the rows, the sizes) reaches the smaller count on both, and one
# that only one rank passes (the merge, the write) is deterministic there: its own count.
reach() {
  local v total=0 ranks=0 min=-1
  for v in $(sed -n "s/.* $1=\([0-9]*\).*/\1/p" <<<"$2"); do
    total=$((total + v))
    [ "$v" -gt 0 ] && ranks=$((ranks + 1))
    if [ "$min" -lt 0 ] || [ "$v" -lt "$min" ]; then min=$v; fi
  done
  local half=$((total * 95 / 200))
  if [ "$ranks" -le 1 ]; then echo "$total"; elif [ "$min" -gt "$half" ]; then echo "$min"; else echo "$half"; fi
}

# phases ARGS...: each phase's number of checks in an uninterrupted run (reach)
check_row() {
  local args=("$@") ref counts ph n at
  rm -rf ref.h5 ref.h5.shards
  HEADFUSE_FAULT_COUNT=1 run 0 mpi 2 search "${args[@]}" --quiet --out ref.h5
  ref=$(table_json ref.h5)
  counts=$(grep "stop checks:.*(rank [01])" err.txt) || fail "no stop checks counted: $(cat err.txt)"
  [ "$(wc -l <<<"$counts")" = 2 ] || fail "stop checks not counted on both ranks: $counts"
  for ph in FRACTION ROWS RAYS SIZES TABLES UNITS EXACT MERGE WRITE; do
    n=$(reach "$ph" "$counts")
    [ "${n:-0}" -gt 0 ] || continue
    at=$((1 + RANDOM % n))
    rm -rf s.h5 s.h5.shards
    HEADFUSE_STOP_AT=$ph:$at run 75 mpi 2 search "${args[@]}" --quiet --out s.h5
    [ ! -e s.h5 ] || fail "$ph:$at: a result was written although the run stopped"
    [ "$(grep -c '^headfuse search:' err.txt)" = 1 ] || fail "$ph:$at: not one message: $(cat err.txt)"
    grep -q -- "--resume" err.txt || fail "$ph:$at: no resume hint: $(cat err.txt)"
    case $ph in
      MERGE | WRITE) grep -q "every unit.* is saved\|every unit of the search is finished" err.txt ||
        fail "$ph:$at: the message does not say that every unit is kept: $(cat err.txt)" ;;
    esac
    said=$(sed -n 's/^headfuse search: //p' err.txt | cut -c1-100)
    run 0 mpi 2 search "${args[@]}" --quiet --out s.h5 --resume
    [ "$(table_json s.h5)" = "$ref" ] || fail "$ph:$at: the resumed table differs"
    echo "ok: ${args[*]}: stop at $ph:$at of $n -> 75 ($said...); --resume = uninterrupted"
  done
}

check_row --family chain:d=3 --span 5 --engine cone
check_row --family chain:d=2 --span 3 --engine layered

# a bad hook is refused like any bad input
run 2 env HEADFUSE_STOP_AT=nowhere:1 "$HEADFUSE" target --family wd:d=2
grep -q "HEADFUSE_STOP_AT=nowhere:1: must be PHASE:N" err.txt || fail "bad hook: $(cat err.txt)"
echo "ok: HEADFUSE_STOP_AT=nowhere:1 refused"
