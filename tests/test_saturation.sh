#!/usr/bin/env bash
# Saturation testing against the mock's batch model: the --until-saturated ladder in closed
# and open loop must put the saturation point where --max-batch puts it (within one step),
# and open-loop arrivals must follow their seeded schedule whatever the server does.
source "$(dirname "$0")/lib.sh" "$1"

# Batch 8, 20 ms TTFT, 10 ms steps, 16 tokens: a request takes 20 + 15 x 10 = 170 ms, so the
# server saturates at C = 8 streams, i.e. 8 / 0.17 s = 47 requests/s.
start_mock sat --ttft 20ms --step 10ms --max-batch 8
COMMON=(--url "$MOCK_URL" --max-tokens 16)

timeout 120 "${MPIRUN[@]}" -np 2 "$TOKSTORM" "${COMMON[@]}" --until-saturated \
  --requests-per-stream 3 --out "$WORK/closed.h5" >"$WORK/closed.out" 2>"$WORK/closed.err" \
  && rc=0 || rc=$?
cat "$WORK/closed.out"
check "closed ladder: exit 0" test "$rc" -eq 0
check "closed ladder: saturation point within one step of the batch limit (C=8)" $PY -c "
import h5py; f = h5py.File('$WORK/closed.h5', 'r'); a = f.attrs
levels = sorted(int(g.split('_')[1]) for g in f if g.startswith('level_'))
print('levels', levels, 'knee', a['saturation_knee_level'], 'peak at', a['saturation_peak_level'])
assert levels[:5] == [1, 2, 4, 8, 16], levels
assert a['saturation_knee_level'] in (4, 8, 16)
assert a['saturation_stop_reason'].startswith('throughput grew less than 5%')
# Independently of tokstorm's figures: tokens / wall of the knee level from its rows.
r = f['level_%d/requests' % int(a['saturation_knee_level'])][:]
agg = r['output_tokens'].sum() / (r['end_s'].max() - r['start_s'].min())
assert abs(agg - f['level_%d' % int(a['saturation_knee_level'])].attrs['agg_tok_s']) < 1e-6 * agg"

# Open loop, 100 requests per level from 20 req/s: below 47 req/s the server keeps up (tokens
# follow the offered rate), above it the queue grows and throughput stays at the batch limit.
timeout 150 "${MPIRUN[@]}" -np 2 "$TOKSTORM" "${COMMON[@]}" --until-saturated --rates 20 \
  --requests 100 --seed 7 --out "$WORK/open.h5" >"$WORK/open.out" 2>"$WORK/open.err" \
  && rc=0 || rc=$?
cat "$WORK/open.out"
check "open ladder: exit 0" test "$rc" -eq 0
check "open ladder: saturation rate within one step of 47 req/s (40 or 80)" $PY -c "
import h5py; f = h5py.File('$WORK/open.h5', 'r'); a = f.attrs
print('knee', a['saturation_knee_level'], 'reason', a['saturation_stop_reason'])
assert a['saturation_knee_level'] in (40, 80), a['saturation_knee_level']
assert a['mode'] == 'open' and a['seed'] == 7"
check "open loop: every level sent exactly --requests, each at its scheduled time" $PY -c "
import h5py, numpy as np; f = h5py.File('$WORK/open.h5', 'r')
for g in (g for g in f if g.startswith('rate_')):
    a = f[g].attrs; r = f[g + '/requests'][:]
    assert len(r) == 100 and a['ok'] == 100, (g, len(r))
    lag = r['start_s'] - r['scheduled_s']
    assert (lag >= 0).all() and np.percentile(lag, 50) < 0.002 * $SLOW, (g, lag.max())
    for k in (0, 1):
        s = np.sort(r['scheduled_s'][r['rank'] == k])
        assert (np.diff(s) >= 0).all() and len(s) == 50
    # The offered rate shows in the schedule: 100 arrivals over about 100 / rate seconds.
    span = r['scheduled_s'].max() - a['start_s']
    assert 0.5 * 100 / a['rate'] < span < 2 * 100 / a['rate'], (g, span)"

# The same seed gives the same arrivals; late requests show when the cap is too small.
for run in a b; do
  timeout 60 "${MPIRUN[@]}" -np 2 "$TOKSTORM" "${COMMON[@]}" --rates 100 --requests 30 \
    --seed 11 --arrival gamma --burstiness 0.5 --max-concurrency 2 --out "$WORK/seed-$run.h5" \
    >"$WORK/seed-$run.out" 2>&1 || true
done
check "same seed, same arrival times (relative to the level start)" $PY -c "
import h5py, numpy as np
def sched(p):
    f = h5py.File(p, 'r'); r = f['rate_100/requests'][:]; t0 = f['rate_100'].attrs['start_s']
    return np.sort(np.round((r['scheduled_s'] - t0) * 1e6))
a, b = sched('$WORK/seed-a.h5'), sched('$WORK/seed-b.h5')
assert len(a) == 30 and (a == b).all()"
check "a cap of 2 in flight at 100 req/s: requests wait, count late, latency from schedule grows" $PY -c "
import h5py; f = h5py.File('$WORK/seed-a.h5', 'r'); a = f['rate_100'].attrs
print('late', a['late'], 'ttft p50', a['ttft_p50_ms'], 'from schedule', a['ttft_sched_p50_ms'])
assert a['late'] > 10 and a['ttft_sched_p50_ms'] > 2 * a['ttft_p50_ms']
assert (f['rate_100/requests'][:]['late'] == 1).sum() == a['late']"
# The cap is shared out exactly (3 over 2 ranks: 2 + 1), and ranks whose clocks differ (a test
# hook shifts rank r's clock by r x 200 ms) still send on schedule: the open loop's timer
# follows each rank's aligned clock.
TOKSTORM_TEST_CLOCK_OFFSET_NS=200000000 timeout 60 "${MPIRUN[@]}" -np 2 \
  -x TOKSTORM_TEST_CLOCK_OFFSET_NS "$TOKSTORM" "${COMMON[@]}" --rates 20 --requests 20 \
  --max-concurrency 3 --out "$WORK/offset.h5" >"$WORK/offset.out" 2>&1 && rc=0 || rc=$?
check "shifted clocks: exit 0" test "$rc" -eq 0
check "cap of 3 over 2 ranks stays 3; sends on time on both ranks despite 200 ms offsets" $PY -c "
import h5py; f = h5py.File('$WORK/offset.h5', 'r'); a = f['rate_20'].attrs
lag = f['rate_20/rank_load'][:]['send_lag_p99_ms']
off = f['ranks'][:]['clock_offset_ns']
print('cap', a['concurrency'], 'lag p99 per rank', list(lag), 'offsets', list(off))
assert a['concurrency'] == 3 and a['ok'] == 20
# A timer on the wrong clock shows the whole 200 ms; 50 ms leaves room for this VM's hiccups.
assert abs(off[1] - 200000000) < 1000000 * $SLOW and (lag < 50 * $SLOW).all()"
finish saturation
