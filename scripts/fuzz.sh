#!/usr/bin/env bash
# Builds the libFuzzer targets (CMake preset `fuzz`, clang, in build-fuzz/) and runs each for
# SECONDS (default 600) on a seed corpus made by fuzz/make_corpus.py. Findings are written to
# build-fuzz/findings/TARGET/; each run's summary line goes to build-fuzz/fuzz-summary.txt.
# Usage: scripts/fuzz.sh [SECONDS] [TARGET...]   (default: every target in fuzz/CMakeLists.txt)
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-600}
shift || true
targets=("$@")
if [ ${#targets[@]} -eq 0 ]; then
  read -ra targets < <(sed -n 's/^set(DIRECTGNN_FUZZ_TARGETS \(.*\))$/\1/p' fuzz/CMakeLists.txt)
fi

scripts/install-deps.sh
if ! command -v clang++ >/dev/null || ! ls /usr/lib/llvm-*/lib/clang/*/lib/linux/libclang_rt.fuzzer-x86_64.a \
    >/dev/null 2>&1; then
  sudo=""
  [ "$(id -u)" -eq 0 ] || sudo=sudo
  $sudo apt-get install -y --no-install-recommends clang libclang-rt-dev
fi

cmake --preset fuzz >/dev/null
cmake --build build-fuzz --target "${targets[@]/#/fuzz_}"
datasets=${DIRECTGNN_DATA:-../shared/datasets}
rm -rf build-fuzz/seeds
.venv/bin/python fuzz/make_corpus.py build-fuzz/seeds "$datasets"

for t in "${targets[@]}"; do
  mkdir -p "build-fuzz/corpus/$t" "build-fuzz/findings/$t"
  log="build-fuzz/fuzz-$t.log"
  echo "fuzz_$t: ${seconds}s"
  # Inputs up to 64 KiB; larger seeds (dataset members) are truncated, which tests truncation.
  before=$(find "build-fuzz/findings/$t" -type f | wc -l)
  status=0
  ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 \
    "build-fuzz/fuzz/fuzz_$t" -max_total_time="$seconds" -max_len=65536 -rss_limit_mb=4096 \
    -print_final_stats=1 -artifact_prefix="build-fuzz/findings/$t/" \
    "build-fuzz/corpus/$t" "build-fuzz/seeds/$t" >"$log" 2>&1 || status=$?
  runs=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$log" | grep -o '[0-9]*$' || echo "?")
  cov=$(grep -o 'cov: [0-9]*' "$log" | tail -1 || true)
  findings=$(( $(find "build-fuzz/findings/$t" -type f | wc -l) - before ))
  line="fuzz_$t: ${seconds}s, $runs executions, $cov, new findings $findings, exit $status"
  echo "$line" | tee -a build-fuzz/fuzz-summary.txt
done
