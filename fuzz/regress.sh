#!/usr/bin/env bash
# Replay the saved fuzz inputs: every file of tests/fuzz/<name>/ through the harness
# fuzz_<name> (CTest fuzz.regress). Works with the replay build (gcc) and with the
# libFuzzer build, whose programs run the files given to them once each.
#   fuzz/regress.sh BUILD_DIR_WITH_THE_HARNESSES TESTS_FUZZ_DIR
set -euo pipefail
bin=$1 dir=$2
status=0 ran=0
for d in "$dir"/*/; do
  name=$(basename "$d")
  exe=$bin/fuzz_$name
  if [ ! -x "$exe" ]; then
    echo "regress: no harness $exe for $d" >&2
    status=1
    continue
  fi
  mapfile -t files < <(find "$d" -maxdepth 1 -type f ! -name '.*' | sort)
  [ ${#files[@]} -gt 0 ] || continue
  if ! "$exe" "${files[@]}" >"/tmp/hf-regress-$name.$$.log" 2>&1; then
    cat "/tmp/hf-regress-$name.$$.log" >&2
    echo "regress: FAIL: fuzz_$name on $d" >&2
    status=1
  fi
  rm -f "/tmp/hf-regress-$name.$$.log"
  ran=$((ran + ${#files[@]}))
  echo "regress: fuzz_$name: ${#files[@]} inputs ok"
done
echo "regress: $ran inputs replayed"
exit $status
