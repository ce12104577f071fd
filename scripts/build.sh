#!/usr/bin/env bash
# Installs missing packages, then configures and builds directgnn into build/ (Release).
# Extra arguments go to cmake's configure step, e.g. -DBUILD_BENCHMARKS=OFF.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release "$@"
cmake --build build --parallel "$(nproc)"
