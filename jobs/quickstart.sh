#!/usr/bin/env bash
# Quickstart: installs what is missing, builds, then runs a demo sweep with two MPI ranks
# against the bundled tokstorm-mock (tokstorm --demo starts it on a free loopback port and
# stops it afterwards). Extra arguments go to tokstorm, e.g. --levels 1,8,64.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/deps.sh
bash scripts/build.sh
mkdir -p results
out="results/demo-$(date -u +%Y%m%dT%H%M%SZ).h5"
# mpirun refuses to run as root unless told that it is intended; this script is the user's
# explicit choice to do so (tokstorm itself never sets these).
if [ "$(id -u)" = 0 ]; then
  export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
fi
mpirun -np 2 --oversubscribe build/tokstorm --demo --out "$out" "$@"
