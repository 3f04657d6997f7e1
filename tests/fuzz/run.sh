#!/usr/bin/env bash
# Builds the libFuzzer target (clang, ASan + UBSan, in ./build-fuzz) and fuzzes the SSE parser,
# the chunk readings and the request they feed for a bounded time, starting from a copy of the
# seed corpus in a temporary directory: new inputs are never written into the repository.
# Usage: tests/fuzz/run.sh [SECONDS]   (default 60, in one process)
# A failing input is kept as build-fuzz/crash-* and the script exits 1; replay it with
#   build-fuzz/tests/fuzz_stream build-fuzz/crash-...     (or build/tests/fuzz_replay FILE)
set -euo pipefail
cd "$(dirname "$0")/../.."
seconds=${1:-60}

if ! command -v clang >/dev/null; then
  echo "fuzz: clang is missing (bash scripts/deps.sh --tests installs it)" >&2
  exit 1
fi
CC=clang cmake -S . -B build-fuzz -DCMAKE_BUILD_TYPE=RelWithDebInfo -DTOKSTORM_WERROR=ON \
  -DTOKSTORM_FUZZ=ON >/dev/null
cmake --build build-fuzz --target fuzz_stream -j"$(nproc)" >/dev/null

corpus=$(mktemp -d /tmp/tokstorm-fuzz.XXXXXX)
trap 'rm -rf "$corpus"' EXIT
cp tests/fuzz/corpus/* "$corpus/"

# -max_len: room for several events and for the 4 KiB-cap oversize cases; -timeout: one input
# taking seconds means a loop that is not linear; -rss_limit_mb: ASan's quarantine takes about
# 0.5 GiB, so growth beyond 2 GiB is a leak or an unbounded buffer. Crash files go to
# build-fuzz/ (git-ignored), not the working directory.
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1}
start=$(date +%s)
set +e
build-fuzz/tests/fuzz_stream -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 \
  -max_len=65536 -dict=tests/fuzz/sse.dict -print_final_stats=1 \
  -artifact_prefix=build-fuzz/ "$corpus" >build-fuzz/fuzz.log 2>&1
rc=$?
set -e
grep -E '^(#[0-9]+[[:space:]]+DONE|stat::(number_of_executed_units|average_exec_per_sec|new_units_added|peak_rss_mb))' \
  build-fuzz/fuzz.log || true
if [ "$rc" -ne 0 ]; then
  tail -n 60 build-fuzz/fuzz.log
  echo "fuzz: FAILED after $(($(date +%s) - start)) s (exit $rc); the input is in build-fuzz/crash-* (or leak-, timeout-, oom-)"
  exit 1
fi
echo "fuzz: ok, $seconds s, $(ls "$corpus" | wc -l) inputs in the corpus at the end (discarded)"
