#!/usr/bin/env bash
# tokstorm's own overhead, against tokstorm-mock on this machine (loopback only, bounded).
# Prints a markdown table of the figures and the commands that produced them; docs/
# benchmarks.md keeps a copy. Usage: bash scripts/bench-overhead.sh [BUILD_DIR]
# The mock runs on CPU 1 and the tokstorm rank on CPU 0, so neither takes the other's core.
set -euo pipefail
BUILD=$(cd "${1:-$(dirname "$0")/../build}" && pwd)
PY=/usr/bin/python3
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export OMPI_MCA_btl_tcp_if_include=lo OMPI_MCA_oob_tcp_if_include=lo
WORK=$(mktemp -d /tmp/tokstorm-bench.XXXXXX)
MOCK_PID=
trap '[ -n "$MOCK_PID" ] && kill "$MOCK_PID" 2>/dev/null; rm -rf "$WORK"' EXIT

start_mock() { # start_mock OPTIONS...: a mock pinned to CPU 1
  [ -n "$MOCK_PID" ] && { kill "$MOCK_PID" 2>/dev/null; wait "$MOCK_PID" 2>/dev/null || true; }
  rm -f "$WORK/port"
  taskset -c 1 "$BUILD/tokstorm-mock" --port 0 --port-file "$WORK/port" --exit-after 600 "$@" \
    >/dev/null 2>"$WORK/mock.err" &
  MOCK_PID=$!
  for _ in $(seq 100); do [ -s "$WORK/port" ] && break; sleep 0.05; done
  URL="http://127.0.0.1:$(cat "$WORK/port")"
}

# mock_cpu: the mock's CPU seconds so far (user + system, from /proc; clock ticks of 10 ms).
mock_cpu() {
  awk -v hz="$(getconf CLK_TCK)" '{ printf "%.2f", ($14 + $15) / hz }' "/proc/$MOCK_PID/stat"
}

# launch NAME TOKSTORM_OPTIONS...: one rank pinned to CPU 0, results in $WORK/NAME.h5; the
# mock's CPU seconds over the run (preconnect and start included) in MOCK_CPU, to show
# whether the mock, on its own core, had time to spare.
launch() {
  local name=$1
  shift
  echo "    mpirun -np 1 --bind-to none taskset -c 0 tokstorm --url \$MOCK $*" >>"$WORK/commands"
  local before after
  before=$(mock_cpu)
  timeout 600 mpirun -np 1 --bind-to none taskset -c 0 "$BUILD/tokstorm" --url "$URL" \
    --out "$WORK/$name.h5" "$@" >"$WORK/$name.out" 2>&1 || { cat "$WORK/$name.out"; exit 1; }
  after=$(mock_cpu)
  MOCK_CPU=$(awk -v a="$before" -v b="$after" 'BEGIN { printf "%.2f", b - a }')
}

# run NAME TOKSTORM_OPTIONS...: launch, then one line of figures per level.
run() {
  launch "$@"
  $PY - "$WORK/$1.h5" "$1" "$MOCK_CPU" <<'PYEOF'
import sys, h5py
f = h5py.File(sys.argv[1], "r")
for g in sorted(f, key=lambda n: (not n.startswith(("level_", "rate_")), n)):
    if not g.startswith(("level_", "rate_")):
        continue
    a, load = f[g].attrs, f[g + "/rank_load"][0]
    tokens = a["output_tokens"]
    print(f"| {sys.argv[2]} {g} | {tokens} | {a['agg_tok_s']:.0f} | {load['cpu_s']:.3f} | "
          f"{load['cpu_s'] / tokens * 1e6:.3f} | {100 * load['busy_fraction']:.0f}% | "
          f"{load['max_rss_mib']:.1f} | {a['itl_p99_ms']:.2f} | {a['ok']}/{a['ok'] + a['err']} | "
          f"{sys.argv[3]} / {a['wall_s']:.2f} |")
PYEOF
}

echo "| run | tokens | tok/s | rank CPU s | CPU s per 1M tokens | loop busy | max RSS MiB | ITL p99 ms | ok | mock CPU s (whole run) / level wall s |"
echo "|---|---|---|---|---|---|---|---|---|---|"
: >"$WORK/commands"

# 1. CPU per million tokens at a rate the rank keeps up with: 64 streams, one token per 1 ms
#    step each (64k tok/s offered), with 1 and with 8 events per write.
for k in 1 8; do
  echo "    tokstorm-mock --ttft 0 --step 1ms --max-batch 100000 --events-per-write $k" >>"$WORK/commands"
  start_mock --ttft 0 --step 1ms --max-batch 100000 --events-per-write "$k"
  run "cpu-epw$k" --levels 64 --max-tokens 4000 --requests-per-stream 2
done

# 2. The highest token rate one rank sustains: no artificial delay (1 us steps), 256 streams.
for k in 1 8; do
  echo "    tokstorm-mock --ttft 0 --step 1us --max-batch 100000 --events-per-write $k" >>"$WORK/commands"
  start_mock --ttft 0 --step 1us --max-batch 100000 --events-per-write "$k"
  run "max-epw$k" --levels 256 --max-tokens 4000 --requests-per-stream 1
done

# 3. Memory per in-flight stream: 1,000 and 10,000 streams of 40 tokens, 50 ms apart.
echo "    tokstorm-mock --ttft 0 --step 50ms --max-batch 100000" >>"$WORK/commands"
start_mock --ttft 0 --step 50ms --max-batch 100000
run "mem-1k" --levels 1000 --max-tokens 40 --requests-per-stream 1
run "mem-10k" --levels 10000 --max-tokens 40 --requests-per-stream 1 --timeout 120s -v
grep -ho "preconnect: .*" "$WORK/mem-10k.out" | sed 's/^/    mem-10k /' >"$WORK/preconnect"

# 4. The client's own timing error: 256 to 1,024 streams, first token after 20 ms, then one every
#    20 ms, each chunk stamped by the mock with its send time (CLOCK_MONOTONIC, the clock
#    tokstorm reads). TTFT error: arrival - stamp of a request's first content event; ITL
#    error: |arrival gap - stamp gap| of consecutive events; stamp delay: arrival - stamp of
#    every event. Milliseconds.
echo
echo "| run | events | TTFT error p50 / p99 ms | ITL error p50 / p99 ms | stamp delay p50 / p99 / max ms | ITL p50 / p99 ms | send lag p99 ms | ok |"
echo "|---|---|---|---|---|---|---|---|"
#    The target is stated at 1,024 streams; 256 and 512 show how the error grows with the
#    streams one rank reads (every 20 ms all of them get a token at once).
for k in 1 8; do
  echo "    tokstorm-mock --ttft 20ms --step 20ms --max-batch 100000 --events-per-write $k" >>"$WORK/commands"
  start_mock --ttft 20ms --step 20ms --max-batch 100000 --events-per-write "$k"
  for c in 256 512 1024; do
    launch "err-epw$k-$c" --levels $c --max-tokens 100 --requests-per-stream 1
    $PY - "$WORK/err-epw$k-$c.h5" "err-epw$k" <<'PYEOF'
import sys, h5py
f = h5py.File(sys.argv[1], "r")
for g in sorted(n for n in f if n.startswith("level_")):
    a = f[g].attrs
    print(f"| {sys.argv[2]} {g} | {a['stamp_delay_count']} | "
          f"{a['ttft_error_p50_ms']:.2f} / {a['ttft_error_p99_ms']:.2f} | "
          f"{a['itl_error_p50_ms']:.2f} / {a['itl_error_p99_ms']:.2f} | "
          f"{a['stamp_delay_p50_ms']:.2f} / {a['stamp_delay_p99_ms']:.2f} / {a['stamp_delay_max_ms']:.2f} | "
          f"{a['itl_p50_ms']:.2f} / {a['itl_p99_ms']:.2f} | {a['send_lag_p99_ms']:.2f} | "
          f"{a['ok']}/{a['ok'] + a['err']} |")
PYEOF
  done
done

echo
echo "The 10,000-stream level's preconnect (-v):"
cat "$WORK/preconnect"
echo
echo "Commands (CPU 0 runs the rank, CPU 1 the mock):"
echo
cat "$WORK/commands"
