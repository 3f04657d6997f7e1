#!/usr/bin/env bash
# Installs the Debian 12 packages tokstorm needs to build and run, skipping those already
# installed; with --tests, also what the test suite needs (network namespaces, a real Slurm,
# a headless browser for the HTML report, a TLS terminator and openssl for the HTTPS test,
# clang with libFuzzer for the fuzzer, valgrind).
# Run as root (CI and the quickstart do).
set -euo pipefail

packages=(
  build-essential cmake pkg-config
  libopenmpi-dev openmpi-bin
  libcurl4-openssl-dev libcjson-dev libjsmn-dev
  libhdf5-dev hdf5-tools
  python3 python3-h5py python3-numpy python3-matplotlib
  curl procps
)
if [ "${1:-}" = --tests ]; then
  # libFuzzer is in libclang-rt-dev, which clang only recommends. gcc's ASan and UBSan runtimes
  # (the sanitizer build) come with build-essential.
  packages+=(iproute2 slurm-wlm munge chromium stunnel4 openssl clang libclang-rt-dev valgrind)
fi

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done

if [ ${#missing[@]} -gt 0 ]; then
  echo "deps: installing ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
else
  echo "deps: all packages present"
fi
