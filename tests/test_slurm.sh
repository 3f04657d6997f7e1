#!/usr/bin/env bash
# A real Slurm on this machine: munged, slurmctld and slurmd (Debian's slurm-wlm and munge,
# installed if missing) run on loopback with a slurm.conf, a munge key and a munge socket of
# their own in a temporary directory, on ports chosen free, as one node of at least 4 CPUs.
# jobs/tokstorm.sbatch is submitted with sbatch --wait against tokstorm-mock: once through
# srun --mpi=pmix, once through mpirun inside the allocation, once with a server that is not
# there (the job must fail with tokstorm's status 3), once as a job array over two server
# configurations, and once as a server job, then a benchmark job (--dependency=after:), then
# a job that cancels the server (--dependency=afterany:), as jobs/README.md shows them. Each
# job's exit state comes from sbatch's status, scontrol and the job completion log (no
# slurmdbd, so no sacct); each results file is read back with h5py, the Slurm job recorded in
# its root attributes included.
#
# Nothing of a Slurm the machine may already run is touched: own config (SLURM_CONF), own
# ports, own state, spool and log directories, own munge socket and key. Every daemon runs
# under timeout(1) and is stopped by its pid on exit, even on failure; a process still
# referring to the test's directory afterwards (a job step left behind) is killed by pid.
# Needs root (slurmd starts jobs as their user); without it the test is skipped (exit 77).
source "$(dirname "$0")/lib.sh" "$1"
export PATH="$PATH:/usr/sbin:/sbin" # munged, slurmctld and slurmd live here

if [ "$(id -u)" -ne 0 ]; then
  echo "slurm: skipped: needs root (slurmd, munged, apt-get)"
  exit 77
fi
# A Slurm job around the test (or a user's SBATCH_* defaults) must not leak into ours.
while read -r var; do unset "$var"; done < <(compgen -e | grep -E '^(SLURM|SBATCH|SALLOC|SRUN|SQUEUE|SINFO)_')

DAEMON_S=270 # no daemon outlives the test, even if the test itself is killed
SL="$WORK/slurm"
CONF="$SL/slurm.conf"
SOCK="$SL/munge/munge.sock"
HOST=$(uname -n) # gethostname(): what tokstorm records as each rank's host
NODE=${HOST%%.*} # the Slurm node's name: the short host name, where it makes a valid one
[[ $NODE =~ ^[A-Za-z0-9][A-Za-z0-9-]*$ ]] || NODE=localhost
DAEMON_PIDS=()
STRAGGLERS=0 # processes slurm_stop had to kill after stopping the daemons

# our_pids: processes other than this shell that refer to $SL in their command line, working
# directory or open files: this test's daemons, job steps (slurmstepd) and ranks.
our_pids() {
  $PY - "$SL" "$$" <<'PYEOF'
import os, sys
root, me = sys.argv[1], {sys.argv[2], str(os.getpid()), str(os.getppid())}
for pid in filter(str.isdigit, os.listdir("/proc")):
    if pid in me:
        continue
    try:
        refs = [open(f"/proc/{pid}/cmdline", "rb").read().decode(errors="replace").replace("\0", " "),
                os.readlink(f"/proc/{pid}/cwd")]
        fds = f"/proc/{pid}/fd"
        refs += [os.readlink(f"{fds}/{fd}") for fd in os.listdir(fds)]
    except OSError:
        continue
    if any(r == root or r.startswith(root + "/") or (" " + root + "/") in r or ("=" + root + "/") in r
           for r in refs):
        print(pid)
PYEOF
}

slurm_stop() { # cancels our jobs, stops the daemons by pid, then kills any straggler
  set +e
  if [ ${#DAEMON_PIDS[@]} -gt 0 ] && [ -f "$CONF" ]; then
    local queued
    mapfile -t queued < <(timeout 10 squeue -h -o %A 2>/dev/null)
    if [ ${#queued[@]} -gt 0 ]; then
      timeout 10 scancel "${queued[@]}" 2>/dev/null
      for _ in $(seq 30); do
        [ -z "$(timeout 5 squeue -h -o %A 2>/dev/null)" ] && break
        sleep 0.5
      done
    fi
  fi
  local i pid
  for ((i = ${#DAEMON_PIDS[@]} - 1; i >= 0; i--)); do # slurmd, slurmctld, then munged
    pid=${DAEMON_PIDS[i]}
    kill "$pid" 2>/dev/null
    for _ in $(seq 100); do
      kill -0 "$pid" 2>/dev/null || break
      sleep 0.1
    done
    kill -9 "$pid" 2>/dev/null
    wait "$pid" 2>/dev/null
  done
  DAEMON_PIDS=()
  if [ -d "$SL" ]; then
    local left
    mapfile -t left < <(our_pids)
    if [ ${#left[@]} -gt 0 ]; then
      STRAGGLERS=$((STRAGGLERS + ${#left[@]}))
      echo "slurm: killing leftover processes ${left[*]}"
      ps -o pid,args -p "$(
        IFS=,
        echo "${left[*]}"
      )"
      kill -9 "${left[@]}" 2>/dev/null
    fi
  fi
  set -e
  return 0
}
trap 'slurm_stop; cleanup' EXIT
trap 'exit 129' HUP
trap 'exit 130' INT
trap 'exit 143' TERM

# start_daemon NAME CMD...: runs CMD in the background under timeout(1); its pid is stopped
# on exit.
start_daemon() {
  local name=$1
  shift
  timeout "$DAEMON_S" "$@" >"$SL/log/$name.out" 2>&1 &
  DAEMON_PIDS+=($!)
}

# wait_for SECONDS CMD...: retries CMD every 0.2 s until it succeeds, at most SECONDS.
wait_for() {
  local end=$((SECONDS + $1))
  shift
  until "$@" >/dev/null 2>&1; do
    [ "$SECONDS" -lt "$end" ] || return 1
    sleep 0.2
  done
}

show_logs() { # what the daemons said, when something went wrong
  for f in "$SL"/log/*; do
    echo "--- $f"
    tail -n 25 "$f"
  done
}

# The packages: installed here when missing (a fresh machine).
missing=()
for p in slurm-wlm munge; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "slurm: installing ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  timeout 90 apt-get update -qq || true
  timeout 150 apt-get install -y -qq --no-install-recommends "${missing[@]}" >"$WORK/apt.log" 2>&1 ||
    { tail -n 20 "$WORK/apt.log"; }
fi
check "slurm-wlm and munge are installed" \
  sh -c '{ command -v slurmctld && command -v slurmd && command -v sbatch && command -v munged; } >/dev/null'
if ! command -v munged >/dev/null || ! command -v slurmctld >/dev/null; then
  finish slurm || true
  exit 1
fi

# The launcher's own logic, without a cluster (--dry-run prints the command it would run).
dry() { TOKSTORM_BIN="$TOKSTORM" bash "$SRC/jobs/tokstorm.sbatch" --dry-run "$@" 2>&1; }
check "sbatch script: default results file named by job id, in the submit directory" \
  sh -c "SLURM_JOB_ID=41 SLURM_SUBMIT_DIR=/sub TOKSTORM_BIN='$TOKSTORM' bash '$SRC/jobs/tokstorm.sbatch' \
    --dry-run --launcher srun --url http://h:1 | grep -q -- ' --out /sub/tokstorm-41.h5 --url http://h:1\$'"
check "sbatch script: in a job array, named by array job id and task index" \
  sh -c "SLURM_JOB_ID=43 SLURM_ARRAY_JOB_ID=42 SLURM_ARRAY_TASK_ID=1 SLURM_SUBMIT_DIR=/sub \
    TOKSTORM_BIN='$TOKSTORM' bash '$SRC/jobs/tokstorm.sbatch' --dry-run --launcher srun --url http://h:1 |
    grep -q -- ' --out /sub/tokstorm-42_1.h5 '"
check "sbatch script: TOKSTORM_OUT_DIR moves the default results file" \
  sh -c "SLURM_JOB_ID=41 SLURM_SUBMIT_DIR=/sub TOKSTORM_OUT_DIR=/res TOKSTORM_BIN='$TOKSTORM' \
    bash '$SRC/jobs/tokstorm.sbatch' --dry-run --launcher srun --url http://h:1 |
    grep -q -- ' --out /res/tokstorm-41.h5 '"
check "sbatch script: the user's --out wins (no default added)" \
  sh -c "SLURM_JOB_ID=41 TOKSTORM_BIN='$TOKSTORM' bash '$SRC/jobs/tokstorm.sbatch' --dry-run \
    --launcher mpirun --url http://h:1 -o /x.h5 | grep -q -- 'mpirun $TOKSTORM --url http://h:1 -o /x.h5\$'"
check "sbatch script: TOKSTORM_URL, TOKSTORM_LEVELS and TOKSTORM_ARGS become options" \
  sh -c "TOKSTORM_URL=http://h:2 TOKSTORM_LEVELS=1,8 TOKSTORM_ARGS='--max-tokens 4' \
    TOKSTORM_BIN='$TOKSTORM' bash '$SRC/jobs/tokstorm.sbatch' --dry-run --launcher srun --out /o.h5 |
    grep -q -- '--url http://h:2 --levels 1,8 --max-tokens 4 --out /o.h5\$'"
dry --launcher ssh >"$WORK/dry.bad" && bad_rc=0 || bad_rc=$?
check "sbatch script: an unknown launcher is exit status 2" test "$bad_rc" -eq 2
set +e
TOKSTORM_BIN="$TOKSTORM" bash "$SRC/jobs/tokstorm.sbatch" --url http://h:1 >/dev/null 2>&1
outside_rc=$?
TOKSTORM_BIN=/nonexistent/tokstorm bash "$SRC/jobs/tokstorm.sbatch" --dry-run --url http://h:1 >/dev/null 2>&1
nobin_rc=$?
set -e
check "sbatch script: outside a Slurm job (no --dry-run) is exit status 2" test "$outside_rc" -eq 2
check "sbatch script: a missing TOKSTORM_BIN is exit status 2" test "$nobin_rc" -eq 2

# This test's own Slurm. munged insists that everyone can reach its socket's directory.
mkdir -p "$SL"/{munge,state,spool,log,jobs,results,tmp}
chmod 755 "$WORK" "$SL" "$SL/munge"
read -r CTLD_PORT SLURMD_PORT < <($PY -c '
import socket
ss = [socket.socket() for _ in range(2)]
for s in ss:
    s.bind(("127.0.0.1", 0))
print(*[s.getsockname()[1] for s in ss])')
CPUS=$(nproc)
[ "$CPUS" -ge 4 ] || CPUS=4
# Job ids far from those of any other Slurm here: Slurm's PMIx plugin names a step's
# namespace and client directory after the job id alone (slurm.pmix.<job>.<step>), so two
# clusters running the same job id at once on one machine would mix up their ranks.
FIRST_JOB_ID=$((10000000 + (RANDOM * 32768 + RANDOM) % 50000000))
cat >"$CONF" <<EOF
# Written by tests/test_slurm.sh: one node on loopback, nothing shared with a system Slurm.
ClusterName=tokstormtest
SlurmctldHost=$NODE(127.0.0.1)
SlurmctldPort=$CTLD_PORT
SlurmdPort=$SLURMD_PORT
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$SOCK
StateSaveLocation=$SL/state
SlurmdSpoolDir=$SL/spool
SlurmctldPidFile=$SL/slurmctld.pid
SlurmdPidFile=$SL/slurmd.pid
SlurmctldLogFile=$SL/log/slurmctld.log
SlurmdLogFile=$SL/log/slurmd.log
SlurmctldDebug=info
SlurmdDebug=info
MailProg=/bin/true
# No cgroups: they may be missing or read-only in a VM or container.
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
# No slurmdbd (so no sacct): finished jobs are kept in slurmctld for MinJobAge and logged.
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/filetxt
JobCompLoc=$SL/log/jobcomp.txt
MinJobAge=600
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
MpiDefault=none
TmpFS=$SL/tmp
FirstJobId=$FIRST_JOB_ID
ReturnToService=2
# At least 4 CPUs whatever the machine has (config_overrides: slurmd takes the node as
# configured), so that 4 tasks fit on one node: Slurm refuses a --ntasks-per-node above a
# node's CPUs, even with --overcommit.
SlurmdParameters=config_overrides
NodeName=$NODE NodeAddr=127.0.0.1 CPUs=$CPUS State=UNKNOWN
PartitionName=test Nodes=$NODE Default=YES MaxTime=10 State=UP OverSubscribe=FORCE:4
EOF
export SLURM_CONF="$CONF"
mungekey --create --keyfile="$SL/munge/munge.key" >/dev/null 2>&1 ||
  { dd if=/dev/urandom of="$SL/munge/munge.key" bs=1024 count=1 2>/dev/null && chmod 600 "$SL/munge/munge.key"; }

start_daemon munged munged -F --socket="$SOCK" --key-file="$SL/munge/munge.key" \
  --pid-file="$SL/munged.pid" --seed-file="$SL/munge/munged.seed" --num-threads=4
munge_ok() { munge -n -S "$SOCK" | unmunge -S "$SOCK"; }
check "munged answers on the test's own socket" wait_for 10 munge_ok
start_daemon slurmctld slurmctld -D -f "$CONF"
check "slurmctld is up on port $CTLD_PORT" wait_for 20 sh -c 'timeout 5 scontrol ping | grep -q UP'
start_daemon slurmd slurmd -D -N "$NODE" -f "$CONF"
node_idle() { [ "$(timeout 5 sinfo -h -n "$NODE" -o %T)" = idle ]; }
check "slurmd registers node $NODE, idle" wait_for 30 node_idle
if ! node_idle; then
  show_logs
  finish slurm || true
  exit 1
fi
MPI_LIST=$(timeout 10 srun --mpi=list 2>&1 || true)
while read -r line; do echo "  srun --mpi=list: $line"; done <<<"$MPI_LIST"
mpi_has_pmix() { grep -qw pmix <<<"$MPI_LIST"; }
check "srun --mpi=list offers pmix" mpi_has_pmix

# The jobs' own temporary files (Open MPI's session directories) in the test's directory too.
export TMPDIR="$SL/tmp"
start_mock mock-a --ttft 20ms --step 5ms --max-batch 64
URL_A=$MOCK_URL
start_mock mock-b --ttft 40ms --step 5ms --max-batch 2
URL_B=$MOCK_URL

# submit NAME CMD...: runs CMD (sbatch ...) in $SL/jobs, the submit directory, bounded in
# time; sets JOB_ID (from --parsable) and JOB_RC. It runs in the background so that a signal
# to the test is handled at once (bash runs a trap only after a foreground command ends).
submit() {
  local name=$1
  shift
  (cd "$SL/jobs" && exec timeout 150 "$@") >"$SL/$name.sbatch.out" 2>"$SL/$name.sbatch.err" &
  wait $! && JOB_RC=0 || JOB_RC=$?
  JOB_ID=$(head -n 1 "$SL/$name.sbatch.out" | cut -d';' -f1)
  echo "  $name: job ${JOB_ID:-?}, sbatch exit status $JOB_RC"
  [ "$JOB_RC" -eq 0 ] || cat "$SL/$name.sbatch.err" || true
}
job_field() { # job_field ID FIELD: FIELD of the job as slurmctld holds it
  timeout 10 scontrol -o show job "$1" | tr ' ' '\n' | sed -n "s/^$2=//p" | head -n 1
}
job_is() { # job_is ID STATE EXIT_CODE: slurmctld and the completion log agree
  [ "$(job_field "$1" JobState)" = "$2" ] && [ "$(job_field "$1" ExitCode)" = "$3" ] &&
    grep -E "^JobId=$1 .*JobState=$2 .* ExitCode=$3( |\$)" "$SL/log/jobcomp.txt" >/dev/null
}
# check_results NAME FILE JOB_ID JOB_NAME RANKS LEVELS URL: the results file read back.
check_results() {
  local name=$1
  $PY - "$@" "$NODE" "$HOST" <<'PYEOF' >"$WORK/$name.checks"
import sys, h5py
name, path, job_id, job_name, ranks, levels, url, node, host = sys.argv[1:]
ranks, levels, rps, max_tokens = int(ranks), [int(c) for c in levels.split(",")], 2, 8
def check(what, cond):
    print(("ok   " if cond else "FAIL ") + f"{name}: {what}")
def text(v):
    return v.decode() if isinstance(v, bytes) else str(v)
try:
    f = h5py.File(path, "r")
except OSError as e:
    check(f"results file {path} opens ({e})", False)
    sys.exit()
a = f.attrs
check(f"root attrs: {ranks} ranks, levels {levels}, url {url}",
      a["ranks"] == ranks and list(a["levels"]) == levels and text(a["url"]).rstrip("/") == url)
got = {k: text(a[k]) if k in a else None
       for k in ("slurm_job_id", "slurm_job_name", "slurm_nodelist", "slurm_tasks_per_node")}
check(f"root attrs record the Slurm job: {got}",
      got == dict(slurm_job_id=job_id, slurm_job_name=job_name, slurm_nodelist=node,
                  slurm_tasks_per_node=str(ranks)))
rk = f["ranks"][:]
check("/ranks: every rank, on this host",
      sorted(rk["rank"]) == list(range(ranks)) and all(text(h) == host for h in rk["host"]))
for c in levels:
    g = f.get(f"level_{c}")
    if g is None:
        check(f"C={c}: level present", False)
        continue
    r = g["requests"][:]
    check(f"C={c}: Ok = {c * rps}, no errors, {c * rps * max_tokens} tokens",
          g.attrs["ok"] == c * rps and g.attrs["err"] == 0 and len(r) == c * rps
          and (r["error_class"] == 0).all() and g.attrs["output_tokens"] == c * rps * max_tokens)
PYEOF
  while read -r status what; do
    check "$what" test "$status" = ok
  done <"$WORK/$name.checks"
  check "$name: results read back" test -s "$WORK/$name.checks"
}
SWEEP=(--model mock --levels "1,4,8" --max-tokens 8 --requests-per-stream 2)

# 1. srun --mpi=pmix, 4 tasks on the node, the script's defaults: results and output in the
# submit directory, named by job id; the URL from the environment.
submit srun env TOKSTORM_LAUNCHER=srun TOKSTORM_BIN="$TOKSTORM" TOKSTORM_URL="$URL_A" \
  sbatch --parsable --wait --nodes=1 --ntasks-per-node=4 --time=3 \
  "$SRC/jobs/tokstorm.sbatch" "${SWEEP[@]}"
ID1=$JOB_ID
OUT1="$SL/jobs/tokstorm-$ID1.out"
check "srun job: sbatch --wait exits 0" test "$JOB_RC" -eq 0
check "srun job: COMPLETED, ExitCode 0:0 (scontrol, completion log)" wait_for 10 job_is "$ID1" COMPLETED 0:0
check "srun job: output file tokstorm-<job id>.out in the submit directory" test -s "$OUT1"
echo "--- the srun job's output file:"
cat "$OUT1" 2>/dev/null || true
echo "--- end of the srun job's output file"
check "srun job: it printed the srun --mpi=pmix command" \
  grep -q "^tokstorm.sbatch: OMPI_MCA_mpi_yield_when_idle=1 srun --mpi=pmix $TOKSTORM --out $SL/jobs/tokstorm-$ID1.h5 --url $URL_A " "$OUT1"
check "srun job: the job's exit status printed last" sh -c "tail -n 1 '$OUT1' | grep -qx 'tokstorm.sbatch: exit status 0'"
[ "$JOB_RC" -eq 0 ] || { cat "$OUT1" || true; show_logs; }
check_results srun "$SL/jobs/tokstorm-$ID1.h5" "$ID1" tokstorm 4 1,4,8 "$URL_A"

# 2. mpirun inside the allocation; --out and the job name given; tokstorm found from the
# checkout the script was submitted from, when the build is the checkout's own build/.
bin_env=(TOKSTORM_BIN="$TOKSTORM")
[ "$BUILD" != "$SRC/build" ] || bin_env=()
submit mpirun env TOKSTORM_LAUNCHER=mpirun "${bin_env[@]}" \
  sbatch --parsable --wait --job-name=ts-mpirun --nodes=1 --ntasks-per-node=4 \
  --time=3 --output="$SL/jobs/mpirun-%j.out" \
  "$SRC/jobs/tokstorm.sbatch" --url "$URL_A" "${SWEEP[@]}" --out "$SL/results/mpirun.h5"
ID2=$JOB_ID
OUT2="$SL/jobs/mpirun-$ID2.out"
check "mpirun job: sbatch --wait exits 0" test "$JOB_RC" -eq 0
check "mpirun job: COMPLETED, ExitCode 0:0 (scontrol, completion log)" wait_for 10 job_is "$ID2" COMPLETED 0:0
check "mpirun job: it printed the mpirun command, with the user's --out only" \
  grep -q "^tokstorm.sbatch: OMPI_MCA_mpi_yield_when_idle=1 OMPI_MCA_odls_base_sigkill_timeout=10 mpirun $TOKSTORM --url $URL_A .* --out $SL/results/mpirun.h5\$" "$OUT2"
[ "$JOB_RC" -eq 0 ] || { cat "$OUT2" || true; show_logs; }
check_results mpirun "$SL/results/mpirun.h5" "$ID2" ts-mpirun 4 1,4,8 "$URL_A"

# 3. No server: tokstorm's preflight fails with status 3, which must be the job's.
DEAD="http://127.0.0.1:$(closed_port)"
submit dead env TOKSTORM_BIN="$TOKSTORM" \
  sbatch --parsable --wait --nodes=1 --ntasks-per-node=2 --time=2 \
  "$SRC/jobs/tokstorm.sbatch" --url "$DEAD" --levels 1
check "no-server job: sbatch --wait exits 3, tokstorm's status" test "$JOB_RC" -eq 3
check "no-server job: FAILED, ExitCode 3:0 (scontrol, completion log)" wait_for 10 job_is "$JOB_ID" FAILED 3:0
check "no-server job: the exit status is printed last" \
  sh -c "tail -n 1 '$SL/jobs/tokstorm-$JOB_ID.out' | grep -qx 'tokstorm.sbatch: exit status 3'"
check "no-server job: no results file" test ! -e "$SL/jobs/tokstorm-$JOB_ID.h5"

# 4. A job array over two server configurations, as jobs/README.md shows it: one
# configuration per task, results named by array job id and task index.
cat >"$SL/jobs/sweep-array.sbatch" <<EOF
#!/bin/bash
#SBATCH --array=0-1
#SBATCH --nodes=1
#SBATCH --ntasks-per-node=2
#SBATCH --time=3
#SBATCH --output=sweep-%A_%a.out
urls=($URL_A $URL_B)
export TOKSTORM_URL=\${urls[\$SLURM_ARRAY_TASK_ID]}
exec bash "$SRC/jobs/tokstorm.sbatch" ${SWEEP[*]}
EOF
submit array env TOKSTORM_BIN="$TOKSTORM" sbatch --parsable --wait "$SL/jobs/sweep-array.sbatch"
ARR=$JOB_ID
check "array job: sbatch --wait exits 0" test "$JOB_RC" -eq 0
for i in 0 1; do
  tid=$(timeout 10 scontrol -o show job "${ARR}_$i" | tr ' ' '\n' | sed -n 's/^JobId=//p')
  check "array task $i: COMPLETED, ExitCode 0:0" wait_for 10 job_is "${tid:-none}" COMPLETED 0:0
  url=$URL_A
  [ "$i" -eq 0 ] || url=$URL_B
  [ "$JOB_RC" -eq 0 ] || cat "$SL/jobs/sweep-${ARR}_$i.out" || true
  check_results "array-$i" "$SL/jobs/tokstorm-${ARR}_$i.h5" "${tid:-none}" sweep-array.sbatch 2 1,4,8 "$url"
done

# 5. A server job, then the benchmark job after it (--dependency=after:): the server job
# writes its URL to a file once it listens, the benchmark waits for the file and for the
# server to answer (--url-file, --wait-server), then runs; a third job (afterany: the
# benchmark) cancels the server job.
cat >"$SL/jobs/server.sbatch" <<EOF
#!/bin/bash
#SBATCH --ntasks=1
#SBATCH --time=3
#SBATCH --output=server-%j.out
sleep 2 # a server that takes a moment to come up
"$MOCK" --host 127.0.0.1 --port 0 --port-file "$SL/jobs/server-\$SLURM_JOB_ID.port" --exit-after 120 &
for _ in \$(seq 100); do [ -s "$SL/jobs/server-\$SLURM_JOB_ID.port" ] && break; sleep 0.1; done
echo "http://127.0.0.1:\$(cat "$SL/jobs/server-\$SLURM_JOB_ID.port")" >"$SL/jobs/server-\$SLURM_JOB_ID.url"
wait
EOF
submit server sbatch --parsable "$SL/jobs/server.sbatch"
SRV=$JOB_ID
submit bench env TOKSTORM_BIN="$TOKSTORM" \
  sbatch --parsable --wait --dependency="after:$SRV" --nodes=1 --ntasks-per-node=2 \
  --time=3 "$SRC/jobs/tokstorm.sbatch" --url-file "$SL/jobs/server-$SRV.url" --wait-server 60s \
  "${SWEEP[@]}"
BENCH=$JOB_ID
check "dependency: the benchmark job exits 0" test "$JOB_RC" -eq 0
check "dependency: benchmark COMPLETED, ExitCode 0:0" wait_for 10 job_is "$BENCH" COMPLETED 0:0
started_after() { [[ ! "$(job_field "$1" StartTime)" < "$(job_field "$2" StartTime)" ]]; }
check "dependency: the benchmark started after the server job" started_after "$BENCH" "$SRV"
SRV_URL=$(cat "$SL/jobs/server-$SRV.url" 2>/dev/null || echo none)
[ "$JOB_RC" -eq 0 ] || cat "$SL/jobs/tokstorm-$BENCH.out" || true
check_results bench "$SL/jobs/tokstorm-$BENCH.h5" "$BENCH" tokstorm 2 1,4,8 "$SRV_URL"
check "dependency: the server job was still running" test "$(job_field "$SRV" JobState)" = RUNNING
# As jobs/README.md has it: a job that runs once the benchmark has ended cancels the server.
submit stop sbatch --parsable --dependency="afterany:$BENCH" --ntasks=1 --time=1 \
  --output=/dev/null --wrap "scancel $SRV"
server_cancelled() { [ "$(job_field "$SRV" JobState)" = CANCELLED ]; }
check "dependency: an afterany: job cancels the server job" wait_for 30 server_cancelled

[ "$FAILED" -eq 0 ] || show_logs
slurm_stop
mapfile -t left < <(our_pids)
check "stopped: daemons ended by their pids, no job step or rank left behind" \
  test "$STRAGGLERS" -eq 0 -a ${#left[@]} -eq 0
finish slurm
