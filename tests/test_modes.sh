#!/usr/bin/env bash
# The other ways to drive a level: --api completions, --bind and --connect-rate, --duration
# with --warm-up, and a server that dies in the middle of a level (its requests are counted
# and classified, the sweep goes on and exits 0).
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

# --bind: each rank's slots alternate between two source addresses, and the server sees
# connections from both (sampled with ss during the run: each stream keeps its connection
# from the preconnect to the end). 2 ranks x 4 streams, 3 requests of 40 tokens (~0.2 s) each.
MOCK_PORT=${MOCK_URL##*:}
timeout 20 sh -c 'while :; do ss -tnH state established "( sport = :$0 )"; sleep 0.05; done' \
  "$MOCK_PORT" >"$WORK/bind.peers" &
sampler=$!
timeout 60 "${MPIRUN[@]}" -np 2 "$TOKSTORM" --url "$MOCK_URL" --levels 8 --max-tokens 40 \
  --requests-per-stream 3 --bind 127.0.0.2,127.0.0.3 --out "$WORK/bind.h5" \
  >"$WORK/b.out" 2>"$WORK/b.err" && rc=0 || rc=$?
kill "$sampler" 2>/dev/null; wait "$sampler" 2>/dev/null || true
check "bind: exit 0" test "$rc" -eq 0
check "bind: 24 requests ok" $PY -c "
import h5py; a = h5py.File('$WORK/bind.h5', 'r')['level_8'].attrs
assert a['ok'] == 24 and a['err'] == 0, dict(a)"
check "bind: the server saw connections from 127.0.0.2 and 127.0.0.3 only" $PY -c "
peers = {l.split()[3].rsplit(':', 1)[0] for l in open('$WORK/bind.peers') if l.strip()}
assert peers == {'127.0.0.2', '127.0.0.3'}, peers"
timeout 30 "${MPIRUN[@]}" -np 2 "$TOKSTORM" --url "$MOCK_URL" --bind 127.0.0.2,127.0.0.x \
  --out "$WORK/bad.h5" >/dev/null 2>"$WORK/bad.err" && rc=0 || rc=$?
check "bind: a malformed address exits 2, named" \
  sh -c "[ $rc -eq 2 ] && grep -q \"'127.0.0.x' is not a numeric\" '$WORK/bad.err'"
timeout 30 "${MPIRUN[@]}" -np 2 "$TOKSTORM" --url "$MOCK_URL" --bind 192.0.2.1 \
  --out "$WORK/bad.h5" >/dev/null 2>"$WORK/bad.err" && rc=0 || rc=$?
check "bind: an address this host lacks exits 2 before any request" \
  sh -c "[ $rc -eq 2 ] && grep -q 'cannot bind to 192.0.2.1' '$WORK/bad.err' && [ ! -e '$WORK/bad.h5' ]"

# --connect-rate: 10 new connections at 20/s take 9/20 = 0.45 s of preconnect before the level
# starts; the next level's 5 find theirs kept alive and take none of the pace; unlimited, 10
# take a few milliseconds.
preconnect_s() { # preconnect_s FILE N: the preconnect time of the first N-slot level
  sed -n "s/.*preconnect: [0-9]* of $2 probes answered in \([0-9.]*\) s.*/\1/p" "$1" | head -1
}
timeout 60 "${MPIRUN[@]}" -np 1 "$TOKSTORM" --url "$MOCK_URL" --levels 10,5 --max-tokens 4 \
  --requests-per-stream 1 --connect-rate 20 -v --out "$WORK/rate.h5" \
  >"$WORK/r.out" 2>"$WORK/r.err" && rc=0 || rc=$?
check "connect-rate: exit 0" test "$rc" -eq 0
paced=$(preconnect_s "$WORK/r.err" 10)
check "connect-rate 20: 10 connections in ${paced:-?} s (0.45 s paced)" \
  $PY -c "assert 0.43 <= float('${paced:-nan}') < 1.5 * $SLOW"
reused=$(preconnect_s "$WORK/r.err" 5)
check "connect-rate 20: 5 kept-alive connections checked in ${reused:-?} s" \
  $PY -c "assert float('${reused:-nan}') < 0.2 * $SLOW"
timeout 60 "${MPIRUN[@]}" -np 1 "$TOKSTORM" --url "$MOCK_URL" --levels 10 --max-tokens 4 \
  --requests-per-stream 1 --connect-rate 0 -v --out "$WORK/rate0.h5" \
  >"$WORK/r0.out" 2>"$WORK/r0.err" && rc=0 || rc=$?
unpaced=$(preconnect_s "$WORK/r0.err" 10)
check "connect-rate 0: 10 connections in ${unpaced:-?} s (no pace)" \
  sh -c "[ $rc -eq 0 ] && $PY -c \"assert float('${unpaced:-nan}') < 0.2 * $SLOW\""

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
check "timeouts: the level ends with the timeout ($elapsed_ms ms in all)" \
  test "$elapsed_ms" -lt $((8000 * SLOW))
check "timeouts: both classified timeout, with their status" $PY -c "
import h5py; f = h5py.File('$OUT', 'r'); a = f['level_2'].attrs; r = f['level_2/requests'][:]
assert a['err'] == 2 and a['err_timeout'] == 2 and a['output_tokens'] == 0, dict(a)
assert (r['http_status'] == 200).all() and (r['end_s'] - r['start_s'] >= 0.99).all()"

# The server dies mid-level: 4 streams of 100 tokens at 50 ms per step (5 s each); the mock
# is killed after 2 s, well after tokstorm's start-up (about 0.5 s) and well before the
# streams end. Each cut stream is 'truncated'; the next level finds no server and counts
# 'connect' failures; tokstorm still exits 0 and writes both levels. Under TOKSTORM_TEST_SLOW
# the start-up takes longer, so every time here is SLOW times longer.
start_mock dying --ttft 10ms --step 50ms --max-batch 64
OUT="$WORK/dying.h5"
(sleep $((2 * SLOW)) && kill -9 "$MOCK_PID") &
killer=$!
start=$(date +%s)
timeout 60 "${MPIRUN[@]}" -np 2 "$TOKSTORM" --url "$MOCK_URL" --levels 4,2 \
  --max-tokens $((100 * SLOW)) --requests-per-stream 1 --timeout $((10 * SLOW))s --out "$OUT" \
  >"$WORK/k.out" 2>"$WORK/k.err" && rc=0 || rc=$?
wait "$killer" || true
cat "$WORK/k.out"
check "dying server: exit 0 (request failures are data)" test "$rc" -eq 0
check "dying server: well within the timeout" test $(($(date +%s) - start)) -le $((8 * SLOW))
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
