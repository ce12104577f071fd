#!/usr/bin/env bash
# One device call on the GPU machine: build what the named stages need against that machine's
# own pip torch, run them, and leave under $OUT a summary, the logs and the stages' JSON.
#   here:    bench/gpu/prepare.sh
#   device:  run(command="bench/gpu/run.sh tests", carry=[".deps/gpu"])
# Stages (issue 13, part 2, in this order; each planned as one call of its own, because every
# call starts a bare machine and rebuilds):
#   tests   all unit tests (a GPU or dataset test that skips fails the stage), the kernel tests
#           once under compute-sanitizer memcheck, then the end-to-end tests
#   gather  bench gather: float32/float16 tables of GATHER_TABLE_GIB (4) GiB, then capped
#           GPU threads (GATHER_MAX_THREADS) against uncapped for 400 and 2408 B rows
#   train   bench train --modes conventional,zero-copy,all-in-gpu --samplers cpu,gpu on TRAIN_SYNTHETIC (10M nodes, degree
#           15, 128-d float32), TRAIN_EPOCHS (1) epoch per mode
#   scale   bench train on an in-memory R-MAT graph SCALE_RMAT (papers100M-sized, float16),
#           one epoch of zero-copy with the GPU sampler
#   nccl    the NCCL group-of-one test, then Cora over seeds 0-2: two ranks sharing the GPU
#           (--dist-backend auto) against one CPU process
#   pyg     (issue 15) PyG's GraphSAGE 3x256 on the 100k graph through directgnn.pyg: rows read
#           in place from pinned memory (aligned zero-copy) against PyG's default feature path
#           (rows gathered on the CPU, then batch.to(device)), same sampler; and PyG's own
#           NeighborLoader where pyg-lib or torch-sparse is installed
# Files under $OUT (at most 8 come back): summary.txt, logs.tar.gz, and the stages' JSON/HTML.
# BUDGET_S (default 560) is the call's time: every step runs under `timeout` with what is left,
# so the summary and the logs are always written.
set -uo pipefail
cd "$(dirname "$0")/../.."
root=$PWD
OUT=${OUT:-$root/build-gpu/out}
deps=$root/.deps/gpu
logs=$root/build-gpu/logs
summary=$OUT/summary.txt
budget=${BUDGET_S:-560}
t0=$(date +%s)
mkdir -p "$OUT" "$logs"
: >"$summary"
say() { echo "$*" | tee -a "$summary"; }
pack() { tar -C "$logs" -czf "$OUT/logs.tar.gz" . 2>/dev/null; }
trap pack EXIT

# step NAME LOG COMMAND...: runs COMMAND with its output in LOG, under what is left of the
# budget (20 s kept for packing); says its exit status and time.
step() {
  local name=$1 log=$logs/$2 left start rc
  shift 2
  left=$((budget - ($(date +%s) - t0) - 20))
  if ((left < 10)); then
    say "$name: not run, the call's time is used up"
    return 124
  fi
  start=$(date +%s)
  timeout -k 10 "$left" "$@" >>"$log" 2>&1
  rc=$?
  say "$name: exit $rc in $(($(date +%s) - start)) s$( ((rc == 124)) && echo ' (timed out)')"
  return $rc
}

stages=("$@")
((${#stages[@]} > 0)) || { say "usage: bench/gpu/run.sh tests|gather|train|scale|nccl|pyg ..."; exit 2; }
[ -d "$deps/googletest" ] && [ -f "$deps/datasets/cora.npz" ] ||
  { say "error: $deps is incomplete: run bench/gpu/prepare.sh here and carry .deps/gpu"; exit 2; }
export DIRECTGNN_DATA=$deps/datasets
say "stages: ${stages[*]}; budget ${budget} s"
nvidia-smi --query-gpu=name,memory.total,driver_version,pcie.link.gen.current,pcie.link.width.current \
  --format=csv,noheader 2>&1 | sed 's/^/gpu: /' | tee -a "$summary"
say "cpu cores: $(nproc); memory: $(awk '/MemTotal/ {printf "%.0f GiB", $2 / 1048576}' /proc/meminfo)"
say "torch: $(python3 -c 'import torch; print(torch.__version__, "CUDA", torch.version.cuda)' 2>&1)"

# --- build: only the targets the stages need -------------------------------------------------
targets=(directgnn)
for s in "${stages[@]}"; do
  case $s in
    tests) targets+=(directgnn_tests directgnn_e2e_tests directgnn_ops) ;;
    pyg) targets+=(directgnn_ops) ;;
    nccl) targets+=(directgnn_tests) ;;
    gather | train | scale) ;;
    *) say "error: unknown stage '$s' (tests, gather, train, scale, nccl, pyg)"; exit 2 ;;
  esac
done
nvcc=$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)
zlib_args=()
if [ ! -f /usr/include/zlib.h ]; then
  libz=$(ls /usr/lib/x86_64-linux-gnu/libz.so* /lib/x86_64-linux-gnu/libz.so* 2>/dev/null | head -1)
  zlib_args=(-DZLIB_INCLUDE_DIR="$deps/zlib/include" -DZLIB_LIBRARY="$libz")
fi
# Hopper only (sm_90): DIRECTGNN_CUDA_ARCHITECTURES sets both TORCH_CUDA_ARCH_LIST and the
# kernels target's CUDA_ARCHITECTURES (cmake/dependencies.cmake).
step configure build.log cmake -S . -B build-gpu -G Ninja -DCMAKE_BUILD_TYPE=Release \
  -DDIRECTGNN_CUDA=ON -DCMAKE_CUDA_COMPILER="$nvcc" -DDIRECTGNN_CUDA_ARCHITECTURES=90 \
  -DDIRECTGNN_PYTHON="$(command -v python3)" -DCMAKE_INCLUDE_PATH="$deps/include" \
  -DDIRECTGNN_GTEST_SOURCE="$deps/googletest" -DBUILD_BENCHMARKS=OFF "${zlib_args[@]}" &&
  step build build.log cmake --build build-gpu -j "$(nproc)" --target "${targets[@]}"
status=$?
if ((status != 0)); then
  grep -E "error|Error" "$logs/build.log" | head -30 | tee -a "$summary"
  exit $status
fi
grep -E "directgnn: CUDA kernels" "$logs/build.log" | tee -a "$summary"
build-gpu/directgnn info --build 2>&1 | tee -a "$summary"
dgnn=build-gpu/directgnn
failed=0

stage_tests() {
  step "unit tests" unit.log build-gpu/tests/directgnn_tests || failed=1
  tail -4 "$logs/unit.log" | tee -a "$summary"
  grep -E "^\[  FAILED  \]" "$logs/unit.log" | head -20 | tee -a "$summary"
  python3 bench/gpu/check.py skips "$logs/unit.log" | tail -20 | tee -a "$summary"
  ((PIPESTATUS[0] == 0)) || failed=1
  # The kernels once under memcheck: gather (every method, every dtype), sampler, dropout,
  # and the stream handoff.
  local sanitizer
  sanitizer=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
  step "compute-sanitizer memcheck" memcheck.log "$sanitizer" --tool memcheck --error-exitcode 1 \
    build-gpu/tests/directgnn_tests --gtest_brief=1 --gtest_filter='GpuGather.FloatTablesOfEveryDtype/*:GpuGather.EmptyAndOutOfRangeIds/*:GpuGatherRules.*:GpuSampler.*:GpuDropout.*:GpuPipeline.*' ||
    failed=1
  grep -E "ERROR SUMMARY|Invalid|^\[  (PASSED|FAILED) " "$logs/memcheck.log" | head -10 | tee -a "$summary"
  step "end-to-end tests" e2e.log build-gpu/tests/directgnn_e2e_tests || failed=1
  tail -4 "$logs/e2e.log" | tee -a "$summary"
  grep -E "^\[  FAILED  \]" "$logs/e2e.log" | head -20 | tee -a "$summary"
  python3 bench/gpu/check.py skips "$logs/e2e.log" | tail -20 | tee -a "$summary"
  ((PIPESTATUS[0] == 0)) || failed=1
  # The Python package on the GPU: unified tensors, pinning, the GPU sampler and loader.
  step "python tests" python.log env PYTHONPATH=build-gpu/python python3 -m pytest -q -rs \
    -p no:cacheprovider python/tests || failed=1
  tail -4 "$logs/python.log" | tee -a "$summary"
  python3 bench/gpu/check.py skips "$logs/python.log" | tail -20 | tee -a "$summary"
  ((PIPESTATUS[0] == 0)) || failed=1
}

stage_gather() {
  step "gather model" gather.log $dgnn bench gather --model
  step "bench gather" gather.log $dgnn bench gather --table-gib "${GATHER_TABLE_GIB:-4}" \
    --json "$OUT/gather.json" || failed=1
  step "bench gather, capped threads" gather.log $dgnn bench gather \
    --table-gib "${GATHER_TABLE_GIB:-4}" --row-bytes 400,2408 --ids 1000000 --dtype float32 \
    --max-threads "${GATHER_MAX_THREADS:-16384}" --json "$OUT/gather-capped.json" || failed=1
  cat "$logs/gather.log" >>"$summary"
}

# The training comparison: a papers100M-shaped graph (average degree 15, 128-d features, 5%
# training seeds), GraphSAGE 3x256, fan-out 15,10,5, batch 1024, every GPU mode in one process
# (not `all`, which adds the CPU path: a CPU epoch of this graph would take most of the call).
stage_train() {
  step "bench train (modes)" train.log $dgnn bench train --synthetic "${TRAIN_SYNTHETIC:-10000000,15,128}" \
    --train-fraction "${TRAIN_FRACTION:-0.05}" --layers 3 --hidden 256 --fan-out 15,10,5 \
    --batch-size 1024 --epochs "${TRAIN_EPOCHS:-1}" --prefetch 2 --modes conventional,zero-copy,all-in-gpu --samplers cpu,gpu \
    --no-eval --json "$OUT/train.json" --html "$OUT/train.html" || failed=1
  grep -E "^bench train|^dataset|^mode|^(conventional|zero-copy|all-in-gpu|cpu) " "$logs/train.log" |
    tee -a "$summary"
}

# papers100M's size: 111M nodes, ~1.6B directed edges after symmetrising, 128-d float16.
stage_scale() {
  step "bench train (scale)" scale.log $dgnn bench train --rmat "${SCALE_RMAT:-111059956,7.5,128,float16}" \
    --layers 3 --hidden 256 --fan-out 15,10,5 --batch-size 1024 --epochs 1 --prefetch 2 \
    --modes zero-copy --samplers gpu --no-eval --json "$OUT/scale.json" || failed=1
  grep -E "^bench train|^dataset|^zero-copy" "$logs/scale.log" | tee -a "$summary"
}

stage_nccl() {
  step "NCCL group of one" nccl.log build-gpu/tests/directgnn_tests --gtest_filter='DistBackends.*' || failed=1
  grep -E "^\[  (PASSED|FAILED|SKIPPED) " "$logs/nccl.log" | tee -a "$summary"
  local cora=$DIRECTGNN_DATA/cora.npz ref=() run=()
  for seed in 0 1 2; do
    step "cora seed $seed, CPU" cora.log $dgnn train --dataset "$cora" --device cpu --seed $seed \
      --metrics "$logs/cpu-$seed.jsonl" && ref+=("$logs/cpu-$seed.jsonl")
    step "cora seed $seed, 2 ranks on the GPU" cora.log $dgnn launch -n 2 -- train --dataset "$cora" \
      --dist-backend auto --seed $seed --metrics "$logs/ranks-$seed.jsonl" && run+=("$logs/ranks-$seed.jsonl")
  done
  grep -E "ranks \(|^Device" "$logs/cora.log" | sort | uniq -c | tee -a "$summary"
  python3 bench/gpu/check.py accuracy "${ref[@]}" -- "${run[@]}" 2>&1 | tee -a "$summary"
  ((PIPESTATUS[0] == 0)) || failed=1
}

stage_pyg() {
  step "pyg loaders" pyg.log env PYTHONPATH=build-gpu/python python3 bench/python/pyg_loader.py \
    --device cuda --loaders pyg host-rows directgnn --epochs "${PYG_EPOCHS:-3}" \
    --json "$OUT/pyg.json" || failed=1
  grep -E "^(pyg|host-rows|directgnn): " "$logs/pyg.log" | tee -a "$summary"
}

for s in "${stages[@]}"; do
  say "--- stage $s"
  "stage_$s"
done
say "done in $(($(date +%s) - t0)) s; $( ((failed)) && echo 'SOMETHING FAILED' || echo 'all passed')"
exit $failed
