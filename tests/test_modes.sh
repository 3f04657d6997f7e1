#!/usr/bin/env bash
# The other ways to drive a level: --api completions, --duration with --warm-up, and a
# server that dies in the middle of a level (its requests are counted and classified, the
# sweep goes on and exits 0).
source "$(dirname "$0")/lib.sh" "$1"

start_mock modes --ttft 20ms --step 5ms --max-batch 64

# Completions dialect, 2 ranks, 5 streams: every token counted.
OUT="$WORK/completions.h5"
timeout 60 "${MPIRUN[@]}" -np 2 "$TOKSTORM" --url "$MOCK_URL" --api completions \
  --levels 5 --max-tokens 12 --requests-per-stream 3 --out "$OUT" >"$WORK/c.out" 2>"$WORK/c.err" \
  && rc=0 || rc=$?
check "completions: exit 0" test "$rc" -eq 0
check "completions: 15 ok, 180 tokens, endpoint recorded" $PY -c "
import h5py; f = h5py.File('$OUT', 'r'); a = f['level_5'].attrs
assert a['ok'] == 15 and a['err'] == 0 and a['output_tokens'] == 180, dict(a)
assert f.attrs['api'] == 'completions'"

# --no-preconnect: no probe reaches the server, so its request count is its generation
# count (the 5-stream level above made 5 probes), and the first requests pay for the TCP
# handshake themselves.
MODES_URL=$MOCK_URL
start_mock cold --ttft 20ms --step 5ms --max-batch 64 --stats
timeout 60 "${MPIRUN[@]}" -np 2 "$TOKSTORM" --url "$MOCK_URL" --levels 4 --max-tokens 4 \
  --requests-per-stream 2 --no-preconnect --out "$WORK/cold.h5" >"$WORK/n.out" 2>"$WORK/n.err" \
  && rc=0 || rc=$?
kill "$MOCK_PID" 2>/dev/null; wait "$MOCK_PID" 2>/dev/null || true
check "no-preconnect: exit 0" test "$rc" -eq 0
check "no-preconnect: no probe sent (9 requests, 9 generations)" \
  grep -q "requests=9 generations=9 " "$WORK/cold.err"
MOCK_URL=$MODES_URL

# --duration with --warmup: warm-up requests are not recorded; measured requests start only
# within the duration, so every stream's measured requests begin before it ends.
OUT="$WORK/duration.h5"
timeout 60 "${MPIRUN[@]}" -np 2 "$TOKSTORM" --url "$MOCK_URL" --levels 4 --max-tokens 8 \
  --duration 1s --warmup 1 --out "$OUT" >"$WORK/d.out" 2>"$WORK/d.err" && rc=0 || rc=$?
check "duration: exit 0" test "$rc" -eq 0
# One request takes 20 ms + 7 x 5 ms = 55 ms: about 18 per stream in 1 s.
check "duration: requests bounded by the duration, warm-up left out" $PY -c "
import h5py, numpy as np; f = h5py.File('$OUT', 'r'); r = f['level_4/requests'][:]
assert (r['request'] >= 1).all(), 'a warm-up request was recorded'
assert len(r) >= 4 * 10 and len(r) <= 4 * 25, len(r)
assert (r['error_class'] == 0).all()
# Measured requests start after the warm-up and no later than the duration (from level start).
level_start = f['level_4'].attrs['start_s']
assert r['start_s'].max() - level_start <= 1.0 + 1e-3, r['start_s'].max() - level_start
assert f.attrs['duration_s'] == 1.0 and f.attrs['warmup'] == 1"

# Timeouts on kept-alive connections: batch 1, so the second stream waits in the queue (it
# has its headers, no token) while the first streams 500 tokens at 10 ms a step; --timeout
# 1s ends both. Both are 'timeout', not 'connect', although their connections were reused
# from the preconnect probes (libcurl reports no connect time for a reused connection).
start_mock slow --ttft 10ms --step 10ms --max-batch 1
OUT="$WORK/timeout.h5"
start=$(date +%s%N)
timeout 60 "${MPIRUN[@]}" -np 2 "$TOKSTORM" --url "$MOCK_URL" --levels 2 --max-tokens 500 \
  --requests-per-stream 1 --timeout 1s --out "$OUT" >"$WORK/t.out" 2>"$WORK/t.err" \
  && rc=0 || rc=$?
elapsed_ms=$((($(date +%s%N) - start) / 1000000))
check "timeouts: exit 0" test "$rc" -eq 0
check "timeouts: the level ends with the timeout ($elapsed_ms ms in all)" test "$elapsed_ms" -lt 8000
check "timeouts: both classified timeout, with their status" $PY -c "
import h5py; f = h5py.File('$OUT', 'r'); a = f['level_2'].attrs; r = f['level_2/requests'][:]
assert a['err'] == 2 and a['err_timeout'] == 2 and a['output_tokens'] == 0, dict(a)
assert (r['http_status'] == 200).all() and (r['end_s'] - r['start_s'] >= 0.99).all()"

# The server dies mid-level: 4 streams of 100 tokens at 50 ms per step (5 s each); the mock
# is killed after 2 s, well after tokstorm's start-up (about 0.5 s) and well before the
# streams end. Each cut stream is 'truncated'; the next level finds no server and counts
# 'connect' failures; tokstorm still exits 0 and writes both levels.
start_mock dying --ttft 10ms --step 50ms --max-batch 64
OUT="$WORK/dying.h5"
(sleep 2 && kill -9 "$MOCK_PID") &
killer=$!
start=$(date +%s)
timeout 60 "${MPIRUN[@]}" -np 2 "$TOKSTORM" --url "$MOCK_URL" --levels 4,2 --max-tokens 100 \
  --requests-per-stream 1 --timeout 10s --out "$OUT" >"$WORK/k.out" 2>"$WORK/k.err" \
  && rc=0 || rc=$?
wait "$killer" || true
cat "$WORK/k.out"
check "dying server: exit 0 (request failures are data)" test "$rc" -eq 0
check "dying server: well within the timeout" test $(($(date +%s) - start)) -le 8
check "dying server: truncated, then connect, counted per class" $PY -c "
import h5py, numpy as np; f = h5py.File('$OUT', 'r')
a = f['level_4'].attrs; b = f['level_2'].attrs
assert a['ok'] == 0 and a['err'] == 4 and a['err_truncated'] == 4 and a['output_tokens'] == 0, dict(a)
assert b['err'] == 2 and b['err_connect'] == 2, dict(b)
r = f['level_4/requests'][:]
assert (r['error_class'] == 5).all() and (r['http_status'] == 200).all()
assert (r['output_tokens'] == 0).all() and (r['content_events'] > 5).all()"
check "dying server: the table shows the error mix" grep -q "errors: truncated=4" "$WORK/k.out"
finish modes
