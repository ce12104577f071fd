#!/usr/bin/env bash
# One call on the GPU machine: configure against its pip torch, build, run the GPU tests and
# the gather benchmark, and leave a summary under $OUT.
#   here:   bench/gpu/prepare.sh
#   device: run(command="bench/gpu/run.sh", carry=[".deps/gpu"])
# Files under $OUT: summary.txt, build.log, gpu-tests.log, tests.log, model.txt,
# gather.txt, gather.json, train.txt, train.json, train.html.
# TRAIN_SYNTHETIC (nodes,avg-degree,feat-dim) sizes the training comparison's graph.
# STAGES (default "tests gather train") picks what runs after the build, so a device call's
# time limit can be split over calls: the build directory stays while the machine is warm,
# and a second call rebuilds nothing.
set -uo pipefail
cd "$(dirname "$0")/../.."
OUT=${OUT:-$PWD/build-gpu/out}
mkdir -p "$OUT"
deps=$PWD/.deps/gpu
summary=$OUT/summary.txt
say() { echo "$*" | tee -a "$summary"; }
: >"$summary"

[ -d "$deps/googletest" ] || { say "error: $deps is missing: run bench/gpu/prepare.sh here and carry .deps/gpu"; exit 2; }
nvidia-smi --query-gpu=name,memory.total,driver_version,pcie.link.gen.current,pcie.link.width.current \
  --format=csv 2>&1 | tee -a "$summary"
nproc | sed 's/^/cpu cores: /' | tee -a "$summary"

say "torch: $(python3 -c 'import torch; print(torch.__version__, torch.version.cuda)')"
nvcc=$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)
zlib_args=()
if [ ! -f /usr/include/zlib.h ]; then
  libz=$(ls /usr/lib/x86_64-linux-gnu/libz.so* /lib/x86_64-linux-gnu/libz.so* 2>/dev/null | head -1)
  zlib_args=(-DZLIB_INCLUDE_DIR="$deps/zlib/include" -DZLIB_LIBRARY="$libz")
fi

start=$(date +%s)
cmake -S . -B build-gpu -G Ninja -DCMAKE_BUILD_TYPE=Release -DDIRECTGNN_CUDA=ON \
  -DCMAKE_CUDA_COMPILER="$nvcc" -DDIRECTGNN_CUDA_ARCHITECTURES=90 \
  -DDIRECTGNN_PYTHON="$(command -v python3)" -DCMAKE_INCLUDE_PATH="$deps/include" \
  -DDIRECTGNN_GTEST_SOURCE="$deps/googletest" -DBUILD_BENCHMARKS=OFF "${zlib_args[@]}" \
  >"$OUT/build.log" 2>&1 &&
  cmake --build build-gpu -j "$(nproc)" >>"$OUT/build.log" 2>&1
status=$?
say "build: exit $status in $(( $(date +%s) - start )) s"
if [ $status -ne 0 ]; then
  grep -E "error|Error" "$OUT/build.log" | head -40 | tee -a "$summary"
  exit $status
fi
grep -E "directgnn: CUDA kernels" "$OUT/build.log" | tee -a "$summary"

stages=" ${STAGES:-tests gather train} "
want() { [[ "$stages" == *" $1 "* ]]; }
export DIRECTGNN_DATA=${DIRECTGNN_DATA:-$PWD/shared/datasets}
if want tests; then
build-gpu/tests/directgnn_tests \
  --gtest_filter='*Gpu*:*Emulated*:*PcieModel*:*FeatureStore*:*DeviceSampler*:*UniformPick*' \
  >"$OUT/gpu-tests.log" 2>&1
say "gpu tests: exit $?"
grep -E "^\[  (PASSED|FAILED|SKIPPED) " "$OUT/gpu-tests.log" | head -40 | tee -a "$summary"
DIRECTGNN_DEBUG_SYNC=1 build-gpu/tests/directgnn_tests --gtest_filter='*GpuGather.EmptyAndOutOfRange*' \
  >>"$OUT/gpu-tests.log" 2>&1
say "gpu tests with DIRECTGNN_DEBUG_SYNC=1: exit $?"
build-gpu/tests/directgnn_tests --gtest_brief=1 >"$OUT/tests.log" 2>&1
say "all unit tests: exit $?"
tail -5 "$OUT/tests.log" | tee -a "$summary"
fi

if want gather; then
build-gpu/directgnn bench gather --model >"$OUT/model.txt" 2>&1
build-gpu/directgnn bench gather --table-gib "${GATHER_TABLE_GIB:-4}" --json "$OUT/gather.json" \
  2>&1 | tee "$OUT/gather.txt"
say "bench gather: exit ${PIPESTATUS[0]}"
cat "$OUT/gather.txt" >>"$summary"
fi

if want train; then
# The training comparison (issue 4): a papers100M-shaped synthetic graph (128-d features,
# average degree ~15), GraphSAGE 3x256, fan-out 15,10,5, batch 1024, every mode in one process.
build-gpu/directgnn bench train --synthetic "${TRAIN_SYNTHETIC:-10000000,15,128}" \
  --train-fraction "${TRAIN_FRACTION:-0.05}" --layers 3 --hidden 256 --fan-out 15,10,5 \
  --batch-size 1024 --epochs "${TRAIN_EPOCHS:-2}" --prefetch 2 --modes all --samplers cpu,gpu --no-eval \
  --json "$OUT/train.json" --html "$OUT/train.html" 2>&1 | tee "$OUT/train.txt"
say "bench train: exit ${PIPESTATUS[0]}"
tail -9 "$OUT/train.txt" >>"$summary"
fi
