#!/usr/bin/env bash
# jobs/multihost.sh: runs tokstorm from several client hosts with Open MPI's mpirun.
#
#   jobs/multihost.sh [options] HOSTFILE RANKS_PER_HOST TOKSTORM_ARGS...
#
#   jobs/multihost.sh --iface 10.1.0.0/16 jobs/hostfile.example 8 \
#       --url http://gpu01:30000 --model qwen --levels 1,64,512,2048 --out /shared/sweep.h5
#
# Starts RANKS_PER_HOST ranks on every host of HOSTFILE (an Open MPI hostfile, see
# jobs/hostfile.example), host by host: ranks 0 .. RANKS_PER_HOST-1 on the first host, and
# so on. Rank 0 writes the results file, so --out names a path on the first host (mpirun
# starts every rank in the current directory, or in $HOME where that does not exist: give
# an absolute path). Each rank is bound to one core: a rank is one event loop, and one rank
# per client core is the intended shape. Ranks yield the CPU while they wait inside MPI
# (mpi_yield_when_idle 1): at low concurrency most ranks have no stream and wait for the
# level to end, and by default Open MPI has them poll flat out, competing with the ranks
# that are measuring (give --mca mpi_yield_when_idle 0 to keep the polling). The script
# prints the mpirun command on stdout, then runs it; its exit status is tokstorm's (see
# README.md), or 2 for a bad command line.
#
# Options (before HOSTFILE):
#   --iface LIST       interfaces or CIDR subnets for MPI's TCP traffic, comma-separated
#                      (eth0, or 10.1.0.0/16): Open MPI's btl_tcp_if_include and
#                      oob_tcp_if_include. Give the network the client hosts share: by
#                      default Open MPI tries every interface, and an address that exists
#                      on every host but routes nowhere between them (docker0, virbr0, a
#                      second NIC) makes mpirun hang at startup.
#   --bind core|none   bind each rank to a core (default) or let the kernel place it; use
#                      none when RANKS_PER_HOST exceeds the cores of a host
#   --rsh-agent CMD    how mpirun starts its daemon on each host (default: ssh, else rsh);
#                      tests/netns-rsh stands in for ssh in tests/test_multihost.sh
#   --mca NAME VALUE   another Open MPI MCA parameter (repeatable), e.g. --mca btl tcp,self
#   --mpirun-arg ARG   another mpirun argument, verbatim (repeatable), e.g. --mpirun-arg
#                      --prefix --mpirun-arg /opt/openmpi when Open MPI is not on the hosts'
#                      default PATH, or -x LD_LIBRARY_PATH
#   --program PATH     what to start instead of this checkout's build/tokstorm (the same
#                      path must exist on every host); --program hostname shows where the
#                      ranks land before a long run
#   --dry-run          print the command, do not run it
#   -h, --help         print this help
#
# As root, mpirun refuses to start unless OMPI_ALLOW_RUN_AS_ROOT=1 and
# OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 are set in the environment: that choice is yours.
set -euo pipefail

usage() {
  sed -n '2,/^set -euo/{/^set -euo/d;s/^# \{0,1\}//;p}' "$0"
}

quote() { # quote WORD: WORD as a shell would need it typed, quoted only when it must be
  if [[ $1 =~ ^[A-Za-z0-9_./:=,@%+-]+$ ]]; then
    printf '%s' "$1"
  else
    printf "'%s'" "${1//\'/\'\\\'\'}"
  fi
}

die() { # die MESSAGE: bad command line, exit 2 as tokstorm does
  echo "multihost.sh: $1" >&2
  exit 2
}

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
program="$repo/build/tokstorm"
iface=""
bind=core
dry_run=0
yield_when_idle=1 # dropped when the user sets it: mpirun refuses a repeated --mca
# On SIGINT or SIGTERM mpirun passes SIGTERM to the ranks and kills them this many seconds
# later (Open MPI's default: 1): 10 leaves them time to end the level and write it.
sigkill_timeout=10
extra=()

while [ $# -gt 0 ]; do
  case $1 in
    --iface) [ $# -ge 2 ] || die "--iface needs a value"; iface=$2; shift 2 ;;
    --bind) [ $# -ge 2 ] || die "--bind needs core or none"; bind=$2; shift 2 ;;
    --rsh-agent) [ $# -ge 2 ] || die "--rsh-agent needs a command"
      extra+=(--mca plm_rsh_agent "$2"); shift 2 ;;
    --mca) [ $# -ge 3 ] || die "--mca needs NAME VALUE"
      [ "$2" != mpi_yield_when_idle ] || yield_when_idle=""
      [ "$2" != odls_base_sigkill_timeout ] || sigkill_timeout=""
      extra+=(--mca "$2" "$3"); shift 3 ;;
    --mpirun-arg) [ $# -ge 2 ] || die "--mpirun-arg needs a value"; extra+=("$2"); shift 2 ;;
    --program) [ $# -ge 2 ] || die "--program needs a path"; program=$2; shift 2 ;;
    --dry-run) dry_run=1; shift ;;
    -h | --help) usage; exit 0 ;;
    --) shift; break ;;
    -*) die "unknown option $1 (options go before HOSTFILE; see --help)" ;;
    *) break ;;
  esac
done
[ $# -ge 2 ] || die "usage: multihost.sh [options] HOSTFILE RANKS_PER_HOST TOKSTORM_ARGS... (see --help)"
hostfile=$1
ranks_per_host=$2
shift 2

case $bind in core | none) ;; *) die "--bind: '$bind' is not core or none" ;; esac
[[ $ranks_per_host =~ ^[1-9][0-9]*$ ]] || die "RANKS_PER_HOST: '$ranks_per_host' is not a positive integer"
[ -r "$hostfile" ] || die "HOSTFILE: cannot read '$hostfile'"
case $hostfile in /*) ;; *) hostfile="$PWD/$hostfile" ;; esac
case $program in /*) ;; */*) program="$PWD/$program" ;; esac
if [ "$dry_run" -eq 0 ] && [[ $program == */* ]] && [ ! -x "$program" ]; then
  die "no executable $program (build first: bash scripts/build.sh)"
fi

# Hosts in first-seen order, with the slots each line grants (a host listed twice gets the
# sum, as in Open MPI); a host without slots= gets its core count from mpirun.
mapfile -t hosts < <(awk '{ sub(/#.*/, "") } NF && !seen[$1]++ { print $1 }' "$hostfile")
[ ${#hosts[@]} -gt 0 ] || die "HOSTFILE: no hosts in $hostfile"
short=$(awk -v want="$ranks_per_host" '
  { sub(/#.*/, "") }
  NF { for (i = 2; i <= NF; i++) if ($i ~ /^slots=/) { split($i, kv, "="); slots[$1] += kv[2] } }
  END { for (h in slots) if (slots[h] < want) printf "%s has slots=%d; ", h, slots[h] }' "$hostfile")
[ -z "$short" ] || die "HOSTFILE: ${short}each host needs slots >= RANKS_PER_HOST ($ranks_per_host)"

np=$((${#hosts[@]} * ranks_per_host))
cmd=(mpirun --hostfile "$hostfile" -np "$np" --map-by "ppr:$ranks_per_host:node" --bind-to "$bind")
[ -z "$yield_when_idle" ] || cmd+=(--mca mpi_yield_when_idle "$yield_when_idle")
[ -z "$sigkill_timeout" ] || cmd+=(--mca odls_base_sigkill_timeout "$sigkill_timeout")
if [ -n "$iface" ]; then
  cmd+=(--mca btl_tcp_if_include "$iface" --mca oob_tcp_if_include "$iface")
fi
cmd+=("${extra[@]}" "$program" "$@")

echo "multihost.sh: ${#hosts[@]} hosts x $ranks_per_host ranks = $np ranks; rank 0 on ${hosts[0]}"
printf 'multihost.sh:'
for word in "${cmd[@]}"; do printf ' %s' "$(quote "$word")"; done
printf '\n'
[ "$dry_run" -eq 1 ] && exit 0
exec "${cmd[@]}"
