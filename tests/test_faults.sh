#!/usr/bin/env bash
# test_faults.sh: tokstorm against a tokstorm-mock that injects one fault (--fault), one
# section per fault. Each section runs a small sweep (mpirun -np 2, 4 streams x 3 requests of
# 8 tokens) and checks, from the results file: the failed requests have the fault's class (and
# status for HTTP errors) and as many as the mock says it injected; their tokens are not
# counted; the successful ones have exactly the mock's 8 tokens and its timing; the level ended
# within the bounds the options set; tokstorm exits 0 and prints the error mix.
# Usage: tests/test_faults.sh BUILD_DIR SECTION   (SECTION: one of the names in the case below)
source "$(dirname "$0")/lib.sh" "$1"
SECTION=${2:?usage: test_faults.sh BUILD_DIR SECTION}

C=4 RPS=3 TOKENS=8
# Every section: TTFT 20 ms, a 5 ms step; the first connection and request (tokstorm's
# preflight) are spared, and the draws are seeded, so a section injects the same faults each
# run (the request faults' count is fixed by the seed; which stream gets them is not).
MOCK_MODEL=(--ttft 20ms --step 5ms --max-batch 64 --stats --fault-skip 1 --fault-seed 3)

# run NAME MOCK_FAULT_OPTIONS... -- TOKSTORM_OPTIONS...: one mock, one sweep. Leaves
# $WORK/NAME.h5, .stdout, .stderr, the mock's stderr in $WORK/NAME-mock.err, the exit status
# in RC and the sweep's wall time in ELAPSED_MS.
run() {
  local name=$1
  shift
  local mock_args=()
  while [ "$1" != "--" ]; do
    mock_args+=("$1")
    shift
  done
  shift
  start_mock "$name-mock" "${MOCK_MODEL[@]}" "${mock_args[@]}"
  local start
  start=$(date +%s%N)
  set +e
  timeout 120 "${MPIRUN[@]}" -np 2 "$TOKSTORM" --url "$MOCK_URL" --model mock --levels $C \
    --requests-per-stream $RPS --max-tokens $TOKENS --timeout 10s --out "$WORK/$name.h5" "$@" \
    >"$WORK/$name.stdout" 2>"$WORK/$name.stderr"
  RC=$?
  set -e
  ELAPSED_MS=$((($(date +%s%N) - start) / 1000000))
  kill "$MOCK_PID" 2>/dev/null || true
  wait "$MOCK_PID" 2>/dev/null || true
  cat "$WORK/$name.stdout"
  [ "$RC" -eq 0 ] || cat "$WORK/$name.stderr"
  grep "faults:" "$WORK/$name-mock.err" || true
  check "$name: tokstorm exits 0 (request failures are data)" test "$RC" -eq 0
  check "$name: stderr is quiet" test ! -s "$WORK/$name.stderr"
}

# verify NAME CLASS FAULTS WALL_MAX_S [EXTRA]: the file's checks. CLASS is the error class the
# faults give ("-" for none); FAULTS the mock's fault names whose injected counts add up to the
# failed requests ("all": every request fails); EXTRA a Python expression over the failed rows
# `bad`, the successful rows `ok`, the level's attributes `a`, the rank_load rows `load`.
verify() {
  local name=$1 cls=$2 faults=$3 wall_max=$4 extra=${5:-True}
  $PY - "$WORK/$name.h5" "$WORK/$name.stdout" "$WORK/$name-mock.err" "$cls" "$faults" \
    "$wall_max" "$extra" $C $RPS $TOKENS <<'PYEOF' >"$WORK/$name.checks"
import sys, re, h5py, numpy as np
path, stdout_path, mock_err, cls, faults, wall_max, extra = sys.argv[1:8]
c, rps, tokens = (int(x) for x in sys.argv[8:11])
wall_max = float(wall_max)
def check(what, cond):
    print(("ok   " if cond else "FAIL ") + what)
f = h5py.File(path, "r")
g = f["level_%d" % c]
a = g.attrs
r = g["requests"][:]
classes = h5py.check_enum_dtype(g["requests"].dtype["error_class"])
names = {v: k for k, v in classes.items()}
line = [l for l in open(mock_err) if l.startswith("tokstorm-mock: faults:")]
injected = dict(kv.split("=") for kv in line[0].split(":", 2)[2].split()) if line else {}
n = c * rps
want_err = n if faults == "all" else sum(int(injected.get(x, -1)) for x in faults.split(",") if x)
bad, ok = r[r["error_class"] != 0], r[r["error_class"] == 0]
check(f"{n} requests, {a['ok']} ok and {a['err']} failed", len(r) == n and a["ok"] + a["err"] == n)
if cls == "-":
    check("no request failed", a["err"] == 0 and len(bad) == 0)
else:
    check(f"the new class is in the file's enum ({cls} = {classes.get(cls)})", cls in classes)
    check(f"failed = {want_err} (the mock's count of {faults}): err {a['err']}, err_{cls} {a.get('err_' + cls)}",
          a["err"] == want_err and a["err_" + cls] == want_err and len(bad) == want_err)
    check(f"every failed row has class {cls}",
          all(names[int(x)] == cls for x in bad["error_class"]))
others = sum(int(a[k]) for k in a if k.startswith("err_") and k != "err_" + cls)
check("err is the sum of the err_<class> attributes", a["err"] == others + (a["err_" + cls] if cls != "-" else 0))
check("failed requests' tokens are not counted: 0 in each row, the level's total is the successes'",
      (bad["output_tokens"] == 0).all() and a["output_tokens"] == ok["output_tokens"].sum())
check(f"successful requests: exactly {tokens} tokens each, from the server's usage",
      (ok["output_tokens"] == tokens).all() and (ok["tokens_from_usage"] == 1).all()
      and a["output_tokens"] == tokens * len(ok))
ts = g["timeseries"][:]
check("time series: tokens are the successes', ends split into ok and err",
      ts["tokens"].sum() == a["output_tokens"] and ts["ok"].sum() == a["ok"] and ts["err"].sum() == a["err"])
if len(ok):
    ttft = np.median(ok["first_token_s"] - ok["start_s"]) * 1e3
    check(f"successes keep the mock's timing: TTFT median {ttft:.1f} ms near 20, ITL p50 {a['itl_p50_ms']:.2f} ms near 5",
          15 <= ttft <= 35 and 4 <= a["itl_p50_ms"] <= 7)
check(f"the level ended within its bounds: wall {a['wall_s']:.2f} s < {wall_max} s, every request too",
      a["wall_s"] < wall_max and ((r["end_s"] - r["start_s"]) < wall_max).all())
table = open(stdout_path).read()
if cls != "-":
    check(f"the table's error line says {cls}={want_err}", re.search(rf"\| errors:.* {cls}={want_err}\b", table))
load = g["rank_load"][:]
check("peak resident memory per rank: " + ", ".join("%.1f MiB" % x for x in load["max_rss_mib"]), True)
check(f"extra: {extra}", eval(extra))
PYEOF
  while read -r status what; do
    check "$name: $what" test "$status" = ok
  done <"$WORK/$name.checks"
  check "$name: the file checks ran" test "$(wc -l <"$WORK/$name.checks")" -ge 10
}

case "$SECTION" in
refuse)
  # Every connection but the preflight's is shut at once: each request (on a new connection,
  # since its last one was refused) fails before any byte.
  run refuse --fault refuse=1 --
  verify refuse connect all 2 \
    '(bad["http_status"] == 0).all() and (bad["first_byte_s"] == -1).all()'
  ;;
reset)
  run reset --fault reset=1 --
  verify reset reset all 2 '(bad["http_status"] == 0).all() and (bad["content_events"] == 0).all()'
  ;;
429)
  run 429 --fault 429=0.5 --
  verify 429 rate_limited 429 2 \
    '(bad["http_status"] == 429).all() and len(ok) > 0 and ((bad["end_s"] - bad["start_s"]) < 0.1).all()'
  ;;
5xx)
  # 500 and 503 are both http_5xx; the rows keep which.
  run 5xx --fault 500=0.25,503=0.25 --
  verify 5xx http_5xx 500,503 2 \
    '(bad["http_status"] == 500).sum() == int(injected["500"]) and (bad["http_status"] == 503).sum() == int(injected["503"]) and int(injected["500"]) > 0 and int(injected["503"]) > 0 and len(ok) > 0'
  ;;
close)
  # Closed after token 4 of 8: what came is kept in the row, but counts as nothing.
  run close --fault close=0.5 --
  verify close truncated close 2 \
    '(bad["http_status"] == 200).all() and (bad["content_events"] == 4).all() and len(ok) > 0'
  ;;
stall)
  # Silent for 3 s after token 4; --stall-timeout 1s ends those requests 1 s after their last
  # byte (token 4, 3 steps after the first), long before the stall or --timeout would.
  run stall --fault stall=0.5 --fault-stall 3s -- --stall-timeout 1s
  verify stall stalled stall 4 \
    '(bad["http_status"] == 200).all() and (bad["content_events"] == 4).all() and len(ok) > 0 and (bad["end_s"] - bad["first_token_s"] >= 1.0).all() and (bad["end_s"] - bad["first_token_s"] < 1.3).all()'
  # Without --stall-timeout a 1 s stall is only slow: every request succeeds, and the gap
  # shows as the slowest inter-token latency.
  run stall-wait --fault stall=0.5 --fault-stall 1s --
  verify stall-wait - "" 4 'a["itl_max_ms"] >= 990 and a["itl_p50_ms"] < 7 and int(injected["stall"]) > 0'
  ;;
malformed)
  run malformed --fault malformed=0.5 --
  verify malformed malformed malformed 2 \
    '(bad["http_status"] == 200).all() and (bad["content_events"] == 4).all() and len(ok) > 0'
  ;;
error-event)
  run error-event --fault error-event=0.5 --
  verify error-event stream_error error-event 2 \
    '(bad["http_status"] == 200).all() and (bad["content_events"] == 4).all() and len(ok) > 0'
  ;;
split)
  # One byte per write: nothing fails, every token is counted.
  run split --fault split=1 --
  verify split - "" 2 '(ok["content_events"] == 8).all() and int(injected["split"]) == 12'
  ;;
huge-event)
  # A 32 MB event on one line against the default 1 MiB cap: oversized, and the parser's
  # memory stays within its cap: each rank's peak resident memory (about 26 MiB without any
  # fault) stays under 48 MiB, where keeping the event would take 32 MiB per stream, twice
  # (line and data). Under AddressSanitizer (SLOW > 1, lib.sh) the baseline is about twice
  # that, and so is the bound: still short of what keeping the event would add.
  # With an 8 MB cap a 4 MB event is one more content event, and all succeed.
  rss_bound=$((SLOW > 1 ? 96 : 48))
  run huge-event --fault huge-event=0.5 --fault-event-bytes 32M --
  verify huge-event oversized huge-event 2 \
    "(bad[\"http_status\"] == 200).all() and len(ok) > 0 and (load[\"max_rss_mib\"] < $rss_bound).all()"
  run huge-event-fits --fault huge-event=0.5 -- --max-event-bytes 8M
  verify huge-event-fits - "" 2 \
    '(ok["content_events"] == 8).sum() + (ok["content_events"] == 9).sum() == 12 and (ok["content_events"] == 9).sum() == int(injected["huge-event"]) > 0'
  ;;
no-finish)
  # Every token, then silence: --stall-timeout ends it, or else --timeout does.
  run no-finish --fault no-finish=0.5 -- --stall-timeout 500ms
  verify no-finish stalled no-finish 2.5 \
    '(bad["http_status"] == 200).all() and (bad["content_events"] == 8).all() and len(ok) > 0'
  run no-finish-timeout --fault no-finish=1 -- --timeout 500ms
  verify no-finish-timeout timeout all 2 \
    '(bad["http_status"] == 200).all() and (bad["content_events"] == 8).all() and ((bad["end_s"] - bad["start_s"]) >= 0.499).all() and ((bad["end_s"] - bad["start_s"]) < 0.7).all()'
  ;;
not-sse)
  # A whole application/json answer to a streaming request: malformed at its first byte.
  run not-sse --fault not-sse=0.5 --
  verify not-sse malformed not-sse 2 \
    '(bad["http_status"] == 200).all() and (bad["content_events"] == 0).all() and len(ok) > 0'
  ;;
*)
  echo "unknown section '$SECTION'"
  exit 2
  ;;
esac
finish "faults $SECTION"
