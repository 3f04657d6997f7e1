#!/usr/bin/env bash
# test_mock.sh: end-to-end checks of tokstorm-mock over loopback: endpoints, the OpenAI stream
# format, errors, keep-alive, pipelining, disconnects, and the timing model (measured with the
# server's own tokstorm_send_ns stamps). Usage: tests/test_mock.sh path/to/tokstorm-mock
set -euo pipefail

MOCK=${1:?usage: test_mock.sh path/to/tokstorm-mock}
PY=/usr/bin/python3
TMP=$(mktemp -d "${TMPDIR:-/tmp}/test_mock.XXXXXX")
MOCK_PID=""
EXTRA_PIDS=() # further mocks (start_extra); --workers parents pass the stop on to their workers
PASSED=0
FAILED=0

cleanup() {
    local p
    for p in "$MOCK_PID" "${EXTRA_PIDS[@]}"; do
        if [[ -n "$p" ]] && kill -0 "$p" 2>/dev/null; then
            kill "$p" 2>/dev/null || true
            wait "$p" 2>/dev/null || true
        fi
    done
    rm -rf "$TMP"
}
trap cleanup EXIT

pass() {
    PASSED=$((PASSED + 1))
    echo "ok - $1"
}

fail() {
    FAILED=$((FAILED + 1))
    echo "FAIL - $1${2:+: $2}"
}

# check NAME COMMAND...: one line per check; the command's output is shown only on failure.
check() {
    local name=$1
    shift
    if "$@" >"$TMP/check.out" 2>&1; then
        pass "$name"
    else
        fail "$name" "$(tr '\n' ' ' <"$TMP/check.out" | cut -c1-300)"
    fi
}

# Parses an SSE capture and evaluates a Python expression over its summary `s`:
#   s['chunks'] JSON chunks; s['content'] token pieces; s['content_ns'] their send stamps;
#   s['role_ns'] the role chunk's stamp; s['finish'] non-null finish reasons; s['usage'];
#   s['done_last'] whether the stream ends with [DONE]; s['first_ns'], s['last_ns'];
#   s['groups'] sizes of the runs of content chunks sharing one stamp, s['group_ns'] the stamps,
#   s['group_gaps'] the time from each run to the next.
cat >"$TMP/sse.py" <<'EOF'
import json, sys
path, expr = sys.argv[1], sys.argv[2]
raw = open(path, 'rb').read().decode()
events = [e for e in raw.split('\n\n') if e.strip()]
s = {'chunks': [], 'content': [], 'content_ns': [], 'role_ns': None, 'finish': [],
     'usage': None, 'done_last': bool(events) and events[-1].strip() == 'data: [DONE]',
     'bad': [e for e in events if not e.startswith('data: ')]}
for e in events:
    payload = e[len('data: '):]
    if payload == '[DONE]':
        continue
    c = json.loads(payload)
    s['chunks'].append(c)
    for ch in c.get('choices', []):
        piece = ch.get('delta', {}).get('content') if 'delta' in ch else ch.get('text')
        if ch.get('delta', {}).get('role'):
            s['role_ns'] = c['tokstorm_send_ns']
        if piece:
            s['content'].append(piece)
            s['content_ns'].append(c['tokstorm_send_ns'])
        if ch.get('finish_reason') is not None:
            s['finish'].append(ch['finish_reason'])
    if c.get('usage'):
        s['usage'] = c['usage']
stamps = [c['tokstorm_send_ns'] for c in s['chunks']]
s['first_ns'] = min(stamps) if stamps else None
s['last_ns'] = max(stamps) if stamps else None
s['groups'], s['group_ns'] = [], []
for ns in s['content_ns']:
    if s['group_ns'] and s['group_ns'][-1] == ns:
        s['groups'][-1] += 1
    else:
        s['groups'].append(1)
        s['group_ns'].append(ns)
s['group_gaps'] = [b - a for a, b in zip(s['group_ns'], s['group_ns'][1:])]
ok = eval('(' + expr + ')', {}, {'s': s})
if not ok:
    brief = {k: v for k, v in s.items() if k != 'chunks'}
    print('expression false:', expr, json.dumps(brief)[:400])
sys.exit(0 if ok else 1)
EOF

sse() { "$PY" "$TMP/sse.py" "$@"; }

# JSON body check: evaluates a Python expression over the parsed document `j`.
json_ok() {
    "$PY" -c 'import json,sys; j=json.load(open(sys.argv[1])); ok=eval("(" + sys.argv[2] + ")");
print("" if ok else "expression false: %s on %s" % (sys.argv[2], json.dumps(j)[:300]));
sys.exit(0 if ok else 1)' "$@"
}

# --- start ---------------------------------------------------------------------------------
"$MOCK" --port 0 --port-file "$TMP/port" --exit-after 60 --ttft 50ms --step 10ms \
    --max-batch 4 --stats >"$TMP/mock.stdout" 2>"$TMP/mock.stderr" &
MOCK_PID=$!
for _ in $(seq 100); do
    [[ -s "$TMP/port" ]] && break
    sleep 0.05
done
if [[ ! -s "$TMP/port" ]]; then
    fail "mock starts and writes --port-file" "$(cat "$TMP/mock.stderr")"
    echo "mock: $PASSED passed, $FAILED failed"
    exit 1
fi
PORT=$(cat "$TMP/port")
BASE="http://127.0.0.1:$PORT"
pass "mock starts and writes --port-file (port $PORT)"

ready_line() { grep -qx "tokstorm-mock: listening on http://127.0.0.1:$PORT" "$TMP/mock.stdout"; }
check "ready line on stdout" ready_line

CURL=(timeout 10 curl -sS)
CHAT5='{"model":"tokstorm-mock","messages":[{"role":"user","content":"Hello there, mock."}],
  "max_tokens":5,"stream":true,"stream_options":{"include_usage":true}}'
COMP5='{"model":"tokstorm-mock","prompt":"Hello there, mock.","max_tokens":5,"stream":true,
  "stream_options":{"include_usage":true}}'

# --- endpoints and formats -----------------------------------------------------------------
models() {
    "${CURL[@]}" "$BASE/v1/models" -o "$TMP/models.json" &&
        json_ok "$TMP/models.json" \
            "j['object']=='list' and j['data'][0]['id']=='tokstorm-mock' and j['data'][0]['owned_by']=='tokstorm'"
}
check "GET /v1/models lists the model" models

health() { [[ $("${CURL[@]}" -o /dev/null -w '%{http_code}' "$BASE/health") == 200 ]]; }
check "GET /health is 200" health

chat_stream() {
    "${CURL[@]}" -N "$BASE/v1/chat/completions" -H 'Content-Type: application/json' \
        -d "$CHAT5" -o "$TMP/chat.sse" &&
        sse "$TMP/chat.sse" "len(s['content'])==5 and s['finish']==['length'] and
            s['usage']['completion_tokens']==5 and s['usage']['prompt_tokens']==5 and
            s['usage']['total_tokens']==10 and s['done_last'] and s['role_ns'] is not None and
            not s['bad'] and
            all(c['object']=='chat.completion.chunk' and c['id'].startswith('chatcmpl-mock-')
                for c in s['chunks'])"
}
check "chat stream: 5 content chunks, finish length, usage, [DONE]" chat_stream

comp_stream() {
    "${CURL[@]}" -N "$BASE/v1/completions" -H 'Content-Type: application/json' \
        -d "$COMP5" -o "$TMP/comp.sse" &&
        sse "$TMP/comp.sse" "len(s['content'])==5 and s['finish']==['length'] and
            s['usage']['completion_tokens']==5 and s['done_last'] and s['role_ns'] is None and
            all(c['object']=='text_completion' and c['id'].startswith('cmpl-mock-')
                for c in s['chunks'])"
}
check "completions stream: 5 text chunks, finish length, usage, [DONE]" comp_stream

sse_headers() {
    "${CURL[@]}" -N -D "$TMP/chat.head" -o /dev/null "$BASE/v1/chat/completions" -d "$CHAT5" &&
        grep -qi '^content-type: text/event-stream' "$TMP/chat.head" &&
        grep -qi '^transfer-encoding: chunked' "$TMP/chat.head" &&
        grep -qi '^cache-control: no-cache' "$TMP/chat.head"
}
check "stream headers: event-stream, chunked, no-cache" sse_headers

no_usage() {
    "${CURL[@]}" -N "$BASE/v1/chat/completions" -o "$TMP/nousage.sse" \
        -d '{"messages":[{"role":"user","content":"x"}],"max_tokens":2,"stream":true}' &&
        sse "$TMP/nousage.sse" "len(s['content'])==2 and s['usage'] is None and s['done_last']"
}
check "stream without include_usage has no usage chunk" no_usage

one_token() {
    "${CURL[@]}" -N "$BASE/v1/chat/completions" -o "$TMP/one.sse" \
        -d '{"messages":[{"role":"user","content":"x"}],"max_tokens":1,"stream":true}' &&
        sse "$TMP/one.sse" "len(s['content'])==1 and s['finish']==['length'] and s['done_last']"
}
check "max_tokens=1 finishes after the first token" one_token

non_stream() {
    "${CURL[@]}" "$BASE/v1/chat/completions" -o "$TMP/full.json" \
        -d '{"model":"other-model","messages":[{"role":"user","content":"abcdefgh"}],"max_tokens":7}' &&
        json_ok "$TMP/full.json" "j['object']=='chat.completion' and j['model']=='other-model' and
            j['usage']['completion_tokens']==7 and j['usage']['prompt_tokens']==2 and
            j['choices'][0]['finish_reason']=='length' and
            len(j['choices'][0]['message']['content'].split())==7"
}
check "non-streaming chat returns usage.completion_tokens and echoes the model" non_stream

non_stream_comp() {
    "${CURL[@]}" "$BASE/v1/completions" -o "$TMP/fullc.json" -d '{"prompt":"abc","max_tokens":3}' &&
        json_ok "$TMP/fullc.json" "j['object']=='text_completion' and
            j['usage']['completion_tokens']==3 and len(j['choices'][0]['text'].split())==3"
}
check "non-streaming completions returns usage" non_stream_comp

status_is() {
    local want=$1
    shift
    local got
    got=$("${CURL[@]}" -o "$TMP/err.json" -w '%{http_code}' "$@")
    [[ "$got" == "$want" ]] || { echo "status $got, want $want"; return 1; }
    json_ok "$TMP/err.json" "j['error']['code']==$want and j['error']['type']=='invalid_request_error'"
}
check "bad JSON is 400" status_is 400 "$BASE/v1/chat/completions" -d '{"messages": [oops'
check "missing messages is 400" status_is 400 "$BASE/v1/chat/completions" -d '{"max_tokens":3}'
check "missing prompt is 400" status_is 400 "$BASE/v1/completions" -d '{"max_tokens":3}'
check "max_tokens 0 is 400" status_is 400 "$BASE/v1/completions" -d '{"prompt":"a","max_tokens":0}'
check "max_tokens 2.5 is 400" status_is 400 "$BASE/v1/completions" -d '{"prompt":"a","max_tokens":2.5}'
check "unknown path is 404" status_is 404 "$BASE/v1/nothing"
check "GET on a POST endpoint is 405" status_is 405 "$BASE/v1/chat/completions"
check "POST on a GET endpoint is 405" status_is 405 "$BASE/v1/models" -d '{}'
check "chunked request body is 411" status_is 411 "$BASE/v1/completions" \
    -H 'Transfer-Encoding: chunked' -d '{"prompt":"a"}'

expect_continue() {
    "${CURL[@]}" -N "$BASE/v1/completions" -H 'Expect: 100-continue' -o "$TMP/cont.sse" \
        -d '{"prompt":"a","max_tokens":2,"stream":true}' &&
        sse "$TMP/cont.sse" "len(s['content'])==2 and s['done_last']"
}
check "Expect: 100-continue is honoured" expect_continue

# --- connection handling -------------------------------------------------------------------
keep_alive() {
    local n
    n=$("${CURL[@]}" -N -w '%{num_connects}\n' -o /dev/null -o /dev/null \
        "$BASE/v1/chat/completions" "$BASE/v1/chat/completions" -d "$CHAT5" | tr '\n' ' ')
    [[ "$n" == "1 0 " ]] || { echo "num_connects per transfer: $n"; return 1; }
}
check "keep-alive: a second stream reuses the connection" keep_alive

# Raw-socket checks that curl cannot express: pipelining, tiny writes, HTTP/1.0, Connection: close.
cat >"$TMP/raw.py" <<'EOF'
import socket, sys, time
port, case = int(sys.argv[1]), sys.argv[2]
def req(path, body=None, version='1.1', extra=''):
    if body is None:
        return ('GET %s HTTP/%s\r\nHost: x\r\n%s\r\n' % (path, version, extra)).encode()
    return ('POST %s HTTP/%s\r\nHost: x\r\nContent-Length: %d\r\n%s\r\n%s'
            % (path, version, len(body), extra, body)).encode()
def read_all(s, until, limit=5.0):
    data, end = b'', time.time() + limit
    while until(data) and time.time() < end:
        chunk = s.recv(65536)
        if not chunk:
            break
        data += chunk
    return data
s = socket.create_connection(('127.0.0.1', port), timeout=5)
stream = '{"prompt":"a","max_tokens":3,"stream":true}'
if case == 'pipeline':
    s.sendall(req('/v1/completions', stream) + req('/v1/models') + req('/health'))
    d = read_all(s, lambda d: d.count(b'HTTP/1.1 200') < 3 or not d.endswith(b'\r\n\r\n'))
    ok = d.count(b'HTTP/1.1 200') == 3 and d.count(b'data: [DONE]') == 1 and \
        d.index(b'[DONE]') < d.index(b'"object":"list"')
elif case == 'bytewise':
    for b in req('/v1/completions', stream):
        s.send(bytes([b]))
    d = read_all(s, lambda d: not d.endswith(b'0\r\n\r\n'))
    ok = d.startswith(b'HTTP/1.1 200') and d.count(b'"finish_reason":null') == 3
elif case == 'http10':
    s.sendall(req('/v1/completions', stream, version='1.0'))
    d = read_all(s, lambda d: True)
    ok = b'Transfer-Encoding' not in d and b'Connection: close' in d and \
        d.endswith(b'data: [DONE]\n\n')
elif case == 'close':
    s.sendall(req('/v1/models', extra='Connection: close\r\n'))
    d = read_all(s, lambda d: True)
    ok = d.startswith(b'HTTP/1.1 200') and b'Connection: close' in d and d.endswith(b'}')
elif case == 'bighead':
    s.sendall(b'GET /v1/models HTTP/1.1\r\nX-Big: ' + b'a' * 70000 + b'\r\n\r\n')
    d = read_all(s, lambda d: True)
    ok = d.startswith(b'HTTP/1.1 431')
else:
    ok = False
if not ok:
    print(case, 'got', d[:300])
sys.exit(0 if ok else 1)
EOF
raw() { timeout 10 "$PY" "$TMP/raw.py" "$PORT" "$1"; }
check "pipelined requests are answered in order" raw pipeline
check "a request written one byte at a time" raw bytewise
check "HTTP/1.0 stream is close-delimited" raw http10
check "Connection: close is honoured" raw close
check "oversized request head is 431" raw bighead

# Four long streams fill the batch, then the clients vanish. If their slots were not given
# back, the next request would wait forever behind them.
disconnect() {
    local rc=0 i pids=()
    for i in 1 2 3 4; do
        timeout 10 curl -sN --max-time 0.2 -o /dev/null "$BASE/v1/completions" \
            -d '{"prompt":"a","max_tokens":100000,"stream":true}' &
        pids+=($!)
    done
    wait "${pids[@]}" || true
    sleep 0.1
    kill -0 "$MOCK_PID" || { echo "mock died"; return 1; }
    timeout 5 curl -sS -N --max-time 3 -o "$TMP/after.sse" "$BASE/v1/completions" \
        -d '{"prompt":"a","max_tokens":3,"stream":true}' || rc=$?
    [[ $rc == 0 ]] || { echo "follow-up request failed (curl $rc)"; return 1; }
    sse "$TMP/after.sse" "len(s['content'])==3 and s['done_last']"
}
check "clients disconnecting mid-stream free their slots; server stays healthy" disconnect

# --- timing model --------------------------------------------------------------------------
timing_single() {
    "${CURL[@]}" -N "$BASE/v1/chat/completions" -o "$TMP/t21.sse" \
        -d '{"messages":[{"role":"user","content":"x"}],"max_tokens":21,"stream":true}' &&
        sse "$TMP/t21.sse" "len(s['content'])==21 and
            45e6 <= s['content_ns'][0] - s['role_ns'] <= 70e6 and
            190e6 <= s['content_ns'][-1] - s['content_ns'][0] <= 240e6"
}
check "timing: ttft 50ms, then 20 steps of 10ms" timing_single

# Runs N concurrent chat streams of max_tokens=10 and prints the span of their send stamps in
# ms, from the first role chunk (stamped on arrival) to the last chunk of any stream: the
# batch's wall time on the server's clock, free of curl's start-up time.
batch_span_ms() {
    local n=$1 args=() i
    for i in $(seq "$n"); do
        args+=(-o "$TMP/batch$n.$i.sse" "$BASE/v1/chat/completions")
    done
    # curl 7.88 draws its parallel progress meter even with -s: keep it out of the report.
    timeout 20 curl -sS -N --parallel --parallel-immediate --parallel-max "$n" \
        -d '{"messages":[{"role":"user","content":"x"}],"max_tokens":10,"stream":true}' \
        "${args[@]}" 2>"$TMP/parallel.err" || { cat "$TMP/parallel.err"; return 1; }
    "$PY" - "$TMP" "$n" <<'EOF'
import json, sys
tmp, n = sys.argv[1], int(sys.argv[2])
stamps, tokens = [], 0
for i in range(1, n + 1):
    for e in open('%s/batch%d.%d.sse' % (tmp, n, i)).read().split('\n\n'):
        if e.startswith('data: {'):
            c = json.loads(e[6:])
            stamps.append(c['tokstorm_send_ns'])
            tokens += sum(1 for ch in c['choices'] if ch.get('delta', {}).get('content'))
assert tokens == 10 * n, 'tokens %d' % tokens
print('%.1f' % ((max(stamps) - min(stamps)) / 1e6))
EOF
}
batching() {
    local t4 t8
    t4=$(batch_span_ms 4) && t8=$(batch_span_ms 8) || return 1
    echo "4 streams: ${t4} ms, 8 streams: ${t8} ms"
    "$PY" -c "import sys; r=$t8/$t4; print('ratio %.2f' % r); sys.exit(0 if 1.6<=r<=2.4 else 1)"
}
if batching >"$TMP/batch.out" 2>&1; then
    pass "batching: 8 streams with max-batch 4 take twice as long as 4 ($(tr '\n' ' ' <"$TMP/batch.out"))"
else
    fail "batching: 8 streams with max-batch 4 take twice as long as 4" "$(tr '\n' ' ' <"$TMP/batch.out")"
fi

# --- workers and events per write ----------------------------------------------------------
# start_extra NAME [options...]: starts another mock on a free port, bounded in time; sets
# XPID and XPORT. Its stdout and stderr go to $TMP/NAME.stdout and $TMP/NAME.stderr.
start_extra() {
    local name=$1 i
    shift
    "$MOCK" --port 0 --port-file "$TMP/$name.port" --exit-after 60 "$@" \
        >"$TMP/$name.stdout" 2>"$TMP/$name.stderr" &
    XPID=$!
    EXTRA_PIDS+=("$XPID")
    for i in $(seq 100); do
        [[ -s "$TMP/$name.port" ]] && break
        sleep 0.05
    done
    [[ -s "$TMP/$name.port" ]] || { cat "$TMP/$name.stderr"; return 1; }
    XPORT=$(cat "$TMP/$name.port")
}

# wait_exit PID: waits up to 5 s for PID (a child of this shell, so not in a subshell) to
# exit and sets WAIT_RC to its exit status; fails if it is still running.
wait_exit() {
    local i
    WAIT_RC=0
    for i in $(seq 100); do
        kill -0 "$1" 2>/dev/null || break
        sleep 0.05
    done
    kill -0 "$1" 2>/dev/null && { echo "pid $1 still running"; return 1; }
    wait "$1" || WAIT_RC=$?
}

# parallel_streams PORT N MAX_TOKENS PREFIX: N concurrent chat streams over N connections;
# every one must get exactly MAX_TOKENS content events and end with [DONE].
parallel_streams() {
    local port=$1 n=$2 m=$3 prefix=$4 args=() i
    for i in $(seq "$n"); do
        args+=(-o "$TMP/$prefix.$i.sse" "http://127.0.0.1:$port/v1/chat/completions")
    done
    timeout 20 curl -sS -N --parallel --parallel-immediate --parallel-max "$n" \
        -d "{\"messages\":[{\"role\":\"user\",\"content\":\"x\"}],\"max_tokens\":$m,\"stream\":true}" \
        "${args[@]}" 2>"$TMP/$prefix.err" || { cat "$TMP/$prefix.err"; return 1; }
    for i in $(seq "$n"); do
        sse "$TMP/$prefix.$i.sse" "len(s['content'])==$m and s['done_last']" || return 1
    done
}

if start_extra workers --workers 2 --ttft 20ms --step 10ms --max-batch 4 --stats; then
    WPID=$XPID
    WPORT=$XPORT
    pass "--workers 2 starts and writes --port-file (port $WPORT)"
    workers_ready_line() {
        [[ $(cat "$TMP/workers.stdout") == "tokstorm-mock: listening on http://127.0.0.1:$WPORT" ]]
    }
    check "--workers 2: one ready line, from the parent" workers_ready_line
    WORKER_PIDS=$(ps -o pid= --ppid "$WPID" | tr -s ' \n' ' ')
    two_workers() {
        [[ $(wc -w <<<"$WORKER_PIDS") == 2 ]] || { echo "children: $WORKER_PIDS"; return 1; }
    }
    check "--workers 2: two worker processes" two_workers
    # The port stays taken: a plain mock (no SO_REUSEPORT) is refused it as before, and so is
    # another --workers mock, which must not silently join the first one's sockets.
    port_taken() {
        local workers rc
        for workers in 1 2; do
            rc=0
            timeout 5 "$MOCK" --port "$WPORT" --workers "$workers" --exit-after 1 >/dev/null \
                2>"$TMP/taken.err" || rc=$?
            if [[ $rc != 1 ]] || ! grep -q 'cannot bind' "$TMP/taken.err"; then
                echo "--workers $workers: exit $rc"
                return 1
            fi
        done
    }
    check "--workers 2: the port stays taken for --workers 1 and --workers 2 mocks" port_taken
    check "--workers 2: 8 concurrent streams over 8 connections all succeed" \
        parallel_streams "$WPORT" 8 10 w8
    # Worker w of 2 numbers its requests w+1, w+3, ...: both parities mean both workers
    # served. 32 connections all hashed to one worker would happen once in 2^31 runs.
    both_workers() {
        parallel_streams "$WPORT" 32 3 w32 || return 1
        "$PY" - "$TMP" <<'EOF'
import glob, json, sys
ids = set()
for path in glob.glob(sys.argv[1] + '/w32.*.sse'):
    for e in open(path).read().split('\n\n'):
        if e.startswith('data: {'):
            ids.add(int(json.loads(e[6:])['id'].rsplit('-', 1)[1]))
print('ids', sorted(ids))
sys.exit(0 if len(ids) == 32 and {i % 2 for i in ids} == {0, 1} else 1)
EOF
    }
    check "--workers 2: both workers serve 32 connections, ids unique" both_workers
    workers_sigterm() {
        kill -TERM "$WPID"
        local p
        wait_exit "$WPID" || return 1
        [[ $WAIT_RC == 0 ]] || { echo "exit status $WAIT_RC"; return 1; }
        for p in $WORKER_PIDS; do
            kill -0 "$p" 2>/dev/null && { echo "worker $p still running"; return 1; }
        done
        if [[ $(grep -c 'stats: ' "$TMP/workers.stderr") != 1 ]] ||
            ! grep -q 'stats: requests=40 generations=40 cancelled=0 tokens=176 connections=40 ' \
                "$TMP/workers.stderr"; then
            cat "$TMP/workers.stderr"
            return 1
        fi
    }
    check "--workers 2: SIGTERM stops every worker; one stats line sums them (40 requests)" \
        workers_sigterm
else
    fail "--workers 2 starts and writes --port-file"
fi

# A worker that dies takes the others down with it: the parent exits 1 and leaves no process.
worker_killed() {
    start_extra killed --workers 2 || return 1
    local pids p
    pids=$(ps -o pid= --ppid "$XPID" | tr -s ' \n' ' ')
    [[ $(wc -w <<<"$pids") == 2 ]] || { echo "children: $pids"; return 1; }
    kill -KILL "$(awk '{print $1}' <<<"$pids")"
    wait_exit "$XPID" || return 1
    [[ $WAIT_RC == 1 ]] || { echo "exit status $WAIT_RC"; return 1; }
    for p in $pids; do
        kill -0 "$p" 2>/dev/null && { echo "worker $p still running"; return 1; }
    done
    grep -q 'killed by signal 9' "$TMP/killed.stderr"
}
check "--workers 2: a killed worker stops the rest; exit 1" worker_killed

if start_extra k4 --events-per-write 4 --ttft 20ms --step 10ms; then
    K4="http://127.0.0.1:$XPORT"
    # One write per step: the content stamps come in groups sharing one stamp, sized 1 (the
    # first token), then 4, 4 and the 1 left, a step apart.
    k4_stream() {
        "${CURL[@]}" -N "$K4/v1/completions" -o "$TMP/k4.sse" \
            -d '{"prompt":"a","max_tokens":10,"stream":true,"stream_options":{"include_usage":true}}' &&
            sse "$TMP/k4.sse" "len(s['content'])==10 and s['finish']==['length'] and
                s['usage']['completion_tokens']==10 and s['done_last'] and
                s['groups']==[1, 4, 4, 1] and all(4e6 <= g <= 30e6 for g in s['group_gaps'])"
    }
    check "--events-per-write 4: 10 content events, stamps grouped 1,4,4,1 a step apart" k4_stream
    k4_chat() {
        "${CURL[@]}" -N "$K4/v1/chat/completions" -o "$TMP/k4chat.sse" -d "$CHAT5" &&
            sse "$TMP/k4chat.sse" "len(s['content'])==5 and s['usage']['completion_tokens']==5 and
                s['done_last'] and s['groups']==[1, 4]"
    }
    check "--events-per-write 4: a chat stream of 5 is the first token, then one write of 4" k4_chat
    k4_full() {
        "${CURL[@]}" "$K4/v1/completions" -o "$TMP/k4full.json" -d '{"prompt":"a","max_tokens":9}' &&
            json_ok "$TMP/k4full.json" "j['usage']['completion_tokens']==9 and
                len(j['choices'][0]['text'].split())==9"
    }
    check "--events-per-write 4: non-streaming response unchanged" k4_full
else
    fail "--events-per-write 4 mock starts"
fi

# --- command line and shutdown -------------------------------------------------------------
# Captured to a file first: `grep -q` on a pipe could exit early and SIGPIPE the writer.
help_ok() { "$MOCK" --help >"$TMP/help.txt" && grep -q -- '--max-batch' "$TMP/help.txt"; }
check "--help exits 0 and documents the options" help_ok

bad_option() {
    local rc=0
    "$MOCK" --ttft banana 2>"$TMP/bad.err" >/dev/null || rc=$?
    [[ $rc == 2 ]] && [[ $(wc -l <"$TMP/bad.err") == 1 ]] && grep -q -- '--ttft' "$TMP/bad.err"
}
check "a bad option exits 2 with one line naming it" bad_option

bad_counts() {
    local arg rc
    for arg in '--workers 0' '--workers 257' '--events-per-write 0' '--events-per-write 2000'; do
        rc=0
        # shellcheck disable=SC2086
        "$MOCK" $arg 2>"$TMP/bad.err" >/dev/null || rc=$?
        if [[ $rc != 2 ]] || ! grep -q -- "${arg% *}" "$TMP/bad.err"; then
            echo "$arg: exit $rc"
            return 1
        fi
    done
}
check "--workers and --events-per-write reject out-of-range counts" bad_counts

sigterm() {
    kill -TERM "$MOCK_PID"
    local rc=0 i
    for i in $(seq 50); do
        kill -0 "$MOCK_PID" 2>/dev/null || break
        sleep 0.05
    done
    wait "$MOCK_PID" || rc=$?
    MOCK_PID=""
    [[ $rc == 0 ]] || { echo "exit status $rc"; return 1; }
    grep -q 'stats: requests=' "$TMP/mock.stderr"
}
check "SIGTERM exits 0 promptly (and --stats prints totals)" sigterm

echo "mock: $PASSED passed, $FAILED failed"
[[ $FAILED == 0 ]]
