#!/usr/bin/env bash
# Replay the saved fuzz inputs: every file of tests/fuzz/<name>/ through the harness
# fuzz_<name> (CTest fuzz.regress), and every file of tests/fuzz/<name>/upstream/
# with the readers' guard on. Works with the replay build (gcc) and with the
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
  # upstream/: inputs that crash or hang libhdf5 itself. With the readers' guard on,
  # as in headfuse, each must end in a clean error: the crash stays in the guard's
  # child. A short time limit for the hangs; a scratch directory for whatever a
  # libFuzzer child leaves behind.
  [ -d "$d/upstream" ] || continue
  mapfile -t up < <(find "$d/upstream" -maxdepth 1 -type f ! -name '.*' | sort)
  [ ${#up[@]} -gt 0 ] || continue
  scratch=$(mktemp -d)
  if ! (cd "$scratch" && HF_FUZZ_GUARD=1 HEADFUSE_READ_TIMEOUT=3 "$exe" "${up[@]}") \
    >"/tmp/hf-regress-$name.$$.log" 2>&1; then
    cat "/tmp/hf-regress-$name.$$.log" >&2
    echo "regress: FAIL: fuzz_$name (read guard on) on $d/upstream" >&2
    status=1
  fi
  rm -rf "$scratch" "/tmp/hf-regress-$name.$$.log"
  ran=$((ran + ${#up[@]}))
  echo "regress: fuzz_$name: ${#up[@]} upstream inputs ok with the read guard"
done
echo "regress: $ran inputs replayed"
exit $status
