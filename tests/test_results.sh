#!/usr/bin/env bash
# What a sweep leaves behind, read back by other programs: a real mpirun -np 2 sweep against
# tokstorm-mock writes the results file (schema v1), --json and --csv; h5dump and h5py read
# the file; its /summary equals the printed table, the JSON and the CSV; the root records the
# run (git revision, options, hosts, MPI library, end time); --record-tokens keeps every
# content event in CSR layout that agrees with the rows and with what the mock sent; the live
# progress line shows with --progress on, on a terminal, and not in a log. Bad --json or
# --csv paths end every rank with status 2 before any request.
source "$(dirname "$0")/lib.sh" "$1"

MAX_TOKENS=64
start_mock results --ttft 50ms --step 10ms --max-batch 64 --stats
OUT="$WORK/r.h5"
set +e
timeout 120 "${MPIRUN[@]}" -np 2 "$TOKSTORM" --url "$MOCK_URL" --model mock \
  --levels 2,8 --max-tokens $MAX_TOKENS --requests-per-stream 3 --out "$OUT" \
  --json "$WORK/r.json" --csv "$WORK/r.csv" --record-tokens --progress on \
  >"$WORK/r.stdout" 2>"$WORK/r.stderr"
rc=$?
set -e
cat "$WORK/r.stdout"
check "tokstorm exits 0" test "$rc" -eq 0
[ "$rc" -eq 0 ] || cat "$WORK/r.stderr"
check "stderr is quiet" test ! -s "$WORK/r.stderr"
check "h5dump reads the layout" sh -c "h5dump -H '$OUT' >'$WORK/h5dump.txt'"
check "h5dump shows /summary and the event datasets" sh -c \
  "grep -q 'DATASET \"summary\"' '$WORK/h5dump.txt' && grep -q 'DATASET \"event_time_s\"' '$WORK/h5dump.txt'"
check "h5dump reads /summary's data" sh -c "h5dump -d /summary '$OUT' | grep -q level_8"
# About once a second during each ~2 s level, one line each time into a pipe.
check "--progress on: progress lines for both levels" sh -c \
  "grep -Eq '^progress C=2: [0-9]+/6 requests, [0-9.]+ tok/s, 0 errors, [0-9.]+ s$' '$WORK/r.stdout' &&
   grep -Eq '^progress C=8: [0-9]+/24 requests, [0-9.]+ tok/s, 0 errors, [0-9.]+ s$' '$WORK/r.stdout'"
check "--progress on into a pipe: whole lines, no carriage return" sh -c "! grep -q $'\r' '$WORK/r.stdout'"

$PY - "$OUT" "$WORK/r.stdout" "$WORK/r.json" "$WORK/r.csv" "$SRC" $MAX_TOKENS <<'PYEOF' >"$WORK/r.checks"
import csv, json, math, re, subprocess, sys
import h5py, numpy as np
path, stdout_path, json_path, csv_path, src, max_tokens = sys.argv[1:6] + [int(sys.argv[6])]
levels, rps, ranks = [2, 8], 3, 2
def check(name, cond):
    print(("ok   " if cond else "FAIL ") + name)
f = h5py.File(path, "r")
a = f.attrs
names = ["group", "concurrency", "rate", "start_s", "agg_tok_s", "steady_tok_s", "per_req_tok_s",
         "output_tokens", "wall_s", "ok", "err", "ttft_p50_ms", "ttft_p99_ms", "itl_p50_ms",
         "itl_p99_ms", "complete"]

# The root: the run, reproducibly described.
rev = a["git_revision"]
check(f"git_revision '{rev}' is a git description or 'unknown'",
      re.fullmatch(r"([0-9a-f]{7,40}|.+-g[0-9a-f]{7,40})(-dirty)?|unknown", rev) is not None)
check("end_time_utc is ISO 8601 UTC, not before start_time_utc",
      re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ", a["end_time_utc"]) is not None
      and a["end_time_utc"] >= a["start_time_utc"])
check("mpi_library_version names the library", "MPI" in a["mpi_library_version"])
hosts = [h.decode() if isinstance(h, bytes) else h for h in a["hosts"]]
rank_hosts = [h.decode() for h in f["ranks"][:]["host"]]
check("hosts: the distinct host names of /ranks", hosts == sorted(set(rank_hosts), key=rank_hosts.index))
opts = json.loads(a["options_json"])
check("options_json: every option's effective value",
      opts["levels"] == levels and opts["max-tokens"] == max_tokens and opts["requests-per-stream"] == rps
      and opts["record-tokens"] is True and opts["progress"] == "on" and opts["timeout"] == 600
      and opts["duration"] is None and opts["rates"] is None and opts["out"] == path
      and opts["url"] == a["url"] and len(opts) >= 30)
check("command_line as given (nothing secret in it)",
      "--record-tokens --progress on" in a["command_line"] and a["schema_version"] == 1)

# The printed table, /summary, the JSON and the CSV: one table.
table = {}
for line in open(stdout_path):
    cols = [c.strip() for c in line.split("|")]
    if len(cols) == 10 and cols[0].isdigit():
        table[int(cols[0])] = cols
s = f["summary"][:]
check("/summary: one row per level, in order, with the table's fields",
      list(s["concurrency"]) == levels and list(s.dtype.names) == names
      and [g.decode() for g in s["group"]] == ["level_%d" % c for c in levels])
def pair(text):
    return [math.nan, math.nan] if text == "-" else [float(x) for x in text.split("/")]
for row in s:
    c = int(row["concurrency"])
    p = table.get(c)
    if p is None:
        check(f"C={c}: printed", False)
        continue
    steady = math.nan if p[2] == "-" else float(p[2])
    same = lambda x, y: (math.isnan(x) and math.isnan(y)) or x == y
    check(f"C={c}: /summary row equals the printed row",
          round(row["agg_tok_s"], 1) == float(p[1]) and same(round(row["steady_tok_s"], 1), steady)
          and round(row["per_req_tok_s"], 1) == float(p[3]) and row["output_tokens"] == int(p[4])
          and round(row["wall_s"], 2) == float(p[5]) and row["ok"] == int(p[6]) and row["err"] == int(p[7])
          and [round(row["ttft_p50_ms"], 1), round(row["ttft_p99_ms"], 1)] == pair(p[8])
          and [round(row["itl_p50_ms"], 2), round(row["itl_p99_ms"], 2)] == pair(p[9])
          and row["complete"] == 1)
    g = f["level_%d" % c].attrs
    check(f"C={c}: /summary row equals the level's attributes",
          row["agg_tok_s"] == g["agg_tok_s"] and row["ok"] == g["ok"] and row["wall_s"] == g["wall_s"]
          and row["ttft_p99_ms"] == g["ttft_p99_ms"] and row["itl_p50_ms"] == g["itl_p50_ms"]
          and row["start_s"] == g["start_s"] and row["complete"] == g["complete"])

doc = json.load(open(json_path))
check("JSON: run metadata as in the file's root",
      doc["schema_version"] == 1 and doc["git_revision"] == rev and doc["url"] == a["url"]
      and doc["start_time_utc"] == a["start_time_utc"] and doc["end_time_utc"] == a["end_time_utc"]
      and doc["hosts"] == hosts and doc["mpi_library_version"] == a["mpi_library_version"]
      and doc["command_line"] == a["command_line"] and doc["options"] == opts and doc["ranks"] == ranks
      and doc["results_file"] == path)
rows = list(csv.DictReader(open(csv_path)))
check("CSV: a header of the summary's fields, one row per level",
      open(csv_path).readline().strip().split(",") == names and len(rows) == len(s))
check("JSON: one entry per level", len(doc["levels"]) == len(s))
def close(x, y):  # the CSV carries 10 significant digits
    return (math.isnan(x) and math.isnan(y)) or abs(x - y) <= 1e-9 * max(1.0, abs(x))
for i, row in enumerate(s):
    j, c = doc["levels"][i], rows[i]
    check(f"level {i}: JSON and CSV equal /summary, field by field",
          all((j[n] == row[n].decode() and c[n] == row[n].decode()) if n == "group" else
              (close(float("nan") if j[n] is None else j[n], float(row[n]))
               and close(float("nan") if c[n] == "" else float(c[n]), float(row[n])))
              for n in names))
    check(f"level {i}: JSON adds the latency percentiles and error classes",
          j["latency_ms"]["ttft"]["p99"] == f["level_%d" % int(row["concurrency"])].attrs["ttft_p99_ms"]
          and j["errors"]["timeout"] == 0 and j["latency_ms"]["ttft"]["count"] == row["ok"])

# --record-tokens: each request's content events, CSR, beside the rows.
for c in levels:
    g = f["level_%d" % c]
    r, off, t = g["requests"][:], g["event_offsets"][:], g["event_time_s"][:]
    n = np.diff(off)
    check(f"C={c}: event_offsets has one entry per request and one more, from 0 to len(event_time_s)",
          len(off) == len(r) + 1 and off[0] == 0 and off[-1] == len(t) and (n >= 0).all())
    check(f"C={c}: each request's span is its recorded_events and content_events long",
          (n == r["recorded_events"]).all() and (n == r["content_events"]).all())
    check(f"C={c}: the mock sent max_tokens tokens per request, one per event, all recorded",
          (r["output_tokens"] == max_tokens).all() and (n == max_tokens).all()
          and len(t) == c * rps * max_tokens)
    first = t[off[:-1]]
    last = t[off[1:] - 1]
    check(f"C={c}: first event = first_token_s, every span ascending and within the request",
          (first == r["first_token_s"]).all() and (last <= r["end_s"]).all()
          and all((np.diff(t[off[k]:off[k + 1]]) >= 0).all() for k in range(len(r))))
    itl = np.concatenate([np.diff(t[off[k]:off[k + 1]]) for k in range(len(r))]) * 1e3
    check(f"C={c}: ITL recomputed from the events: {len(itl)} gaps, median "
          f"{np.median(itl):.3f} ms vs itl_p50_ms {g.attrs['itl_p50_ms']:.3f}",
          len(itl) == g.attrs["itl_count"]
          and abs(np.median(itl) - g.attrs["itl_p50_ms"]) <= 0.01 * g.attrs["itl_p50_ms"] + 0.01)
    check(f"C={c}: every per-level dataset chunked and gzip-compressed",
          all(d.chunks is not None and d.compression == "gzip" for d in g.values()))
check("/summary and /ranks chunked and gzip-compressed",
      all(f[d].chunks is not None and f[d].compression == "gzip" for d in ("summary", "ranks")))
PYEOF
check "all 31 file checks ran" test "$(wc -l <"$WORK/r.checks")" -eq 31
while read -r status name; do
  check "$name" test "$status" = ok
done <"$WORK/r.checks"

# Without --progress into a file (a log): nothing during the level, the row is the line. The
# level lasts ~1.4 s, long enough for a progress sample. Without --record-tokens no events.
run_quiet() {
  set +e
  timeout 60 "${MPIRUN[@]}" -np 2 "$TOKSTORM" --url "$MOCK_URL" --model mock --levels 2 \
    --max-tokens $MAX_TOKENS --requests-per-stream 2 --out "$WORK/q.h5" --force "$@" \
    >"$WORK/q.stdout" 2>"$WORK/q.stderr"
  RUN_RC=$?
  set -e
}
run_quiet
check "default (auto) into a file: exit 0" test "$RUN_RC" -eq 0
check "default (auto) into a file: no progress line" sh -c "! grep -q '^progress' '$WORK/q.stdout'"
check "without --record-tokens: no event datasets, recorded_events 0" $PY -c '
import h5py, sys
g = h5py.File(sys.argv[1], "r")["level_2"]
sys.exit(not ("event_time_s" not in g and "event_offsets" not in g and (g["requests"]["recorded_events"] == 0).all()))' "$WORK/q.h5"
GENERATIONS=$((1 + 2 * 3 + 8 * 3 + 1 + 2 * 2))

# On a terminal (a pseudo-terminal from script(1)) auto shows the line, rewritten in place,
# and clears it for the row. mpirun's own stdout is the terminal there; the ranks' is always
# one of Open MPI's (see run_progress.c), which must not count.
if command -v script >/dev/null; then
  TTY_CMD="timeout 60 ${MPIRUN[*]} -np 2 $TOKSTORM --url $MOCK_URL --model mock --levels 2 --max-tokens $MAX_TOKENS --requests-per-stream 2 --out $WORK/t.h5"
  script -qec "$TTY_CMD" /dev/null >"$WORK/t.stdout" 2>&1 </dev/null || true
  check "auto on a terminal: the line rewritten in place with \\r" \
    grep -Eq $'\rprogress C=2: [0-9]+/4 requests' "$WORK/t.stdout"
  check "auto on a terminal: the line cleared before the level's row" \
    grep -Eq $'\r +\r +2 \\| ' "$WORK/t.stdout"
  GENERATIONS=$((GENERATIONS + 1 + 2 * 2))
else
  echo "skip - script(1) not installed: no terminal test"
fi

# Bad --json/--csv paths: one line, status 2 on every rank, no request sent.
bad_output() { # bad_output NAME PATTERN ARGS...
  local name=$1 pattern=$2
  shift 2
  rm -f "$WORK/exits"
  set +e
  timeout 60 "${MPIRUN[@]}" -np 2 sh -c '"$0" "$@"; echo "rank $OMPI_COMM_WORLD_RANK exit $?" >>"'"$WORK"'/exits"' \
    "$TOKSTORM" --url "$MOCK_URL" --out "$WORK/b.h5" "$@" >"$WORK/b.stdout" 2>"$WORK/b.stderr"
  set -e
  check "$name: exit 2 on both ranks" test "$(grep -c 'exit 2$' "$WORK/exits" 2>/dev/null)" = 2
  check "$name: one line naming the problem" sh -c \
    "[ \"\$(wc -l <'$WORK/b.stderr')\" = 1 ] && grep -q -- '$pattern' '$WORK/b.stderr'"
}
bad_output "--json in a missing directory" "^tokstorm: --json: cannot create $WORK/no/such.json" \
  --json "$WORK/no/such.json"
bad_output "--csv in a missing directory" "^tokstorm: --csv: cannot create $WORK/no/such.csv" \
  --csv "$WORK/no/such.csv"
touch "$WORK/exists.json"
bad_output "--json exists without --force" "--json: $WORK/exists.json exists (use --force" \
  --json "$WORK/exists.json"
bad_output "--csv is the --out file" "--csv: $WORK/b.h5 is also the --out file" --csv "$WORK/b.h5"
check "no file left behind by the bad runs, the existing one untouched" \
  test ! -e "$WORK/no" -a ! -e "$WORK/b.h5" -a ! -s "$WORK/exists.json"

kill "$MOCK_PID" 2>/dev/null; wait "$MOCK_PID" 2>/dev/null || true
check "the mock generated $GENERATIONS times: the bad runs sent nothing" \
  grep -q "generations=$GENERATIONS " "$WORK/results.err"
finish results
