#!/usr/bin/env bash
# Secrets and transport. The API key goes from a file or a variable to the server, as a Bearer
# header on every request (preflight and preconnect probes included), and nowhere else: not
# stdout, not stderr even with libcurl's trace (-vv), not the results file, not --json, not
# ps. A key on the command line, a missing key and a malformed -H end every rank with status 2.
# HTTPS through stunnel4 in front of tokstorm-mock, with a CA and a server certificate made
# here: verified with --cacert (exact token counts, connections kept alive), refused without
# it (status 3, naming the certificate), accepted with --insecure (said once).
source "$(dirname "$0")/lib.sh" "$1"

if ! command -v stunnel4 >/dev/null || ! command -v openssl >/dev/null; then
  echo "secrets_tls: needs stunnel4 and openssl (bash scripts/deps.sh --tests): skipped"
  exit 77
fi

# A key that appears nowhere else, so any copy of it is a leak.
KEY="tokstorm-test-key-$(od -An -N12 -tx1 /dev/urandom | tr -d ' \n')"
(umask 077 && printf '%s\n' "$KEY" >"$WORK/key")
# The mock takes the key from its environment too, never from its command line.
TS_TEST_MOCK_KEY=$KEY start_mock keyed --ttft 5ms --step 1ms --api-key-env TS_TEST_MOCK_KEY

# run2 NAME ARGS...: tokstorm on 2 ranks; NAME.out, NAME.err, NAME.exits ("rank R exit S").
run2() {
  local name=$1
  shift
  set +e
  timeout 60 "${MPIRUN[@]}" -np 2 sh -c '"$0" "$@"; echo "rank $OMPI_COMM_WORLD_RANK exit $?" >>"'"$WORK/$name.exits"'"' \
    "$TOKSTORM" "$@" >"$WORK/$name.out" 2>"$WORK/$name.err"
  set -e
}
# both_exit NAME S: both ranks exited with S.
both_exit() {
  [ "$(grep -c "exit $2\$" "$WORK/$1.exits" 2>/dev/null)" = 2 ] || { cat "$WORK/$1.exits" "$WORK/$1.err"; false; }
}
# tokstorm_line NAME PATTERN: exactly one line of tokstorm's on stderr, matching PATTERN.
tokstorm_line() {
  [ "$(grep -c '^tokstorm' "$WORK/$1.err")" = 1 ] && grep -q -- "$2" "$WORK/$1.err" || { cat "$WORK/$1.err"; false; }
}
# no_key FILE...: the key is in none of them.
no_key() { ! grep -q -a -F -- "$KEY" "$@"; }
mock_401s() { grep -c "401 for" "$WORK/keyed.err" || true; }

# --- The key from a file, libcurl's trace on, --json, ps watched throughout. ---
(while :; do ps -eo args; sleep 0.05; done >"$WORK/ps.txt") &
PS_WATCH=$!
run2 file --url "$MOCK_URL" --levels 1,4 --max-tokens 8 --api-key-file "$WORK/key" -vv \
  --out "$WORK/file.h5" --json "$WORK/file.json"
kill "$PS_WATCH"
wait "$PS_WATCH" 2>/dev/null || true
check "key file: exit 0 on both ranks" both_exit file 0
check "key file: 10 requests ok" grep -q "10 ok, 0 failed" "$WORK/file.out"
check "key file: every request, probe and preflight carried it (no 401)" test "$(mock_401s)" = 0
check "key file: the -vv trace shows the header masked" grep -q "> Authorization: REDACTED" "$WORK/file.err"
h5dump "$WORK/file.h5" >"$WORK/file.h5dump" 2>&1
check "key file: h5dump reads the file" test -s "$WORK/file.h5dump"
check "key file: the file records where the key came from" grep -q "api-key-file.*$WORK/key" "$WORK/file.h5dump"
check "key file: ps saw tokstorm running" grep -q "tokstorm --url" "$WORK/ps.txt"
for f in file.out file.err file.h5dump file.h5 file.json ps.txt; do
  check "key file: the key is not in $f" no_key "$WORK/$f"
done

# --- A wrong key: the mock refuses it, the preflight says so. ---
before=$(mock_401s)
TS_TEST_WRONG=not-the-key run2 wrong --url "$MOCK_URL" --levels 1 --api-key-env TS_TEST_WRONG \
  --out "$WORK/wrong.h5"
check "wrong key: exit 3 on both ranks" both_exit wrong 3
check "wrong key: the preflight got 401" tokstorm_line wrong "failed: HTTP 401"
check "wrong key: the mock refused it" test "$(mock_401s)" -gt "$before"

# --- Refused before any request: a key on the command line, a key missing, a bad header. ---
before=$(mock_401s)
run2 argv --url "$MOCK_URL" --api-key "$KEY" --out "$WORK/argv.h5"
check "--api-key: exit 2 on both ranks" both_exit argv 2
check "--api-key: one line saying why" tokstorm_line argv "visible to every user of this host (ps)"
check "--api-key: the key is not quoted back" no_key "$WORK/argv.out" "$WORK/argv.err"
unset TS_TEST_UNSET
run2 unset --url "$MOCK_URL" --api-key-env TS_TEST_UNSET --out "$WORK/unset.h5"
check "unset variable: exit 2 on both ranks" both_exit unset 2
check "unset variable: one line naming it" tokstorm_line unset "TS_TEST_UNSET is not set on rank 0's host"
: >"$WORK/empty-key"
run2 empty --url "$MOCK_URL" --api-key-file "$WORK/empty-key" --out "$WORK/empty.h5"
check "empty key file: exit 2 on both ranks" both_exit empty 2
check "empty key file: one line naming it" tokstorm_line empty "$WORK/empty-key: the key is empty"
run2 crlf --url "$MOCK_URL" -H "$(printf 'X-Trace: 1\r\nX-Evil: 2')" --out "$WORK/crlf.h5"
check "header with CR/LF: exit 2 on both ranks" both_exit crlf 2
check "header with CR/LF: one line" tokstorm_line crlf "the value of X-Trace holds a line break"
check "none of these reached the server" test "$(mock_401s)" = "$before"
check "none of these left a results file" sh -c "! ls '$WORK'/argv.h5 '$WORK'/unset.h5 '$WORK'/empty.h5 '$WORK'/crlf.h5 2>/dev/null"

# --- HTTPS: a CA and a server certificate for 127.0.0.1 and localhost, stunnel4 in front of a
# mock of its own (so that its counts are this part's alone). ---
ossl() { openssl "$@" 2>>"$WORK/openssl.log"; }
ossl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 2 \
  -subj "/CN=tokstorm test CA" -keyout "$WORK/ca.key" -out "$WORK/ca.pem"
ossl req -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -subj "/CN=tokstorm-mock" \
  -keyout "$WORK/server.key" -out "$WORK/server.csr"
printf 'subjectAltName=IP:127.0.0.1,DNS:localhost\nbasicConstraints=CA:FALSE\nextendedKeyUsage=serverAuth\n' \
  >"$WORK/server.ext"
ossl x509 -req -in "$WORK/server.csr" -CA "$WORK/ca.pem" -CAkey "$WORK/ca.key" -CAcreateserial \
  -days 2 -extfile "$WORK/server.ext" -out "$WORK/server.pem"
TS_TEST_MOCK_KEY=$KEY start_mock tls --ttft 5ms --step 1ms --api-key-env TS_TEST_MOCK_KEY --stats
TLS_PORT=$(closed_port)
cat >"$WORK/stunnel.conf" <<EOF
foreground = yes
pid =
output = $WORK/stunnel.log
[mock]
accept = 127.0.0.1:$TLS_PORT
connect = ${MOCK_URL#http://}
cert = $WORK/server.pem
key = $WORK/server.key
socket = l:TCP_NODELAY=1
socket = r:TCP_NODELAY=1
EOF
stunnel4 "$WORK/stunnel.conf" 2>>"$WORK/stunnel.log" &
MOCK_PIDS+=($!)
for _ in $(seq 100); do
  ss -Hltn "sport = :$TLS_PORT" | grep -q LISTEN && break
  sleep 0.05
done
TLS_URL="https://127.0.0.1:$TLS_PORT"

# Verified against the CA; the key from a variable this time (mpirun passes the environment to
# the ranks on its own host).
TS_TEST_KEY=$KEY run2 cacert --url "$TLS_URL" --levels 1,4 --max-tokens 8 --cacert "$WORK/ca.pem" \
  --api-key-env TS_TEST_KEY --out "$WORK/cacert.h5"
check "--cacert: exit 0 on both ranks" both_exit cacert 0
check "--cacert: stderr is quiet" test ! -s "$WORK/cacert.err"
$PY - "$WORK/cacert.h5" >"$WORK/cacert.checks" <<'PYEOF'
import sys, h5py
f = h5py.File(sys.argv[1], "r")
s = f["summary"][:]
print("ok" if list(s["concurrency"]) == [1, 4] else "FAIL", "levels 1 and 4")
print("ok" if list(s["ok"]) == [2, 8] and list(s["err"]) == [0, 0] else "FAIL", "2 and 8 requests ok, none failed")
print("ok" if list(s["output_tokens"]) == [16, 64] else "FAIL", "exactly 16 and 64 tokens (8 per request)")
print("ok" if f.attrs["url"].startswith("https://127.0.0.1:") else "FAIL", "the file records the https URL")
PYEOF
while read -r status name; do
  check "--cacert: $name" test "$status" = ok
done <"$WORK/cacert.checks"
check "--cacert: all 4 file checks ran" test "$(wc -l <"$WORK/cacert.checks")" = 4

# Not verified: the system's CAs do not know this one.
start_ns=$(date +%s%N)
run2 nocacert --url "$TLS_URL" --levels 1 --api-key-file "$WORK/key" --out "$WORK/nocacert.h5"
elapsed_ms=$((($(date +%s%N) - start_ns) / 1000000))
check "no --cacert: exit 3 on both ranks" both_exit nocacert 3
# Under AddressSanitizer (SLOW > 1, lib.sh) OpenSSL reads the system's CA bundle (some 140
# certificates) more slowly than the preflight's timeouts allow, so the handshake can time
# out before the verdict (libcurl words it either way): the same failure, another message.
cert_problem="SSL certificate problem.*--cacert FILE"
[ "$SLOW" -eq 1 ] ||
  cert_problem="\\(SSL certificate problem.*--cacert FILE\\|SSL connection timeout\\|Connection timed out after\\)"
check "no --cacert: one line about the certificate" tokstorm_line nocacert \
  "preflight request to $TLS_URL/v1/chat/completions failed (connect): $cert_problem"
check "no --cacert: within 10 s (took $elapsed_ms ms)" test "$elapsed_ms" -le 10000

# --insecure, and the key as a -H header: masked in what is recorded.
run2 insecure --url "$TLS_URL" --levels 1,4 --max-tokens 8 --insecure \
  -H "Authorization: Bearer $KEY" --out "$WORK/insecure.h5"
check "--insecure: exit 0 on both ranks" both_exit insecure 0
check "--insecure: 10 requests ok" grep -q "10 ok, 0 failed" "$WORK/insecure.out"
check "--insecure: said once, on stderr" test "$(grep -c 'warning: --insecure: .*not verified' "$WORK/insecure.err")" = 1
h5dump -a /command_line -a /options_json "$WORK/insecure.h5" >"$WORK/insecure.h5dump" 2>&1
check "-H Authorization: recorded masked" grep -q "Authorization: REDACTED" "$WORK/insecure.h5dump"
check "-H Authorization: the key is not in the file" no_key "$WORK/insecure.h5" "$WORK/insecure.h5dump"

# Keep-alive through TLS: the mock behind stunnel saw one connection per stream of the largest
# level (4) plus the preflight's, per run, and no connection for the run that failed its
# handshake (stunnel connects to the mock only once a handshake succeeded).
kill "$MOCK_PID" 2>/dev/null
wait "$MOCK_PID" 2>/dev/null || true
check "TLS: the mock generated 2 x (10 + preflight) times" grep -q "generations=22 " "$WORK/tls.err"
check "TLS: and answered 2 x 5 preconnect probes" grep -q "requests=32 " "$WORK/tls.err"
check "TLS: connections reused: 10 opened for 32 requests" grep -q "connections=10 " "$WORK/tls.err"
check "TLS: no 401 (-H and the variable carried the key)" sh -c "! grep -q '401 for' '$WORK/tls.err'"

# --cacert is checked on every rank before any request.
run2 cacert_missing --url "$TLS_URL" --cacert "$WORK/nope.pem" --out "$WORK/cm.h5"
check "--cacert missing: exit 2 on both ranks" both_exit cacert_missing 2
check "--cacert missing: one line naming it" tokstorm_line cacert_missing "--cacert: cannot open $WORK/nope.pem on "
run2 cacert_notpem --url "$TLS_URL" --cacert "$WORK/key" --out "$WORK/cn.h5"
check "--cacert not PEM: exit 2 on both ranks" both_exit cacert_notpem 2
check "--cacert not PEM: one line" tokstorm_line cacert_notpem "holds no PEM certificate"
check "--cacert not PEM: the key file's content is not quoted" no_key "$WORK/cacert_notpem.err"
finish secrets_tls
