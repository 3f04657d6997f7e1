#!/usr/bin/env bash
# The datasets end to end: mpirun -np 2 tokstorm against tokstorm-mock (which streams exactly
# the max_tokens asked), for each --dataset kind: the number of requests, each request's
# max_tokens as the dataset sets it, the same requests from the same seed (prompt_index per
# row and the recorded hash), and --model auto picking the mock's one model.
source "$(dirname "$0")/lib.sh" "$1"

start_mock ds --ttft 5ms --step 1ms --max-batch 64
# run NAME ARGS...: one sweep into $WORK/NAME.h5; sets RUN_RC.
run() {
  local name=$1
  shift
  set +e
  timeout 60 "${MPIRUN[@]}" -np 2 "$TOKSTORM" --url "$MOCK_URL" --out "$WORK/$name.h5" \
    --progress off "$@" >"$WORK/$name.stdout" 2>"$WORK/$name.stderr"
  RUN_RC=$?
  set -e
  [ "$RUN_RC" -eq 0 ] || cat "$WORK/$name.stderr"
}
# h5check NAME WHAT EXPR: one check, EXPR a Python expression over the results file (f; r, the
# first level's requests; a, the root attributes).
h5check() {
  local name=$1 what=$2 expr=$3
  check "$name: $what" $PY -c '
import sys, json, h5py, numpy as np
f = h5py.File(sys.argv[1], "r"); a = f.attrs
g = [k for k in f if k.startswith("level_")][0]; r = f[g]["requests"][:]
sys.exit(0 if eval(sys.argv[2]) else 1)' "$WORK/$name.h5" "$expr"
}
# The map prompt_index -> output tokens of a run, for comparing two runs.
index_map() {
  $PY -c '
import sys, h5py
f = h5py.File(sys.argv[1], "r"); g = [k for k in f if k.startswith("level_")][0]
print(sorted(set((int(x["prompt_index"]), int(x["output_tokens"])) for x in f[g]["requests"][:])))' "$WORK/$1.h5"
}

# random: 8 prompts of 64 words, max_tokens drawn from 12 +- 50%; C=2 x 4 requests covers
# every prompt once.
RANDOM_ARGS=(--dataset random --num-prompts 8 --input-len 64 --output-len 12
  --output-len-range 0.5 --levels 2 --requests-per-stream 4)
run random1 "${RANDOM_ARGS[@]}" --seed 5
check "random: exit 0" test "$RUN_RC" -eq 0
h5check random1 "8 requests, all ok, every prompt once" \
  'len(r) == 8 and (r["error_class"] == 0).all() and sorted(r["prompt_index"]) == list(range(8))'
h5check random1 "max_tokens (= the mock's tokens) within 6..18 and not all equal" \
  '(r["output_tokens"] >= 6).all() and (r["output_tokens"] <= 18).all() and len(set(r["output_tokens"])) > 1'
h5check random1 "the server's prompt_tokens recorded, about the 64 asked (mock: bytes/4)" \
  '(r["prompt_tokens"] >= 32).all() and (r["prompt_tokens"] <= 192).all()'
h5check random1 "root: dataset, its parameters, hash and seed" \
  'a["dataset"] == "random" and json.loads(a["dataset_params_json"])["input_len"] == 64 and a["dataset_hash"].startswith("fnv1a64:") and a["dataset_seed"] == 5 and a["prompt_count"] == 8'
run random2 "${RANDOM_ARGS[@]}" --seed 5
run random3 "${RANDOM_ARGS[@]}" --seed 6
hash() { $PY -c 'import sys, h5py; print(h5py.File(sys.argv[1], "r").attrs["dataset_hash"])' "$WORK/$1.h5"; }
check "random: the same seed, the same hash" test "$(hash random1)" = "$(hash random2)"
check "random: the same seed, the same max_tokens for each prompt_index" \
  test "$(index_map random1)" = "$(index_map random2)"
check "random: another seed, another hash" test "$(hash random1)" != "$(hash random3)"

# sharegpt, the bundled sample (25 conversations pass the filters), answer lengths as
# max_tokens: C=5 x 5 requests sends each prompt once, so the tokens the mock streamed are
# exactly the reference answers' lengths, estimated as bytes/4 rounded up.
run sharegpt1 --dataset sharegpt --sharegpt-output-len --levels 5 --requests-per-stream 5 --seed 3
check "sharegpt: exit 0" test "$RUN_RC" -eq 0
EXPECTED=$($PY -c '
import json, sys
est = lambda t: (len(t.encode()) + 3) // 4
out = []
for c in json.load(open(sys.argv[1])):
    t = c.get("conversations", [])
    h = next((i for i, x in enumerate(t) if x["from"] == "human"), None)
    if h is None or h + 1 >= len(t): continue
    p, a = est(t[h]["value"]), est(t[h + 1]["value"])
    if p < 4 or a < 4 or p > 1024 or p + a > 2048: continue
    out.append(a)
print(sorted(out))' "$SRC/prompts/sharegpt-sample.json")
h5check sharegpt1 "25 requests, every prompt once" \
  'len(r) == 25 and (r["error_class"] == 0).all() and sorted(r["prompt_index"]) == list(range(25)) and a["prompt_count"] == 25'
h5check sharegpt1 "each request's tokens are a reference answer's length" \
  "str(sorted(int(x) for x in r['output_tokens'])) == '$EXPECTED'"
run sharegpt2 --dataset sharegpt --sharegpt-output-len --levels 5 --requests-per-stream 5 --seed 3
check "sharegpt: the same seed, the same hash and requests" \
  test "$(hash sharegpt1) $(index_map sharegpt1)" = "$(hash sharegpt2) $(index_map sharegpt2)"

# shared-prefix with --model auto: 2 groups x 3 questions, max_tokens 7.
run prefix --dataset shared-prefix --groups 2 --prompts-per-group 3 --prefix-len 200 \
  --question-len 10 --output-len 7 --levels 3 --requests-per-stream 2 --model auto
check "shared-prefix: exit 0" test "$RUN_RC" -eq 0
h5check prefix "6 requests of 7 tokens, every prompt once" \
  'len(r) == 6 and (r["output_tokens"] == 7).all() and sorted(r["prompt_index"]) == list(range(6))'
h5check prefix "prompts of one group are the same length but for the question" \
  'max(r["prompt_tokens"]) - min(r["prompt_tokens"]) < 60 and min(r["prompt_tokens"]) > 200'
h5check prefix "--model auto took the mock's model" 'a["model"] == "tokstorm-mock"'
check "shared-prefix: the banner names the model" grep -q "model tokstorm-mock" "$WORK/prefix.stdout"

# jsonl stays the default, with --max-tokens for every request.
run jsonl --levels 1 --requests-per-stream 2 --max-tokens 5 --prompts "$SRC/prompts/chat.jsonl"
h5check jsonl "the default dataset is jsonl, max_tokens from --max-tokens" \
  'a["dataset"] == "jsonl" and (r["output_tokens"] == 5).all() and a["prompt_count"] == 54'

# Bad input: a ShareGPT file nothing survives in; one line, exit 2 on both ranks.
printf '[{"conversations": [{"from": "human", "value": "Hi"}, {"from": "gpt", "value": "Hello there, friend"}]}]' \
  >"$WORK/short.json"
rm -f "$WORK/exits"
set +e
timeout 60 "${MPIRUN[@]}" -np 2 sh -c '"$0" "$@"; echo "exit $?" >>"'"$WORK"'/exits"' "$TOKSTORM" \
  --url "$MOCK_URL" --out "$WORK/bad.h5" --dataset sharegpt --prompts "$WORK/short.json" \
  >"$WORK/bad.stdout" 2>"$WORK/bad.stderr"
set -e
check "no usable conversation: exit 2 on both ranks" test "$(grep -c '^exit 2$' "$WORK/exits")" = 2
check "no usable conversation: one line naming the file" \
  sh -c "[ \$(wc -l <'$WORK/bad.stderr') = 1 ] && grep -q 'short.json: no usable conversation' '$WORK/bad.stderr'"
check "no usable conversation: no results file" test ! -e "$WORK/bad.h5"
finish datasets
