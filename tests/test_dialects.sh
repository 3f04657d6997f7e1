#!/usr/bin/env bash
# Every --api dialect end to end: mpirun -np 2 tokstorm against tokstorm-mock speaking it (a
# fresh mock each, so its token total is that dialect's alone), the results file read back:
# exactly the tokens the mock sent, counted from the server's own figures; and chat against a
# mock with reasoning tokens, whose split the file keeps.
source "$(dirname "$0")/lib.sh" "$1"

MAX_TOKENS=12
LEVELS=1,4
RPS=2

# run_dialect API [mock options...] -- [tokstorm options...]
run_dialect() {
  local api=$1
  shift
  local mock_args=() ts_args=()
  while [ $# -gt 0 ] && [ "$1" != "--" ]; do mock_args+=("$1"); shift; done
  [ $# -gt 0 ] && shift
  ts_args=("$@")
  start_mock "$api" --ttft 5ms --step 2ms --max-batch 64 --stats "${mock_args[@]}"
  set +e
  timeout 60 "${MPIRUN[@]}" -np 2 "$TOKSTORM" --url "$MOCK_URL" --api "$api" \
    --levels $LEVELS --max-tokens $MAX_TOKENS --requests-per-stream $RPS \
    --out "$WORK/$api.h5" --progress off "${ts_args[@]}" \
    >"$WORK/$api.stdout" 2>"$WORK/$api.stderr"
  local rc=$?
  set -e
  kill "$MOCK_PID" 2>/dev/null; wait "$MOCK_PID" 2>/dev/null || true
  check "$api: tokstorm exits 0" test "$rc" -eq 0
  [ "$rc" -eq 0 ] || { cat "$WORK/$api.stdout" "$WORK/$api.stderr"; return 0; }
  check "$api: stderr is quiet" test ! -s "$WORK/$api.stderr"
  local sent
  sent=$(sed -n 's/.* tokens=\([0-9]*\) .*/\1/p' "$WORK/$api.err")
  $PY - "$WORK/$api.h5" "$api" "$sent" $MAX_TOKENS $RPS $LEVELS <<'PYEOF' >"$WORK/$api.checks"
import sys, h5py
path, api, sent, max_tokens, rps, levels = sys.argv[1], sys.argv[2], int(sys.argv[3]), \
    int(sys.argv[4]), int(sys.argv[5]), [int(c) for c in sys.argv[6].split(",")]
reasoning = 4 if api == "chat" else 0
f = h5py.File(path, "r")
def check(name, cond):
    print(("ok   " if cond else "FAIL ") + f"{api}: {name}")
check("the file records the dialect", f.attrs["api"] == api)
total = 0
for c in levels:
    g = f["level_%d" % c]
    a, r = g.attrs, g["requests"][:]
    n = c * rps
    check(f"C={c}: every request ok", a["ok"] == n and a["err"] == 0 and len(r) == n)
    check(f"C={c}: tokens = C x rps x max_tokens",
          a["output_tokens"] == n * max_tokens and (r["output_tokens"] == max_tokens).all())
    check(f"C={c}: every count is the server's", (r["tokens_from_usage"] == 1).all())
    check(f"C={c}: one token event per token", (r["content_events"] == max_tokens).all())
    check(f"C={c}: prompt tokens from the server", (r["prompt_tokens"] > 0).all())
    check(f"C={c}: reasoning events split off",
          (r["reasoning_events"] == reasoning).all() and a["reasoning_events"] == n * reasoning
          and a["answer_events"] == n * (max_tokens - reasoning))
    if reasoning:
        check(f"C={c}: the first answer token comes after the first token",
              (r["first_answer_s"] > r["first_token_s"]).all()
              and a["ttft_answer_count"] == n and a["ttft_answer_p50_ms"] > a["ttft_p50_ms"])
    else:
        check(f"C={c}: the first token is the first answer token",
              (r["first_answer_s"] == r["first_token_s"]).all() and a["ttft_answer_count"] == n)
    check(f"C={c}: the mock's send stamps were read", a["stamp_delay_count"] == n * max_tokens)
    total += int(a["output_tokens"])
# The preflight request asks for 1 token.
check(f"the mock sent exactly the tokens counted (+1 preflight): {sent}", sent == total + 1)
PYEOF
  cat "$WORK/$api.checks"
  PASSED=$((PASSED + $(grep -c '^ok' "$WORK/$api.checks" || true)))
  FAILED=$((FAILED + $(grep -c '^FAIL' "$WORK/$api.checks" || true)))
}

run_dialect sglang -- --top-p 0.9 --min-tokens 2 --stop "</s>" \
  --extra-body '{"sampling_params": {"top_k": 20}}'
run_dialect tgi -- --stop "</s>" --stop "User:"
run_dialect llamacpp -- --ignore-eos
run_dialect chat --reasoning-tokens 4 -- --temperature 0.6

# A bad --extra-body ends the run before anything starts, with the reason.
set +e
"$TOKSTORM" --url http://127.0.0.1:9 --extra-body '[1, 2]' >"$WORK/bad.out" 2>"$WORK/bad.err"
rc=$?
set -e
check "--extra-body that is not an object: exit 2" test "$rc" -eq 2
check "... naming the option and the reason" grep -q "extra-body: not a JSON object" "$WORK/bad.err"
set +e
"$TOKSTORM" --url http://127.0.0.1:9 --extra-body '{top_k: 1}' >"$WORK/bad.out" 2>"$WORK/bad.err"
rc=$?
set -e
check "--extra-body that is not JSON: exit 2" test "$rc" -eq 2
check "... naming the option and the reason" grep -q "extra-body: not valid JSON" "$WORK/bad.err"

finish dialects
