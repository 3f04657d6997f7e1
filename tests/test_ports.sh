#!/usr/bin/env bash
# Running out of local ports, for real: in a network namespace of its own whose ephemeral
# port range is cut to 20 ports (net.ipv4.ip_local_port_range is per namespace), 24 streams
# to one server address cannot all connect from one source address (MPI's own loopback
# connections take a few of 127.0.0.1's ports too). tokstorm must count the failures as
# `connect`, name EADDRNOTAVAIL and --bind in one warning, and keep going; the same level
# with --bind over two other loopback addresses (12 streams on 20 ports each) must then
# connect every stream. Each run gets a fresh namespace (closed connections leave ports in
# TIME-WAIT). Needs root (CAP_NET_ADMIN, CAP_SYS_ADMIN); else skipped (status 77).
source "$(dirname "$0")/lib.sh" "$1"
export PATH="$PATH:/usr/sbin:/sbin"
PFX=tsport$$-
STREAMS=24
PORT=8000 # outside the cut range, so the server takes none of its ports

if [ "$(id -u)" -ne 0 ] || ! timeout 10 ip netns add "${PFX}probe" 2>/dev/null; then
  echo "ports: skipped (needs root and ip netns)"
  exit 77
fi
timeout 10 ip netns del "${PFX}probe"

namespaces=()
remove_namespaces() {
  for ns in "${namespaces[@]:-}"; do
    [ -n "$ns" ] || continue
    for p in $(timeout 10 ip netns pids "$ns" 2>/dev/null); do kill -9 "$p" 2>/dev/null || true; done
    timeout 10 ip netns del "$ns" 2>/dev/null || true
  done
}
trap 'remove_namespaces; cleanup' EXIT

# fresh_ns NAME: a namespace with loopback up, 20 ephemeral ports, and a mock on port 8000.
fresh_ns() {
  NS=$PFX$1
  namespaces+=("$NS")
  timeout 10 ip netns add "$NS"
  timeout 10 ip -n "$NS" link set lo up
  timeout 10 ip netns exec "$NS" sysctl -qw net.ipv4.ip_local_port_range="40000 40019"
  timeout 10 ip netns exec "$NS" "$MOCK" --host 127.0.0.1 --port $PORT --exit-after 120 \
    --ttft 20ms --step 5ms >"$WORK/$1.mock.out" 2>&1 &
  for _ in $(seq 100); do
    timeout 10 ip netns exec "$NS" bash -c "echo >/dev/tcp/127.0.0.1/$PORT" 2>/dev/null && break
    sleep 0.05
  done
}

# run NAME TOKSTORM_OPTIONS...: one rank in namespace NS; output in $WORK/NAME.out, status in RC.
run() {
  local name=$1
  shift
  RC=0
  timeout 120 ip netns exec "$NS" "${MPIRUN[@]}" -np 1 "$TOKSTORM" --url "http://127.0.0.1:$PORT" \
    --levels $STREAMS --max-tokens 10 --requests-per-stream 1 --out "$WORK/$name.h5" "$@" \
    >"$WORK/$name.out" 2>&1 || RC=$?
}

# read_level NAME: "ok err connect-errors connect-rows" of the level, from the results file.
read_level() {
  $PY - "$WORK/$1.h5" <<'PYEOF'
import sys, h5py
f = h5py.File(sys.argv[1], "r")
g = f["level_24"]
r = g["requests"][:]
connect = h5py.check_enum_dtype(g["requests"].dtype["error_class"])["connect"]
print(g.attrs["ok"], g.attrs["err"], g.attrs["err_connect"], (r["error_class"] == connect).sum())
PYEOF
}

fresh_ns short
run short
check "exhausted ports: the run goes on (status 0)" test "$RC" -eq 0
check "exhausted ports: one warning names EADDRNOTAVAIL and --bind" \
  grep -q "warning: level_24: .* failed for lack of local ports (EADDRNOTAVAIL): use --bind" "$WORK/short.out"
read -r ok err conn rows <<<"$(read_level short)"
echo "     short: ok=$ok err=$err connect=$conn rows=$rows"
check "exhausted ports: some streams connected, the rest failed" test "$ok" -ge 1 -a "$err" -ge 1
check "exhausted ports: every failure is a connect failure, in the level and its rows" \
  test "$conn" -eq "$err" -a "$rows" -eq "$err" -a $((ok + err)) -eq $STREAMS
check "exhausted ports: the table's error line says connect" grep -q "errors: connect=$err" "$WORK/short.out"

fresh_ns bound
run bound --bind 127.0.0.2,127.0.0.3
read -r ok err conn rows <<<"$(read_level bound)"
echo "     bound: ok=$ok err=$err"
check "--bind over two addresses: every stream connects" test "$RC" -eq 0 -a "$ok" -eq $STREAMS -a "$err" -eq 0
check "--bind over two addresses: no port warning" bash -c "! grep -q EADDRNOTAVAIL '$WORK/bound.out'"

finish ports
