# Shared by the command-line tests (sourced). Each test runs in its own temp dir.
set -euo pipefail
HEADFUSE=${HEADFUSE:?run through ctest (HEADFUSE unset)}
SRC=${HF_SOURCE_DIR:?run through ctest (HF_SOURCE_DIR unset)}
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
# Debian's python3 has h5py and numpy; a pyenv python3 earlier on PATH may not.
PY=/usr/bin/python3
WORK=$(mktemp -d /tmp/hf-test.XXXXXX)
trap 'rm -rf "$WORK"' EXIT
cd "$WORK"

fail() {
  echo "FAIL: $*" >&2
  exit 1
}

# run EXPECTED_STATUS CMD...: run, keep stdout/stderr in out.txt/err.txt, check status.
run() {
  local want=$1
  shift
  set +e
  "$@" >out.txt 2>err.txt
  local got=$?
  set -e
  if [ "$got" != "$want" ]; then
    echo "--- stdout" >&2; cat out.txt >&2; echo "--- stderr" >&2; cat err.txt >&2
    fail "expected exit $want, got $got: $*"
  fi
}

# mpi N ARGS...: headfuse under mpirun with N ranks (oversubscribed), 10 min cap.
mpi() {
  local n=$1
  shift
  timeout 600 mpirun --oversubscribe -n "$n" "$HEADFUSE" "$@"
}

# table_json FILE: the table with supports, without the timing field.
table_json() {
  "$HEADFUSE" table "$1" --json --supports | $PY -c '
import json, sys
rows = json.load(sys.stdin)
for r in rows:
    r.pop("seconds", None); r.pop("file", None)
print(json.dumps(rows, sort_keys=True))'
}

# json_get JSONTEXT EXPR: evaluate a Python expression on the parsed object `o`.
json_get() {
  $PY -c 'import json,sys; o=json.loads(sys.argv[1]); print(eval(sys.argv[2]))' "$1" "$2"
}

# png_ok FILE MIN_WIDTH MIN_HEIGHT: FILE is a PNG of at least that size and not blank
# (needs Debian's matplotlib).
png_ok() {
  [ "$(head -c 8 "$1" | od -An -tx1 | tr -d ' \n')" = 89504e470d0a1a0a ] || fail "$1: not a PNG"
  "$PY" - "$1" "$2" "$3" <<'PY' || fail "$1: the image is blank or the wrong size"
import sys
import matplotlib.image as mpimg
img = mpimg.imread(sys.argv[1])
h, w = img.shape[:2]
assert w >= int(sys.argv[2]) and h >= int(sys.argv[3]), (w, h)
assert img[..., :3].std() > 0.05, "blank"
PY
}

# mpi_bg N ARGS...: headfuse under mpirun with N ranks in the background, stdout and
# stderr in out.txt and err.txt; $job is mpirun's pid (a signal to it goes to mpirun)
mpi_bg() {
  local n=$1
  shift
  mpirun --oversubscribe -n "$n" "$HEADFUSE" "$@" >out.txt 2>err.txt &
  job=$!
}

# wait_until COND: poll the shell condition COND every 0.05 s, for at most 60 s
wait_until() {
  for _ in $(seq 1200); do
    if eval "$1"; then return 0; fi
    sleep 0.05
  done
  fail "never saw: $1"
}

# job_ends STATUS: wait for $job (the mpirun of mpi_bg) and check its exit status
job_ends() {
  set +e
  wait "$job"
  local st=$?
  set -e
  [ "$st" = "$1" ] || fail "mpirun: exit status $st, expected $1: $(cat err.txt)"
}

# signal_job SIG STATUS: send SIG to $job (mpirun) and check its exit status
signal_job() {
  kill -"$1" "$job"
  job_ends "$2"
}
