# tests/lib.sh: shared by the integration test scripts (sourced, not run).
# Usage: source lib.sh BUILD_DIR; every mock started with start_mock is killed on exit.
set -euo pipefail

BUILD=$(cd "$1" && pwd)
SRC=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
TOKSTORM="$BUILD/tokstorm"
MOCK="$BUILD/tokstorm-mock"
PY=/usr/bin/python3
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
# Loopback only, no shared-memory probing surprises inside containers.
export OMPI_MCA_btl_tcp_if_include=lo OMPI_MCA_oob_tcp_if_include=lo
MPIRUN=(mpirun --oversubscribe --bind-to none)
# TOKSTORM_TEST_SLOW=1 (tests/sanitize.sh): tokstorm and the mock run under ASan and UBSan, 2 to 3
# times slower, and start more slowly still. Bounds on how quickly they act (start-up, delays
# they add, tolerances around the mock's timing model) are multiplied by SLOW; no check that
# is not about time changes, and without the variable every bound is as written.
SLOW=1
if [ "${TOKSTORM_TEST_SLOW:-0}" = 1 ]; then
  SLOW=3
fi

WORK=$(mktemp -d /tmp/tokstorm-test.XXXXXX)
MOCK_PIDS=()
PASSED=0
FAILED=0

cleanup() {
  for p in "${MOCK_PIDS[@]:-}"; do
    [ -n "$p" ] && kill "$p" 2>/dev/null || true
  done
  rm -rf "$WORK"
}
trap cleanup EXIT

check() { # check NAME COMMAND...: runs COMMAND, counts the result
  local name=$1
  shift
  if "$@"; then
    echo "ok   - $name"
    PASSED=$((PASSED + 1))
  else
    echo "FAIL - $name"
    FAILED=$((FAILED + 1))
  fi
}

finish() { # finish SUITE: prints the closing line and exits 1 on any failure
  echo "$1: $PASSED passed, $FAILED failed"
  [ "$FAILED" -eq 0 ]
}

# start_mock NAME [mock options...]: starts tokstorm-mock on a free loopback port, bounded in
# time, and sets MOCK_URL and MOCK_PID.
start_mock() {
  local name=$1
  shift
  local port_file="$WORK/$name.port"
  "$MOCK" --host 127.0.0.1 --port 0 --port-file "$port_file" --exit-after 300 "$@" \
    >"$WORK/$name.out" 2>"$WORK/$name.err" &
  MOCK_PID=$!
  MOCK_PIDS+=("$MOCK_PID")
  for _ in $(seq 100); do
    [ -s "$port_file" ] && break
    sleep 0.05
  done
  [ -s "$port_file" ] || { echo "mock $name did not start"; cat "$WORK/$name.err"; exit 1; }
  MOCK_URL="http://127.0.0.1:$(cat "$port_file")"
}

# A TCP port on loopback with nothing listening (bound, then released).
closed_port() {
  $PY -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'
}
