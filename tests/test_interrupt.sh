#!/usr/bin/env bash
# Interruptions, for real, against a slow tokstorm-mock: SIGINT to mpirun, SIGTERM to one rank
# and SIGINT to one rank between levels stop every rank at the same point, with the finished
# levels and the one cut short (complete = 0) in the results file; SIGKILL to one rank leaves
# the levels finished before intact. And the preflight: --no-preflight turns a dead server
# into a level of connect errors; with the preflight, a failed one leaves no file behind and
# does not touch a file that --force was to replace.
source "$(dirname "$0")/lib.sh" "$1"

# Batch 4, 10 ms steps, 50 tokens: C=2 and C=4 take about 1 s each (2 requests per stream);
# C=64 queues for about 16 s, which no test waits for.
start_mock slow --ttft 20ms --step 10ms --max-batch 4
SWEEP=(--url "$MOCK_URL" --levels 2,4,64 --max-tokens 50)

# start_run NAME [mpirun options --] TOKSTORM_ARGS...: starts mpirun -np 2 in the background,
# each rank appending "rank R exit S" to $WORK/NAME.exits (unless mpirun options are given:
# then the ranks run bare, as a user's would); sets RUN_PID (timeout's) and RUN_NAME.
start_run() {
  RUN_NAME=$1
  shift
  local mpi_opts=()
  if [ "${2:-}" = -- ]; then
    mpi_opts=("$1")
    shift 2
  fi
  rm -f "$WORK/$RUN_NAME".*
  if [ ${#mpi_opts[@]} -gt 0 ]; then
    timeout 60 "${MPIRUN[@]}" ${mpi_opts[0]} -np 2 "$TOKSTORM" "$@" \
      >"$WORK/$RUN_NAME.stdout" 2>"$WORK/$RUN_NAME.stderr" &
  else
    timeout 60 "${MPIRUN[@]}" -np 2 sh -c \
      '"$0" "$@"; echo "rank $OMPI_COMM_WORLD_RANK exit $?" >>"'"$WORK/$RUN_NAME"'.exits"' \
      "$TOKSTORM" "$@" >"$WORK/$RUN_NAME.stdout" 2>"$WORK/$RUN_NAME.stderr" &
  fi
  RUN_PID=$!
}

# wait_for PATTERN: until the run's stdout has a line matching PATTERN (at most 30 s).
wait_for() {
  for _ in $(seq 300); do
    grep -Eq -- "$1" "$WORK/$RUN_NAME.stdout" 2>/dev/null && return 0
    sleep 0.1
  done
  echo "no line '$1' in $RUN_NAME's output"
  cat "$WORK/$RUN_NAME.stdout" "$WORK/$RUN_NAME.stderr"
  return 1
}

# rank_pid RANK: the tokstorm process of that rank, among the run's descendants.
descendants() { local c; for c in $(ps -o pid= --ppid "$1"); do echo "$c"; descendants "$c"; done; }
rank_pid() {
  local p
  for p in $(descendants "$RUN_PID"); do
    [ "$(cat "/proc/$p/comm" 2>/dev/null)" = tokstorm ] || continue
    tr '\0' '\n' <"/proc/$p/environ" | grep -qx "OMPI_COMM_WORLD_RANK=$1" && echo "$p"
  done
}

# finish_run: waits for the run; sets RUN_RC and ELAPSED_MS (since the last mark).
mark() { MARK_NS=$(date +%s%N); }
finish_run() {
  set +e
  wait "$RUN_PID"
  RUN_RC=$?
  set -e
  ELAPSED_MS=$((($(date +%s%N) - MARK_NS) / 1000000))
}

all_ranks_exit() { # all_ranks_exit S: both ranks exited with S
  [ "$(grep -c "exit $1\$" "$WORK/$RUN_NAME.exits" 2>/dev/null)" = 2 ] ||
    { cat "$WORK/$RUN_NAME.exits" "$WORK/$RUN_NAME.stderr"; false; }
}

# file_check FILE SPEC: the results file holds the levels of SPEC, "level_2:1,level_4:1,level_64:0"
# (name:complete, in order): /summary lists them and nothing else, each group's rows number its
# ok + err, its err_cancelled count is the rows of class cancelled, and h5dump reads it all.
file_check() {
  h5dump "$1" >/dev/null 2>"$WORK/h5dump.err" || { cat "$WORK/h5dump.err"; return 1; }
  $PY - "$1" "$2" <<'PYEOF'
import sys, h5py
path, spec = sys.argv[1], sys.argv[2]
want = [(g, int(c)) for g, c in (x.split(":") for x in spec.split(",") if x)]
f = h5py.File(path, "r")
s = f["summary"][:]
got = [(g.decode(), int(c)) for g, c in zip(s["group"], s["complete"])]
groups = sorted(k for k in f if k.startswith("level_"))
ok = got == want and groups == sorted(g for g, _ in want)
for g, complete in want:
    a, r = f[g].attrs, f[g]["requests"][:]
    names = {v: k for k, v in h5py.check_enum_dtype(f[g]["requests"].dtype["error_class"]).items()}
    n_cancelled = sum(1 for c in r["error_class"] if names[c] == "cancelled")
    ok &= len(r) == a["ok"] + a["err"] and a["complete"] == complete
    ok &= n_cancelled == a["err_cancelled"] and (complete == 0 or n_cancelled == 0)
    if not ok:
        print(g, dict(complete=a["complete"], ok=a["ok"], err=a["err"], rows=len(r),
                      cancelled=a["err_cancelled"], rows_cancelled=n_cancelled))
ok &= f.attrs["end_time_utc"] != ""
if not ok:
    print("summary", got, "groups", groups, "end", repr(f.attrs["end_time_utc"]))
sys.exit(0 if ok else 1)
PYEOF
}

# 1. SIGINT to mpirun during the third level. Open MPI's mpirun does not pass SIGINT on: it
# sends every rank SIGTERM after odls_base_sigkill_timeout seconds, and SIGKILL as long again
# later, and exits 1 itself. With 4 s the ranks have time to stop the level (reaction within
# about 1 s, the 2 s grace, the write).
start_run mpirun "--mca odls_base_sigkill_timeout 4" -- "${SWEEP[@]}" --out "$WORK/mpirun.h5"
wait_for '^ +4 \|'
sleep 1
mark
kill -INT "$(ps -o pid= --ppid "$RUN_PID" | tr -d ' ')"
finish_run
written_ms=$(($(stat -c %.3Y "$WORK/mpirun.h5" | tr -d .) - MARK_NS / 1000000))
check "SIGINT to mpirun: mpirun exits 1 (Open MPI's status when it is signalled)" test "$RUN_RC" -eq 1
check "SIGINT to mpirun: the ranks were told SIGTERM, and say what the file holds" grep -q \
  "^tokstorm: interrupted by SIGTERM: 2 finished levels and the one cut short (complete = 0) in $WORK/mpirun.h5" \
  "$WORK/mpirun.stderr"
check "SIGINT to mpirun: the interrupted level's row, and a note under it" \
  grep -Eq '^ +64 \|.*$' "$WORK/mpirun.stdout"
check "SIGINT to mpirun: the note says what was cut" grep -Eq \
  '^ +\| interrupted: [0-9]+ streams? stopped with requests left, [0-9]+ requests? still in flight after the 2.0 s grace cancelled' \
  "$WORK/mpirun.stdout"
check "SIGINT to mpirun: levels 2 and 4 complete, 64 cut short, in the file" \
  file_check "$WORK/mpirun.h5" level_2:1,level_4:1,level_64:0
# SIGTERM reaches the ranks 4 s after the SIGINT; the file is closed within about 1 s (the
# next reduction) + 2 s (grace) + the write.
check "SIGINT to mpirun: file closed 4 s + grace + at most 2 s after (took $written_ms ms)" \
  test "$written_ms" -le 8000 -a "$written_ms" -ge 4000

# 2. SIGTERM to rank 1 only: both ranks stop the level at the same point and exit 143: within
# about 1 s (the next reduction) + 2 s (grace) + the write and MPI's tear-down.
start_run term "${SWEEP[@]}" --out "$WORK/term.h5"
wait_for '^ +4 \|'
sleep 1
mark
kill -TERM "$(rank_pid 1)"
finish_run
check "SIGTERM to rank 1: both ranks exit 143" all_ranks_exit 143
check "SIGTERM to rank 1: done within grace + 3 s (took $ELAPSED_MS ms)" \
  test "$ELAPSED_MS" -le 5000
check "SIGTERM to rank 1: one line on stderr, from rank 0" sh -c \
  "[ \"\$(wc -l <'$WORK/term.stderr')\" = 1 ] && grep -q '^tokstorm: interrupted by SIGTERM: 2 finished levels' '$WORK/term.stderr'"
check "SIGTERM to rank 1: levels 2 and 4 complete, 64 cut short" \
  file_check "$WORK/term.h5" level_2:1,level_4:1,level_64:0

# 3. SIGINT to rank 0 between levels, while it opens the next level's connections (2 per
# second): no rank starts the level, both exit 130 within about 1 s (the next reduction).
start_run between --url "$MOCK_URL" --levels 2,16 --max-tokens 20 --connect-rate 2 \
  --out "$WORK/between.h5"
wait_for '^ +2 \|'
sleep 0.5
mark
kill -INT "$(rank_pid 0)"
finish_run
check "SIGINT between levels: both ranks exit 130" all_ranks_exit 130
check "SIGINT between levels: within $((2 * SLOW)) s (took $ELAPSED_MS ms)" test "$ELAPSED_MS" -le $((2000 * SLOW))
check "SIGINT between levels: the next level never began" \
  sh -c "! grep -Eq '^ +16 \\|' '$WORK/between.stdout'"
check "SIGINT between levels: the first level alone, complete" \
  file_check "$WORK/between.h5" level_2:1
check "SIGINT between levels: the line says so" grep -q \
  "^tokstorm: interrupted by SIGINT: 1 finished level in $WORK/between.h5\$" "$WORK/between.stderr"

# 4. SIGKILL to rank 1 during the third level: mpirun ends the job; the file has the first two
# levels, whole (written and flushed before the third began), and nothing of the third.
start_run kill "${SWEEP[@]}" --out "$WORK/kill.h5"
wait_for '^ +4 \|'
sleep 1
kill -KILL "$(rank_pid 1)"
finish_run
check "SIGKILL to rank 1: the job ends (status $RUN_RC)" test "$RUN_RC" -ne 0 -a "$RUN_RC" -ne 124
check "SIGKILL to rank 1: h5dump reads the file" sh -c "h5dump '$WORK/kill.h5' >/dev/null"
check "SIGKILL to rank 1: levels 2 and 4 intact, row counts equal their counts" $PY - "$WORK/kill.h5" <<'PYEOF'
import sys, h5py
f = h5py.File(sys.argv[1], "r")
groups = sorted(k for k in f if k.startswith("level_"))
ok = groups == ["level_2", "level_4"] and [g.decode() for g in f["summary"][:]["group"]] == groups
for g in groups:
    a = f[g].attrs
    ok &= a["complete"] == 1 and len(f[g]["requests"]) == a["ok"] + a["err"] == int(g[6:]) * 2
sys.exit(0 if ok else 1)
PYEOF

# 5. The preflight. A closed port with --no-preflight: the sweep runs, every request a connect
# error, exit 0. With it (the default): exit 3, and no file left behind; with --force, the
# file that was to be replaced is left as it was.
PORT=$(closed_port)
start_run nopre --url "http://127.0.0.1:$PORT" --levels 2 --no-preflight --out "$WORK/nopre.h5"
finish_run
check "--no-preflight, closed port: exit 0 on both ranks" all_ranks_exit 0
check "--no-preflight, closed port: 4 requests, all connect errors" $PY - "$WORK/nopre.h5" <<'PYEOF'
import sys, h5py
g = h5py.File(sys.argv[1], "r")["level_2"]
a, r = g.attrs, g["requests"][:]
sys.exit(0 if a["ok"] == 0 and a["err"] == a["err_connect"] == len(r) == 4
         and (r["error_class"] == 3).all() and a["complete"] == 1 else 1)
PYEOF
# A level that lasted milliseconds says nothing of the client's capacity: no "busy" note.
check "--no-preflight, closed port: no note that the client was busy" \
  bash -c "! grep -q 'event loop was busy' '$WORK/nopre.stdout'"
start_run pre --url "http://127.0.0.1:$PORT" --levels 2 --out "$WORK/pre.h5"
finish_run
check "preflight, closed port: exit 3 on both ranks" all_ranks_exit 3
check "preflight, closed port: no results file left behind" test ! -e "$WORK/pre.h5"
cp "$WORK/between.h5" "$WORK/old.h5"
start_run force --url "http://127.0.0.1:$PORT" --levels 2 --out "$WORK/old.h5" --force
finish_run
check "--force, failed preflight: exit 3" all_ranks_exit 3
check "--force, failed preflight: the old file untouched, no temporary left" sh -c \
  "cmp -s '$WORK/old.h5' '$WORK/between.h5' && [ -z \"\$(ls '$WORK' | grep '^old.h5.')\" ]"

finish interrupt
