#!/usr/bin/env bash
# Integration runs under valgrind memcheck: tokstorm-mock, and 2 tokstorm ranks under mpirun
# against it (a closed-loop sweep, an open-loop level in the completions dialect, a failed
# preflight), each process in its own valgrind. Fails on any memcheck error (invalid access,
# use of uninitialised values, bad free) and on any definite leak, in either program;
# tests/valgrind.supp holds the Open MPI suppressions, each justified.
# Possible leaks and still-reachable blocks are reported in the logs but are not failures.
# Uses the normal build (./build, RelWithDebInfo); valgrind cannot run a sanitized one.
# Usage: tests/valgrind.sh [BUILD_DIR]   (default: build; scripts/build.sh keeps it current)
# To dig into a failure: add --track-origins=yes to VG below and read the printed logs.
set -euo pipefail
cd "$(dirname "$0")/.."
SRC=$PWD
BUILD=$(cd "${1:-build}" && pwd)
command -v valgrind >/dev/null || { echo "valgrind: missing (bash scripts/deps.sh --tests)"; exit 1; }

WORK=$(mktemp -d /tmp/tokstorm-valgrind.XXXXXX)
MOCK_PID=
cleanup() {
  [ -n "$MOCK_PID" ] && kill "$MOCK_PID" 2>/dev/null || true
  rm -rf "$WORK"
}
trap cleanup EXIT
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export OMPI_MCA_btl_tcp_if_include=lo OMPI_MCA_oob_tcp_if_include=lo

# --errors-for-leak-kinds=definite: a definite leak is an error, so it sets the exit status.
VG=(valgrind --tool=memcheck --leak-check=full --errors-for-leak-kinds=definite
  --error-exitcode=99 --num-callers=40 --suppressions="$SRC/tests/valgrind.supp")

"${VG[@]}" --log-file="$WORK/vg-mock.%p" "$BUILD/tokstorm-mock" --host 127.0.0.1 --port 0 \
  --port-file "$WORK/port" --exit-after 300 --ttft 20ms --step 5ms --max-batch 64 --stats \
  >"$WORK/mock.out" 2>"$WORK/mock.err" &
MOCK_PID=$!
for _ in $(seq 300); do
  [ -s "$WORK/port" ] && break
  sleep 0.1
done
[ -s "$WORK/port" ] || { echo "valgrind: the mock did not start"; cat "$WORK"/vg-mock.*; exit 1; }

failed=0
# run_tokstorm NAME WANT_STATUS OPTIONS...: 2 ranks, each in its own valgrind.
run_tokstorm() {
  local name=$1 want=$2 rc
  shift 2
  set +e
  timeout 300 mpirun --oversubscribe --bind-to none -np 2 "${VG[@]}" \
    --log-file="$WORK/vg-tokstorm-$name.%p" "$BUILD/tokstorm" --model mock --max-tokens 8 "$@" \
    >"$WORK/$name.out" 2>"$WORK/$name.err"
  rc=$?
  set -e
  cat "$WORK/$name.out"
  if [ "$rc" -ne "$want" ]; then
    echo "FAIL - tokstorm ($name) under valgrind exited $rc, not $want (99: a memcheck error or definite leak)"
    cat "$WORK/$name.err"
    failed=1
  fi
}
URL="http://127.0.0.1:$(cat "$WORK/port")"
# The closed loop, the open loop in the completions dialect, and a failed preflight (exit 3:
# an early way out, where what was set up must still be freed).
run_tokstorm closed 0 --url "$URL" --levels 1,4 --requests-per-stream 2 --out "$WORK/closed.h5"
run_tokstorm open 0 --url "$URL" --api completions --rates 40 --requests 16 --out "$WORK/open.h5"
run_tokstorm preflight 3 --url "$URL/nowhere" --out "$WORK/none.h5"
# The sweeps must also have done their work: valgrind slows them, it must not change them.
if ! /usr/bin/python3 -c "
import h5py
f = h5py.File('$WORK/closed.h5', 'r')
assert f['level_1'].attrs['ok'] == 2 and f['level_4'].attrs['ok'] == 8
assert f['level_4'].attrs['output_tokens'] == 8 * 8
g = h5py.File('$WORK/open.h5', 'r')
assert g['rate_40'].attrs['ok'] == 16 and g['rate_40'].attrs['output_tokens'] == 16 * 8"; then
  echo "FAIL - the sweeps under valgrind did not complete every request"
  failed=1
fi

# SIGTERM: the mock stops cleanly and valgrind checks its heap at exit.
kill -TERM "$MOCK_PID"
set +e
wait "$MOCK_PID"
mock_rc=$?
set -e
MOCK_PID=
if [ "$mock_rc" -ne 0 ]; then
  echo "FAIL - tokstorm-mock under valgrind exited $mock_rc (99: a memcheck error or definite leak)"
  failed=1
fi

for log in "$WORK"/vg-*; do
  summary=$(grep -h "ERROR SUMMARY" "$log" || echo "no ERROR SUMMARY")
  echo "$(basename "$log"): ${summary#==*== }"
  grep -q "ERROR SUMMARY: 0 errors" "$log" || { failed=1; cat "$log"; }
done
[ "$failed" -eq 0 ] || { echo "valgrind: FAILED"; exit 1; }
echo "valgrind: ok, no memcheck error and no definite leak in tokstorm (2 ranks) or tokstorm-mock"
