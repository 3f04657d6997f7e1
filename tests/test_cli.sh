#!/usr/bin/env bash
# Bad input and a failing server before the sweep: one clear line, the same exit status on
# every rank, no rank left waiting, and (for bad input) no request sent at all.
source "$(dirname "$0")/lib.sh" "$1"

start_mock cli --ttft 5ms --step 1ms --stats
# Runs tokstorm on 3 ranks; each rank appends "rank R exit S" to $WORK/exits.
run3() {
  rm -f "$WORK/exits"
  set +e
  timeout 60 "${MPIRUN[@]}" -np 3 sh -c '"$0" "$@"; echo "rank $OMPI_COMM_WORLD_RANK exit $?" >>"'"$WORK"'/exits"' \
    "$TOKSTORM" "$@" >"$WORK/stdout" 2>"$WORK/stderr"
  RUN_RC=$?
  set -e
}
# all_ranks_exit S: every one of the 3 ranks exited with S.
all_ranks_exit() {
  [ "$(grep -c "exit $1\$" "$WORK/exits" 2>/dev/null)" = 3 ] || { cat "$WORK/exits" "$WORK/stderr"; false; }
}
# one_line PATTERN: stderr holds exactly one line, and it matches PATTERN.
one_line() {
  [ "$(wc -l <"$WORK/stderr")" = 1 ] && grep -q -- "$1" "$WORK/stderr" || { cat "$WORK/stderr"; false; }
}

bad_input() { # bad_input NAME PATTERN ARGS...
  local name=$1 pattern=$2
  shift 2
  run3 "$@"
  check "$name: exit 2 on all ranks" all_ranks_exit 2
  check "$name: one line naming the problem" one_line "$pattern"
}

OUT="$WORK/x.h5"
bad_input "unknown option" "^tokstorm: --frobnicate: unknown option" --url "$MOCK_URL" --frobnicate
bad_input "level 0" "--levels: '1,0' is not" --url "$MOCK_URL" --levels 1,0 --out "$OUT"
bad_input "level not a number" "--levels: 'x' is not" --url "$MOCK_URL" --levels x --out "$OUT"
bad_input "max-tokens 0" "--max-tokens: '0' is not" --url "$MOCK_URL" --max-tokens 0 --out "$OUT"
bad_input "bad url" "--url: 'localhost:8000' must start" --url localhost:8000 --out "$OUT"
bad_input "missing prompts file" "cannot open prompts file $WORK/nope.jsonl" \
  --url "$MOCK_URL" --prompts "$WORK/nope.jsonl" --out "$OUT"
printf '{"prompt": "fine"}\n{"prompt": "broken\n' >"$WORK/bad.jsonl"
bad_input "malformed prompts file" "$WORK/bad.jsonl:2: not valid JSON" \
  --url "$MOCK_URL" --prompts "$WORK/bad.jsonl" --out "$OUT"
bad_input "out path not creatable" "--out: cannot create $WORK/no/such/dir.h5" \
  --url "$MOCK_URL" --out "$WORK/no/such/dir.h5"
touch "$WORK/exists.h5"
bad_input "out exists without --force" "exists (use --force" --url "$MOCK_URL" --out "$WORK/exists.h5"
check "the existing file was left alone" test ! -s "$WORK/exists.h5"

# A server that cannot be reached: exit 3 on every rank, quickly, naming the URL.
PORT=$(closed_port)
start_ns=$(date +%s%N)
run3 --url "http://127.0.0.1:$PORT" --out "$WORK/closed.h5"
elapsed_ms=$((($(date +%s%N) - start_ns) / 1000000))
check "closed port: exit 3 on all ranks" all_ranks_exit 3
check "closed port: within $((10 * SLOW)) s (took $elapsed_ms ms)" test "$elapsed_ms" -le $((10000 * SLOW))
check "closed port: one line naming the URL and the error" \
  one_line "preflight request to http://127.0.0.1:$PORT/v1/chat/completions failed (connect).*127.0.0.1 port $PORT.*Connection refused"
check "closed port: no results file left behind" test ! -e "$WORK/closed.h5"

# A server that accepts connections and never answers: the preflight gives up in time.
$PY -c '
import socket, sys, time
s = socket.socket(); s.bind(("127.0.0.1", 0)); s.listen(16)
open(sys.argv[1], "w").write(str(s.getsockname()[1]))
held, end = [], time.time() + 30
s.settimeout(0.2)
while time.time() < end:
    try: held.append(s.accept()[0])
    except socket.timeout: pass
' "$WORK/silent.port" &
MOCK_PIDS+=($!)
for _ in $(seq 50); do [ -s "$WORK/silent.port" ] && break; sleep 0.1; done
start_ns=$(date +%s%N)
run3 --url "http://127.0.0.1:$(cat "$WORK/silent.port")" --out "$WORK/silent.h5"
elapsed_ms=$((($(date +%s%N) - start_ns) / 1000000))
check "silent server: exit 3 on all ranks" all_ranks_exit 3
check "silent server: every rank done within $((10 * SLOW)) s (took $elapsed_ms ms)" \
  test "$elapsed_ms" -le $((10000 * SLOW))
check "silent server: the line says it timed out" one_line "failed (timeout)"

# A server that answers an error: exit 3, with the status.
run3 --url "$MOCK_URL/nowhere" --out "$WORK/http.h5" --force
check "HTTP error: exit 3 on all ranks" all_ranks_exit 3
check "HTTP error: one line with the status" one_line "failed: HTTP 404"

# --help and --version print once, from rank 0, and exit 0.
run3 --help
check "--help exits 0 on all ranks" all_ranks_exit 0
check "--help printed once" test "$(grep -c '^Usage: mpirun' "$WORK/stdout")" = 1
run3 --version
check "--version printed once" test "$(grep -c '^tokstorm [0-9]' "$WORK/stdout")" = 1

# None of the bad-input runs sent a request; the two HTTP-error preflights reached the mock.
kill "$MOCK_PID" 2>/dev/null; wait "$MOCK_PID" 2>/dev/null || true
check "bad input sent no request (the mock saw only the 404 preflight)" grep -q "requests=1 " "$WORK/cli.err"
finish cli
