#!/usr/bin/env bash
# Device calls on the GPU machine: build what the named stages need against that machine's own
# pip torch, run them, and leave under $OUT a summary, the logs and the stages' JSON.
#   here:    bench/gpu/prepare.sh
#   device:  run(command="bench/gpu/run.sh gather nccl", carry=[".deps/gpu"])
# The machine keeps build-gpu/ while it is warm (about 30 s after a call): make the calls back
# to back, and only the first builds (source_times.py gives unchanged files their old times, so
# the fresh copy of the tree does not rebuild everything). Calls, in priority order, each
# planned to fit one call of 10 minutes:
#   1. gather nccl   (the cold build, ~3-4 min, builds the unit tests too)
#   2. train
#   3. tests
#   4. e2e
#   5. scale
#   6. pyg
#   7. link
#   8. hetero
# Stages:
#   tests   the unit tests (a GPU or dataset test that skips fails the stage), then the kernel
#           tests under compute-sanitizer memcheck: a reduced grid of the gather oracle test
#           and the other GPU tests; a filter that matches fewer tests than it names fails
#   e2e     the end-to-end tests (the CLI as users run it), then the Python package's tests
#   gather  bench gather: float32/float16 tables of GATHER_TABLE_GIB (4) GiB at base offsets 0
#           and 64 (torch's allocations are 64-byte aligned), then capped GPU threads
#           (GATHER_MAX_THREADS) against uncapped for 400 and 2408 B rows
#   train   bench train --modes conventional,zero-copy,all-in-gpu --samplers cpu,gpu on
#           TRAIN_SYNTHETIC (10M nodes, degree 15, 128-d float32), TRAIN_EPOCHS (2) epochs per
#           mode, the first a warm-up: every mode reports its second epoch
#   scale   bench train on an in-memory R-MAT graph SCALE_RMAT (papers100M-sized, float16),
#           one epoch of zero-copy with the GPU sampler; at half the nodes when less than
#           SCALE_FULL_S (420) seconds of the call are left
#   nccl    the NCCL group-of-one test, then Cora over seeds 0-2: two ranks sharing the GPU
#           (--dist-backend auto) against one CPU process
#   pyg     (issue 15) PyG's GraphSAGE 3x256 on the 100k graph through directgnn.pyg: rows read
#           in place from pinned memory (aligned zero-copy) against PyG's default feature path
#           (rows gathered on the CPU, then batch.to(device)), same sampler; and PyG's own
#           NeighborLoader where pyg-lib or torch-sparse is installed
#   link    (issue 31) the GPU link sampler against its CPU twin; Cora's link recipe with the
#           GPU sampler over seeds 0-2 (mean test ROC-AUC); 2 x LINK_STEPS (100) link steps on
#           an R-MAT graph of LINK_SCALE (22) with aligned zero-copy rows, CPU sampler against
#           GPU sampler, the second epoch reported
#   hetero  (issue 32) the heterogeneous model on the GPU against the CPU; RGCN on the mag
#           generator (HETERO_SCALE 0.05) over seeds 0-2 on the GPU against the CPU (mean test
#           accuracy), then with learnable embeddings; link prediction on author,writes,paper
#           on the GPU against the CPU (same seed: test ROC-AUC); one epoch at ogbn-mag's size
#           (mag:1) with 128-d embeddings on the GPU
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
mkdir -p "$OUT"
rm -rf "$logs" && mkdir -p "$logs"
: >"$summary"
say() { echo "$*" | tee -a "$summary"; }
pack() { tar -C "$logs" -czf "$OUT/logs.tar.gz" . 2>/dev/null; }
trap pack EXIT

left_s() { echo $((budget - ($(date +%s) - t0))); }

# step NAME LOG COMMAND...: runs COMMAND with its output in LOG, under what is left of the
# budget (20 s kept for packing); says its exit status and time.
step() {
  local name=$1 log=$logs/$2 left start rc
  shift 2
  left=$(($(left_s) - 20))
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

# tool NAME: the path of a CUDA tool, or nothing where this machine lacks it.
tool() { command -v "$1" || { [ -x "/usr/local/cuda/bin/$1" ] && echo "/usr/local/cuda/bin/$1"; }; }

stages=("$@")
((${#stages[@]} > 0)) || { say "usage: bench/gpu/run.sh tests|e2e|gather|train|scale|nccl|pyg|link|hetero ..."; exit 2; }
[ -d "$deps/googletest" ] && [ -f "$deps/datasets/cora.npz" ] ||
  { say "error: $deps is incomplete: run bench/gpu/prepare.sh here and carry .deps/gpu"; exit 2; }
export DIRECTGNN_DATA=$deps/datasets
say "stages: ${stages[*]}; budget ${budget} s"
nvidia-smi --query-gpu=name,memory.total,driver_version,pcie.link.gen.current,pcie.link.width.current \
  --format=csv,noheader 2>&1 | sed 's/^/gpu: /' | tee -a "$summary"
say "cpu cores: $(nproc); memory: $(awk '/MemTotal/ {printf "%.0f GiB", $2 / 1048576}' /proc/meminfo)"
say "torch: $(python3 -c 'import torch; print(torch.__version__, "CUDA", torch.version.cuda)' 2>&1)"
say "cmake: $(cmake --version | head -1); compute-sanitizer: $(tool compute-sanitizer || echo 'not available'); ncu: $(tool ncu || echo 'not available')"

# --- build: only the targets the stages need -------------------------------------------------
targets=(directgnn)

for s in "${stages[@]}"; do
  case $s in
    tests | nccl | link | hetero) targets+=(directgnn_tests) ;;
    e2e) targets+=(directgnn_e2e_tests directgnn_ops) ;;
    pyg) targets+=(directgnn_ops) ;;
    gather | train | scale) ;;
    *) say "error: unknown stage '$s' (tests, e2e, gather, train, scale, nccl, pyg, link, hetero)"; exit 2 ;;
  esac
done
nvcc=$(tool nvcc)
zlib_args=()
if [ ! -f /usr/include/zlib.h ]; then
  libz=$(ls /usr/lib/x86_64-linux-gnu/libz.so* /lib/x86_64-linux-gnu/libz.so* 2>/dev/null | head -1)
  zlib_args=(-DZLIB_INCLUDE_DIR="$deps/zlib/include" -DZLIB_LIBRARY="$libz")
fi
python3 bench/gpu/source_times.py restore build-gpu/source-times.json | tee -a "$summary"
# Hopper only (sm_90): DIRECTGNN_CUDA_ARCHITECTURES sets both TORCH_CUDA_ARCH_LIST and the
# kernels target's CUDA_ARCHITECTURES (cmake/dependencies.cmake).
step configure build.log cmake -S . -B build-gpu -G Ninja -DCMAKE_BUILD_TYPE=Release \
  -DDIRECTGNN_CUDA=ON -DCMAKE_CUDA_COMPILER="$nvcc" -DDIRECTGNN_CUDA_ARCHITECTURES=90 \
  -DDIRECTGNN_PYTHON="$(command -v python3)" -DCMAKE_INCLUDE_PATH="$deps/include" \
  -DDIRECTGNN_GTEST_SOURCE="$deps/googletest" -DBUILD_BENCHMARKS=OFF "${zlib_args[@]}" &&
  step build build.log cmake --build build-gpu -j "$(nproc)" --target "${targets[@]}"
status=$?
python3 bench/gpu/source_times.py record build-gpu/source-times.json
if ((status != 0)); then
  grep -E "error|Error" "$logs/build.log" | head -30 | tee -a "$summary"
  exit $status
fi
grep -E "directgnn: CUDA kernels|^\[[0-9]+/[0-9]+\]" "$logs/build.log" | tail -1 | tee -a "$summary"
grep -cE "^\[[0-9]+/[0-9]+\] Building" "$logs/build.log" | sed 's/^/files compiled: /' | tee -a "$summary"
build-gpu/directgnn info --build 2>&1 | tee -a "$summary"
dgnn=build-gpu/directgnn
failed=0

# gtest_count FILTER: how many tests of the unit test binary FILTER selects.
gtest_count() {
  build-gpu/tests/directgnn_tests --gtest_list_tests --gtest_filter="$1" | grep -c '^  '
}

# check_skips LOG: no test of LOG skipped for another reason than a GPU being present.
check_skips() {
  python3 bench/gpu/check.py skips "$1" | tail -20 | tee -a "$summary"
  ((PIPESTATUS[0] == 0)) || failed=1
}

# The kernels under memcheck: each pattern with the fewest tests it must match. The gather's
# oracle test runs its reduced grid there (DIRECTGNN_GATHER_TEST_GRID=small): the 2- and 4-byte
# element paths, base offsets 4, 8 and 64, of the naive, aligned and sorted aligned kernels.
memcheck_patterns=(
  "Methods/GpuGather.MatchesTheCpuOracle/pinned_zero_copy 1"
  "Methods/GpuGather.MatchesTheCpuOracle/pinned_aligned 1"
  "Methods/GpuGather.MatchesTheCpuOracle/pinned_aligned_sorted 1"
  "Methods/GpuGather.FloatTablesOfEveryDtype/* 10"
  "Methods/GpuGather.EmptyAndOutOfRangeIds/* 10"
  "GpuGatherRules.* 5"
  "GpuSampler.* 2"
  "GpuLinkSampler.* 1"
  "GpuDropout.* 1"
  "GpuPipeline.* 2"
)

stage_memcheck() {
  local sanitizer filter="" pattern want got
  sanitizer=$(tool compute-sanitizer)
  if [ -z "$sanitizer" ]; then
    say "compute-sanitizer memcheck: not available on this machine"
    return
  fi
  for entry in "${memcheck_patterns[@]}"; do
    pattern=${entry% *} want=${entry##* }
    got=$(gtest_count "$pattern")
    if ((got < want)); then
      say "memcheck filter '$pattern' matches $got test(s), expected $want: FAILED"
      failed=1
    fi
    filter+="${filter:+:}$pattern"
  done
  step "compute-sanitizer memcheck" memcheck.log env DIRECTGNN_GATHER_TEST_GRID=small \
    "$sanitizer" --tool memcheck --error-exitcode 1 build-gpu/tests/directgnn_tests \
    --gtest_brief=1 --gtest_filter="$filter" || failed=1
  grep -E "ERROR SUMMARY|Invalid|tests? from .* ran|^\[  (PASSED|FAILED) " "$logs/memcheck.log" |
    head -10 | tee -a "$summary"
  check_skips "$logs/memcheck.log"
}

stage_tests() {
  step "unit tests" unit.log build-gpu/tests/directgnn_tests || failed=1
  tail -4 "$logs/unit.log" | tee -a "$summary"
  grep -E "^\[  FAILED  \]" "$logs/unit.log" | head -20 | tee -a "$summary"
  check_skips "$logs/unit.log"
  stage_memcheck
}

stage_e2e() {
  step "end-to-end tests" e2e.log build-gpu/tests/directgnn_e2e_tests || failed=1
  tail -4 "$logs/e2e.log" | tee -a "$summary"
  grep -E "^\[  FAILED  \]" "$logs/e2e.log" | head -20 | tee -a "$summary"
  check_skips "$logs/e2e.log"
  # The Python package on the GPU: unified tensors, pinning, the GPU sampler and loader.
  step "python tests" python.log env PYTHONPATH=build-gpu/python python3 -m pytest -q -rs \
    -p no:cacheprovider python/tests || failed=1
  tail -4 "$logs/python.log" | tee -a "$summary"
  check_skips "$logs/python.log"
}

stage_gather() {
  step "gather model" gather.log $dgnn bench gather --model
  local offset
  for offset in 0 64; do
    step "bench gather, base offset $offset" gather.log $dgnn bench gather \
      --table-gib "${GATHER_TABLE_GIB:-4}" --base-offset $offset --json "$OUT/gather-$offset.json" ||
      failed=1
  done
  step "bench gather, capped threads" gather.log $dgnn bench gather \
    --table-gib "${GATHER_TABLE_GIB:-4}" --row-bytes 400,2408 --ids 1000000 --dtype float32 \
    --max-threads "${GATHER_MAX_THREADS:-16384}" --json "$OUT/gather-capped.json" || failed=1
  cat "$logs/gather.log" >>"$summary"
}

# The training comparison: a papers100M-shaped graph (average degree 15, 128-d features, 5%
# training seeds), GraphSAGE 3x256, fan-out 15,10,5, batch 1024, every GPU mode in one process
# (not `all`, which adds the CPU path: a CPU epoch of this graph would take most of the call).
# Each mode trains TRAIN_EPOCHS epochs and reports those after the first: the first pays CUDA
# module loading, cuBLAS handles, the allocator's growth and the staging buffers.
stage_train() {
  step "bench train (modes)" train.log $dgnn bench train --synthetic "${TRAIN_SYNTHETIC:-10000000,15,128}" \
    --train-fraction "${TRAIN_FRACTION:-0.05}" --layers 3 --hidden 256 --fan-out 15,10,5 \
    --batch-size 1024 --epochs "${TRAIN_EPOCHS:-2}" --warmup-epochs 1 --prefetch 2 \
    --modes conventional,zero-copy,all-in-gpu --samplers cpu,gpu \
    --no-eval --json "$OUT/train.json" --html "$OUT/train.html" || failed=1
  grep -E "^bench train|^dataset|^mode|^(conventional|zero-copy|all-in-gpu|cpu) " "$logs/train.log" |
    tee -a "$summary"
}

# papers100M's size: 111M nodes, ~1.6B directed edges after symmetrising, 128-d float16. Run
# warm (after a call that built); with too little of the call left, half the nodes.
stage_scale() {
  local rmat=${SCALE_RMAT:-111059956,7.5,128,float16}
  if (($(left_s) < ${SCALE_FULL_S:-420})); then
    rmat=${SCALE_HALF_RMAT:-55529978,7.5,128,float16}
    say "scale: $(left_s) s left, under ${SCALE_FULL_S:-420} s: half size ($rmat)"
  fi
  step "bench train (scale)" scale.log $dgnn bench train --rmat "$rmat" \
    --layers 3 --hidden 256 --fan-out 15,10,5 --batch-size 1024 --epochs 1 --prefetch 2 \
    --modes zero-copy --samplers gpu --no-eval --json "$OUT/scale.json" || failed=1
  grep -E "^bench train|^dataset|^zero-copy" "$logs/scale.log" | tee -a "$summary"
}

stage_nccl() {
  local want=2 got
  got=$(gtest_count 'DistBackends.Nccl*')
  ((got >= want)) || { say "filter DistBackends.Nccl* matches $got test(s), expected $want: FAILED"; failed=1; }
  step "NCCL group of one" nccl.log build-gpu/tests/directgnn_tests --gtest_filter='DistBackends.*' || failed=1
  grep -E "^\[  (PASSED|FAILED|SKIPPED) " "$logs/nccl.log" | tee -a "$summary"
  check_skips "$logs/nccl.log"
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

# Link prediction on the GPU. The R-MAT dataset stays in build-gpu/ while the machine is warm.
stage_link() {
  local got cora=$DIRECTGNN_DATA/cora.npz dir=build-gpu/link-rmat seed sampler
  got=$(gtest_count 'GpuLinkSampler.*')
  ((got >= 1)) || { say "filter GpuLinkSampler.* matches $got tests, expected 1: FAILED"; failed=1; }
  step "link sampler and loader tests" link-unit.log build-gpu/tests/directgnn_tests \
    --gtest_filter='GpuLinkSampler.*:LinkSampler.*:LinkLoader.*' || failed=1
  grep -E "^\[  (PASSED|FAILED|SKIPPED) " "$logs/link-unit.log" | tee -a "$summary"
  check_skips "$logs/link-unit.log"
  for seed in 0 1 2; do
    step "cora link seed $seed, GPU sampler" link-cora.log $dgnn train --task link --dataset "$cora" \
      --device cuda --sampler gpu --seed $seed --decoder mlp --epochs 100 --eval-every 5 \
      --fan-out 10,10 --batch-size 256 --metrics "$logs/link-cora-$seed.jsonl" || failed=1
  done
  python3 bench/gpu/check.py link "$logs"/link-cora-*.jsonl 2>&1 | tee -a "$summary"
  if [ ! -d "$dir" ]; then
    step "generate r-mat for link" link-gen.log $dgnn generate rmat --scale "${LINK_SCALE:-22}" \
      --edge-factor 8 --feat-dim 128 --out "$dir.src" &&
      step "link split" link-gen.log $dgnn convert "$dir.src" "$dir" --link-split 0.85,0.05,0.1 ||
      { failed=1; return; }
  fi
  for sampler in cpu gpu; do
    step "link steps, $sampler sampler" link-train.log $dgnn train --task link --dataset "$dir" \
      --device cuda --sampler $sampler --layers 3 --hidden 256 --fan-out 15,10,5 --batch-size 1024 \
      --epochs 2 --steps-per-epoch "${LINK_STEPS:-100}" --no-eval --prefetch 2 \
      --metrics "$OUT/link-$sampler.jsonl" || failed=1
  done
  grep -E "^(Epoch|Average|Features)" "$logs/link-train.log" | tee -a "$summary"
}

# Heterogeneous training on the GPU (the conventional path: CPU-made batches copied over).
stage_hetero() {
  local seed scale=mag:${HETERO_SCALE:-0.05} ref=() run=() emb=()
  step "hetero model tests" hetero-unit.log build-gpu/tests/directgnn_tests \
    --gtest_filter='HeteroModel*:All/HeteroModel*:HeteroSampler*:HeteroLink*:EmbeddingTable*' ||
    failed=1
  grep -E "^\[  (PASSED|FAILED|SKIPPED) " "$logs/hetero-unit.log" | tee -a "$summary"
  check_skips "$logs/hetero-unit.log"
  for seed in 0 1 2; do
    step "$scale rgcn seed $seed, CPU" hetero.log $dgnn train --dataset "$scale" --device cpu \
      --seed $seed --epochs 10 --hidden 64 --metrics "$logs/hetero-cpu-$seed.jsonl" &&
      ref+=("$logs/hetero-cpu-$seed.jsonl")
    step "$scale rgcn seed $seed, GPU" hetero.log $dgnn train --dataset "$scale" --device cuda \
      --seed $seed --epochs 10 --hidden 64 --metrics "$logs/hetero-gpu-$seed.jsonl" &&
      run+=("$logs/hetero-gpu-$seed.jsonl")
    step "$scale rgcn seed $seed, GPU, embeddings" hetero.log $dgnn train --dataset "$scale" \
      --device cuda --seed $seed --epochs 10 --hidden 64 --node-embeddings 64 \
      --metrics "$logs/hetero-emb-$seed.jsonl" && emb+=("$logs/hetero-emb-$seed.jsonl")
  done
  python3 bench/gpu/check.py accuracy "${ref[@]}" -- "${run[@]}" 2>&1 | tee -a "$summary"
  ((PIPESTATUS[0] == 0)) || failed=1
  python3 bench/gpu/check.py accuracy "${ref[@]}" -- "${emb[@]}" 2>&1 | tee -a "$summary"
  local device
  for device in cpu cuda; do
    step "$scale link author,writes,paper, $device" hetero-link.log $dgnn train --dataset "$scale" \
      --task link --target-relation author,writes,paper --device $device --epochs 3 \
      --hidden 64 --metrics "$OUT/hetero-link-$device.jsonl" || failed=1
  done
  grep -E "^best epoch" "$logs/hetero-link.log" | tee -a "$summary"
  step "mag:1 rgcn, 128-d embeddings, GPU" hetero-scale.log $dgnn train --dataset mag:1 \
    --device cuda --epochs 1 --hidden 64 --node-embeddings 128 \
    --metrics "$OUT/hetero-mag1.jsonl" || failed=1
  grep -E "^(epoch|best)" "$logs/hetero.log" "$logs/hetero-scale.log" | tail -12 | tee -a "$summary"
}

for s in "${stages[@]}"; do
  say "--- stage $s"
  "stage_$s"
done
say "done in $(($(date +%s) - t0)) s; $( ((failed)) && echo 'SOMETHING FAILED' || echo 'all passed')"
exit $failed
