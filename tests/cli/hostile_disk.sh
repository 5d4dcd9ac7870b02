# Hostile disks (docs/reliability.md, "Fault injection"), 1-rank searches:
#  (i)  a read-only output directory: refused before any work (exit 2, the directory
#       named); or one that turns read-only during the search (the shard directory
#       writable): everything is computed and saved in shards but RESULT.h5 cannot be
#       written: exit 4, one message naming the path, no result, every unit saved; once
#       writable, --resume gives the table of an uninterrupted run;
#  (ii) a disk that fills up, at every 4 KiB of free space from 256 KiB until the search
#       fits: the shards or RESULT.h5 do not fit, one message naming the file (ENOSPC or
#       EFBIG), no half-written RESULT.h5; with the space freed, --resume gives the table
#       of an uninterrupted run.
# Root is not stopped by permissions. Mechanisms, first that works: tmpfs mounts (a
# read-only mount; a small one filled up), else (i) as user nobody in a directory owned
# by root and (ii) a file size limit (ulimit -f, SIGXFSZ ignored). HF_HOSTILE_NO_MOUNT=1
# forces the fallbacks. Exit 77 (skipped) only when (i) has no mechanism; (ii) has run
# by then. A truncated shard is tests/cli/corrupt_shard.sh.
. "$HF_SOURCE_DIR/tests/lib.sh"

export OMPI_MCA_ess_singleton_isolated=1 OMPI_MCA_btl=self OMPI_MCA_pml=ob1
mounts=()
cleanup() {
  local i
  for ((i = ${#mounts[@]} - 1; i >= 0; i--)); do umount -l "${mounts[i]}" 2>/dev/null || true; done
  cd /
  rm -rf "$WORK"
}
trap cleanup EXIT

tmpfs() { # tmpfs DIR OPTIONS: mount a tmpfs, remembered for the clean-up
  mkdir -p "$1"
  mount -t tmpfs -o "$2" tmpfs "$1" && mounts+=("$WORK/$1")
}

spec=(search --family chain:d=2 --span 5 --quiet)
"$HEADFUSE" "${spec[@]}" --out ref.h5 >out.txt 2>err.txt || fail "reference run: $(cat err.txt)"
want=$(table_json ref.h5)
total=$($PY -c 'import h5py,sys; print(h5py.File(sys.argv[1], "r")["units"].shape[0])' ref.h5)

# saved_units DIR: completed units in the shards of DIR (every shard readable).
saved_units() {
  $PY - "$1" <<'EOF'
import glob, h5py, sys
n = 0
for f in glob.glob(sys.argv[1] + "/run-*.h5"):
    with h5py.File(f, "r", swmr=True) as h:
        n += int((h["units"]["row"][:] >= 0).sum())
print(n)
EOF
}

# one_error WHAT PATTERN: stderr is one "headfuse search:" line matching PATTERN.
one_error() {
  [ "$(wc -l <err.txt)" = 1 ] || { cat err.txt >&2; fail "$1: expected one error line"; }
  grep -q "^headfuse search: .*$2" err.txt || fail "$1: message does not match '$2': $(cat err.txt)"
}

# resumed WHAT OUT [AS...]: --resume (as the given user) gives the uninterrupted table.
resumed() {
  local what=$1 out=$2
  shift 2
  run 0 "$@" "$HEADFUSE" "${spec[@]}" --out "$out" --resume
  [ "$(table_json "$out")" = "$want" ] || fail "$what: the resumed table differs"
  "$HEADFUSE" verify "$out" >/dev/null || fail "$what: verify refuses the resumed result"
}

if [ "${HF_HOSTILE_NO_MOUNT:-0}" != 1 ] && tmpfs probe size=64k 2>/dev/null; then
  mech=mount
elif setpriv --reuid=65534 --regid=65534 --clear-groups true 2>/dev/null; then
  mech=nobody
else
  mech=none
fi

# ---------------------------------------------------------------- (ii) a full disk
kinds="" last_free=0
if [ $mech = mount ]; then
  tmpfs disk size=1m
  how="a 1 MiB tmpfs filled up to leave N KiB free"
  full_msg="No space left on device"
else
  mkdir disk
  how="a file size limit of N KiB (ulimit -f)"
  full_msg="File too large"
fi
for free in $(seq 256 4 400); do
  rm -rf disk/r.h5 disk/r.h5.tmp disk/r.h5.shards disk/filler
  set +e
  if [ $mech = mount ]; then
    head -c $(((1024 - free) * 1024)) /dev/zero >disk/filler 2>/dev/null
    "$HEADFUSE" "${spec[@]}" --out disk/r.h5 >out.txt 2>err.txt
  else
    (trap '' XFSZ; ulimit -f "$free"; exec "$HEADFUSE" "${spec[@]}" --out disk/r.h5 >out.txt 2>err.txt)
  fi
  rc=$?
  set -e
  if [ $rc = 0 ]; then
    [ "$(table_json disk/r.h5)" = "$want" ] || fail "full disk: $free KiB: the table differs"
    last_free=$free
    break
  fi
  [ $rc = 4 ] || { cat err.txt >&2; fail "full disk: $free KiB: exit status $rc, expected 4"; }
  one_error "full disk: $free KiB" "$full_msg"
  [ ! -e disk/r.h5 ] && [ ! -e disk/r.h5.tmp ] || fail "full disk: $free KiB: a RESULT.h5 was left"
  if grep -q 'r\.h5\.shards/run-.*no room for more units' err.txt; then
    kind="shard"
  elif grep -q 'writing disk/r\.h5\.tmp' err.txt; then
    kind="result"
  else
    fail "full disk: $free KiB: the message names neither a shard nor the result: $(cat err.txt)"
  fi
  saved=$(saved_units disk/r.h5.shards)
  [ $kind = shard ] || [ "$saved" = "$total" ] || fail "full disk: result-level failure with $saved of $total units saved"
  kinds="$kinds $free:$kind($saved/$total units)"
  rm -f disk/filler
  resumed "full disk: $free KiB" disk/r.h5
done
[ "$last_free" -gt 0 ] || fail "full disk: the search never fitted"
case "$kinds" in *shard*) ;; *) fail "full disk: no run failed at a shard:$kinds" ;; esac
if [ $mech = mount ]; then
  case "$kinds" in *result*) ;; *) fail "full disk: no run failed at the result:$kinds" ;; esac
fi
echo "ok: full disk ($how), N:failed at (units saved):$kinds; fits from N = $last_free;" \
  "every --resume gave the uninterrupted table"

# ---------------------------------------------------------------- (i) read-only
# ro0 is read-only from the start; ro turns read-only while a search runs in it (its
# shard directory stays writable): set_ro flips it, set_rw flips it back.
as=()
case $mech in
  mount)
    how="read-only tmpfs mounts"
    tmpfs ro0 ro
    tmpfs ro size=1m
    tmpfs ro/r.h5.shards size=4m
    set_ro() { mount -o remount,ro ro; }
    set_rw() { mount -o remount,rw ro; }
    ;;
  nobody)
    how="user nobody in directories owned by root, mode 755"
    chmod 755 "$WORK"
    mkdir ro0 ro ro/r.h5.shards
    chown 65534:65534 ro ro/r.h5.shards
    set_ro() { chown 0:0 ro; }
    set_rw() { chown 65534:65534 ro; }
    as=(setpriv --reuid=65534 --regid=65534 --clear-groups env HOME="$WORK")
    ;;
  none)
    echo "SKIP: (i) read-only directory: no mechanism: mount (tmpfs) is not allowed and" \
      "setpriv cannot switch to user nobody; (ii) passed above" >&2
    exit 77
    ;;
esac

# nothing can be made: the output directory is refused by name before any work
run 2 "${as[@]}" "$HEADFUSE" "${spec[@]}" --out ro0/r.h5
one_error "read-only" "--out ro0/r\.h5: cannot write 'ro0/r\.h5': directory ro0: \(Read-only file system\|Permission denied\)"
[ ! -e ro0/r.h5 ] && [ ! -e ro0/r.h5.shards ] || fail "read-only: a result or shard directory appeared"

# the directory turns read-only during the search (stopped as soon as its shard
# exists): everything is computed, the result cannot be written, every unit is kept
slow=(search --family chain:d=2 --span 4 --no-prune --quiet)
"$HEADFUSE" "${slow[@]}" --out slow-ref.h5 >out.txt 2>err.txt || fail "reference run: $(cat err.txt)"
slow_want=$(table_json slow-ref.h5)
slow_total=$($PY -c 'import h5py,sys; print(h5py.File(sys.argv[1], "r")["units"].shape[0])' slow-ref.h5)
set +e
"${as[@]}" "$HEADFUSE" "${slow[@]}" --out ro/r.h5 >out.txt 2>err.txt &
pid=$!
set -e
for _ in $(seq 3000); do
  compgen -G "ro/r.h5.shards/run-*.h5" >/dev/null && break
  sleep 0.01
done
kill -STOP "$pid"
set_ro
kill -CONT "$pid"
set +e
wait "$pid"
rc=$?
set -e
[ "$rc" = 4 ] || { cat err.txt >&2; fail "read-only during the run: exit $rc, expected 4"; }
one_error "read-only" "ro/r\.h5: cannot create ro/r\.h5\.tmp: \(Read-only file system\|Permission denied\)"
[ ! -e ro/r.h5 ] && [ ! -e ro/r.h5.tmp ] || fail "read-only: a result file was left"
saved=$(saved_units ro/r.h5.shards)
[ "$saved" = "$slow_total" ] || fail "read-only: $saved of $slow_total units saved in the shards"
set_rw
run 0 "${as[@]}" "$HEADFUSE" "${slow[@]}" --out ro/r.h5 --resume
[ "$(table_json ro/r.h5)" = "$slow_want" ] || fail "read-only: the resumed table differs"
echo "ok: read-only output directory ($how): refused before any work (exit 2); turned" \
  "read-only during the run: exit 4 naming the path, $saved of $slow_total units saved," \
  "--resume once writable gave the uninterrupted table"
