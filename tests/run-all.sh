#!/usr/bin/env bash
# The whole test suite: installs what is missing, builds with warnings as errors, runs every
# ctest test (unit tests, the mock, mpirun integration tests against tokstorm-mock), then the
# robustness checks: the fuzzer (60 s), the ASan + UBSan build's tests, and the valgrind runs.
# Every stage runs even when an earlier one failed; the script fails if any did.
# Arguments go to the first ctest (e.g. -R e2e). TOKSTORM_ROBUSTNESS=0 skips the robustness
# checks (about 5 minutes on 2 cores), for a quick local run; CI runs them all.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/deps.sh --tests
bash scripts/build.sh
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1

failed=()
summary=()
# stage NAME COMMAND...: runs one stage between labelled lines, and times it.
stage() {
  local name=$1 start status
  shift
  start=$(date +%s)
  echo
  echo "=== $name"
  if "$@"; then
    status=ok
  else
    status=FAILED
    failed+=("$name")
  fi
  summary+=("$(printf '%-46s %-6s %4d s' "$name" "$status" $(($(date +%s) - start)))")
  echo "=== $name: $status"
}

run_ctest() {
  (cd build && ctest --output-on-failure --timeout 600 "$@")
}

stage "ctest (build/)" run_ctest "$@"
if [ "${TOKSTORM_ROBUSTNESS:-1}" != 0 ]; then
  stage "fuzz: tests/fuzz/run.sh 60 (build-fuzz/)" bash tests/fuzz/run.sh 60
  stage "sanitizers: tests/sanitize.sh (build-asan/)" bash tests/sanitize.sh
  stage "valgrind: tests/valgrind.sh (build/)" bash tests/valgrind.sh build
fi

echo
echo "=== summary"
printf '%s\n' "${summary[@]}"
if [ ${#failed[@]} -gt 0 ]; then
  echo "FAILED: ${failed[*]}"
  exit 1
fi
echo "all stages passed"
