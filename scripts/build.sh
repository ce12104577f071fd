#!/usr/bin/env bash
# Installs missing packages, then configures and builds into build/ (Release) what a user runs:
# the command line (build/directgnn) and the Python package. scripts/test.sh builds the tests
# and benchmarks on top. Extra arguments go to cmake's configure step, e.g.
# -DBUILD_BENCHMARKS=OFF.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release "$@"
cmake --build build --parallel "$(nproc)" --target directgnn_app
# The Python package (build/python/directgnn: the torch ops library and its Python sources)
# becomes importable from the project's .venv: `.venv/bin/python -c "import directgnn"`.
if [ -d build/python/directgnn ] && [ -x .venv/bin/python ]; then
  site=$(.venv/bin/python -c "import sysconfig; print(sysconfig.get_paths()['purelib'])")
  echo "$(pwd)/build/python" > "$site/directgnn-build.pth"
fi
