#!/usr/bin/env bash
# Builds everything with AddressSanitizer and UndefinedBehaviorSanitizer into ./build-asan
# (-DTOKSTORM_SANITIZE=ON, warnings are errors) and runs the unit tests and the single-host
# integration tests there: tokstorm's ranks under mpirun and tokstorm-mock are the sanitized
# builds. Any report from any process (a memory error, undefined behaviour, a leak at exit)
# fails the run, including one from a mock that a test has already stopped.
# Usage: tests/sanitize.sh [extra ctest arguments]
#
# Every single-host integration test runs here but these. Not run: multihost and slurm (launch and topology: ranks started through an rsh agent
# or srun do not see this environment, and the code they reach is what e2e and modes reach on
# one host), analysis (the Python scripts and Chromium; its sweeps are e2e's and modes' code
# paths). mpi_gather runs: collect.c and h5out.c at 2 million rows are tokstorm's own code.
set -euo pipefail
cd "$(dirname "$0")/.."
SRC=$PWD

cmake -S . -B build-asan -DCMAKE_BUILD_TYPE=RelWithDebInfo -DTOKSTORM_WERROR=ON \
  -DTOKSTORM_SANITIZE=ON >/dev/null
cmake --build build-asan -j"$(nproc)" >/dev/null

reports=$(mktemp -d /tmp/tokstorm-asan.XXXXXX)
trap 'rm -rf "$reports"' EXIT
# Reports go to files (log_path), one per process, so that the integration tests' "stderr is
# quiet" checks still mean something and a process whose stderr no test reads (a stopped mock)
# is still heard. fast_unwind_on_malloc=0: whole allocation stacks, which the Open MPI
# suppressions in tests/lsan.supp need (see there). mpirun hands its environment to the ranks
# it starts on this host, so these reach them without -x.
export ASAN_OPTIONS="detect_leaks=1:fast_unwind_on_malloc=0:malloc_context_size=30:log_path=$reports/asan"
export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1:log_path=$reports/ubsan"
export LSAN_OPTIONS="suppressions=$SRC/tests/lsan.supp:print_suppressions=0"
# Timing checks read this to widen their bounds (the sanitized binaries run 2 to 3 times
# slower); it changes no check that is not about time.
export TOKSTORM_TEST_SLOW=1
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1

set +e
(cd build-asan && ctest --output-on-failure --timeout 600 \
  -R '^(unit_.*|mock|e2e|cli|modes|demo|saturation|ports|mpi_gather|results|fault_.*|dialects|datasets|secrets_tls|interrupt|diskfull)$' \
  "$@")
rc=$?
set -e

# A mock stopped at a test's end checks for leaks as it exits, which may be after ctest has
# returned: wait for the sanitized processes to be gone before reading the reports.
for _ in $(seq 100); do
  pgrep -f "^$SRC/build-asan/" >/dev/null || break
  sleep 0.1
done
if [ -n "$(ls -A "$reports")" ]; then
  for f in "$reports"/*; do
    echo "--- sanitizer report $(basename "$f")"
    cat "$f"
  done
  echo "sanitize: FAILED: $(ls "$reports" | wc -l) sanitizer report(s) above"
  exit 1
fi
[ "$rc" -eq 0 ] || { echo "sanitize: FAILED: ctest exit $rc"; exit 1; }
echo "sanitize: ok, no sanitizer report"
