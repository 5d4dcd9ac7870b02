# A corrupt or truncated shard is detected and reported by name, never merged silently.
. "$HF_SOURCE_DIR/tests/lib.sh"

spec=(--family wd:d=3 --span 2 --no-prune)
for damage in truncate scribble; do
  rm -rf c.h5 c.h5.shards
  timeout 600 mpirun --oversubscribe -n 2 "$HEADFUSE" search "${spec[@]}" --out c.h5 --quiet &
  for _ in $(seq 300); do
    [ "$(find c.h5.shards -name 'run-*.h5' -size +8k 2>/dev/null | wc -l)" -ge 1 ] && break
    sleep 0.1
  done
  sleep 1
  pkill -KILL -f "headfuse search.*c.h5" || true
  wait || true
  shard=$(find c.h5.shards -name 'run-*.h5' -size +8k | sort | head -1)
  [ -n "$shard" ] || fail "no shard written"
  size=$(stat -c %s "$shard")
  if [ $damage = truncate ]; then
    truncate -s $((size / 2)) "$shard"
  else
    # keep the superblock, overwrite everything after it with garbage
    head -c $((size - 1024)) /dev/urandom | dd of="$shard" bs=1024 seek=1 conv=notrunc 2>/dev/null
  fi
  run 6 mpi 2 search "${spec[@]}" --out c.h5 --quiet --resume
  grep -q "$(basename "$shard")" err.txt || fail "$damage: message does not name the shard: $(cat err.txt)"
  [ ! -e c.h5 ] || fail "$damage: result written from a corrupt shard"
  echo "ok: $damage shard reported: $(head -1 err.txt)"
done
