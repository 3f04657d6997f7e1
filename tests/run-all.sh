#!/usr/bin/env bash
# The whole test suite: installs what is missing, builds with warnings as errors, runs every
# ctest test (unit tests, the mock, mpirun integration tests against tokstorm-mock).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/deps.sh --tests
bash scripts/build.sh
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
cd build
ctest --output-on-failure --timeout 600 "$@"
