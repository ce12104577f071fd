#!/usr/bin/env bash
# Builds the unit tests with AddressSanitizer and UndefinedBehaviorSanitizer (CMake preset
# `asan`, in build-asan/) and runs them. The end-to-end tests are left out: they run the
# release binary, and a sanitized training run would not fit CI's time (docs/reliability.md).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
cmake --preset asan >/dev/null
cmake --build build-asan --target directgnn_tests fuzz_replay
# Leak checking stays on; any report or undefined behaviour fails the run. Torch's collective
# flight recorder (a debugging ring buffer in c10d) is off: its entries, left at exit by the
# Gloo groups of the dist/ tests, were reported as leaks in about half the runs (torch's own
# allocations, not this project's).
TORCH_FR_BUFFER_SIZE=0 ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1 \
  build-asan/tests/directgnn_tests --gtest_brief=1
