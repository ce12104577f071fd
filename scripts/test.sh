#!/usr/bin/env bash
# Installs, builds and runs the whole test suite (unit and end-to-end).
# Real datasets are looked up in $DIRECTGNN_DATA or ../shared/datasets; tests that need
# them are skipped, with a message, when they are absent.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/build.sh
cmake --build build --parallel "$(nproc)"  # the tests and benchmarks too
ctest --test-dir build --output-on-failure --timeout 1500 -j "$(nproc)"
