# The stages of bench/gpu/run.sh (sourced there; lib.sh first). Each says what it ran in the
# summary and sets failed=1 on a failure; none stops the call. Caps are sized so that call A's
# stages fit its budget together (435 s less 20 kept for the summary): smoke 25, gather 135,
# train 140, gpu-tests 50, memcheck 60.

# The unit tests that need a GPU: each pattern with the fewest tests it must match. Call A runs
# them, call B the rest of the suite.
gpu_test_patterns=(
  "Methods/GpuGather.* 30"
  "GpuGatherRules.* 5"
  "GpuSampler.* 2"
  "GpuLinkSampler.* 1"
  "GpuDropout.* 1"
  "GpuPipeline.* 2"
  "GpuTraining.* 3"
  "CsrAggregate.CudaTensorsMatchTheCpu 1"
  "Attention.CudaTensorsMatchTheCpu 1"
  "HeteroModel.OnTheGpuEqualsTheCpu 1"
  "GpuTables.* 1"
  "GpuHeteroSampler.MatchesTheCpuSamplerExactly 1"
  "DistBackends.* 5"
  "GpuExchange.* 2"
)

# The kernels under memcheck, the gather's first: the oracle test runs its reduced grid there
# (DIRECTGNN_GATHER_TEST_GRID=small: the 2- and 4-byte element paths, base offsets 4, 8 and 64,
# of the naive, aligned and sorted aligned kernels).
memcheck_gather_patterns=(
  "Methods/GpuGather.MatchesTheCpuOracle/pinned_zero_copy 1"
  "Methods/GpuGather.MatchesTheCpuOracle/pinned_aligned 1"
  "Methods/GpuGather.MatchesTheCpuOracle/pinned_aligned_sorted 1"
  "Methods/GpuGather.FloatTablesOfEveryDtype/* 10"
  "Methods/GpuGather.EmptyAndOutOfRangeIds/* 10"
  "GpuGatherRules.* 5"
)
memcheck_other_patterns=(
  "GpuSampler.* 2"
  "GpuLinkSampler.* 1"
  "GpuDropout.* 1"
  "GpuPipeline.* 2"
)

# make_filter ENTRY...: sets `filter` to the patterns of "PATTERN MIN" entries joined for
# --gtest_filter; a pattern that matches fewer tests than it names fails the stage. The test
# binary lists its tests once per call.
make_filter() {
  local list=$logs/unit-tests.txt line pattern want got
  [ -s "$list" ] || "$unit_tests" --gtest_list_tests >"$list" 2>&1
  filter=""
  while read -r pattern want got; do
    if ((got < want)); then
      say "filter '$pattern' matches $got test(s), expected $want: FAILED"
      failed=1
    fi
    filter+="${filter:+:}$pattern"
  done < <(python3 bench/gpu/check.py count "$list" "$@")
}

# check_skips LOG: no test of LOG skipped for another reason than a GPU being present (or one
# the allow-list of check.py names).
check_skips() {
  [ -f "$1" ] || return 0
  local flags=()
  ((rehearsal)) && flags=(--no-gpu)
  python3 bench/gpu/check.py skips "${flags[@]}" "$1" | tail -20 | tee -a "$summary"
  ((PIPESTATUS[0] == 0)) || failed=1
}

gtest_tail() {
  [ -f "$1" ] || return 0
  grep -E "^\[==========\] .* ran|^\[  PASSED  \]|^\[  SKIPPED \] [0-9]+ test|^\[  FAILED  \]" "$1" |
    head -25 | tee -a "$summary"
}

# enough NAME SECONDS: whether SECONDS are left for a stage's first step (else says so).
enough() {
  (($(left_s) - 20 >= $2)) && return 0
  say "$1: not run, $(($(left_s) - 20)) s left (it needs $2)"
  return 1
}

# smoke: the machine, and the binaries run once. Returns 2 when the binaries cannot run here
# (a library missing, an illegal instruction, no kernel for this GPU): run.sh then builds on
# the device; 1 for any other failure, which a build would not mend.
stage_smoke() {
  local ok=0 lib missing rc
  say "cpu: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'); flags: $(grep -m1 -ow -E 'avx2|avx512f|avx512bw|avx512vl' /proc/cpuinfo | sort -u | tr '\n' ' ')"
  say "memory: $(awk '/MemTotal/ {printf "MemTotal %.1f GiB", $2 / 1048576}' /proc/meminfo) (pinning is refused past it, less 1/8 up to 4 GiB)"
  if command -v nvidia-smi >/dev/null; then
    nvidia-smi --query-gpu=name,memory.total,driver_version,pcie.link.gen.current,pcie.link.gen.max,pcie.link.width.current \
      --format=csv,noheader 2>&1 | sed 's/^/gpu (link idle): /' | tee -a "$summary"
  else
    say "nvidia-smi: not available on this machine"
  fi
  for lib in "$dgnn" "$unit_tests" "$e2e_tests" "$py_path/directgnn/libdirectgnn_ops.so"; do
    [ -e "$lib" ] || continue
    missing=$(ldd "$lib" 2>&1 | grep -E "not found|not a dynamic" | sort -u | tr '\n' ' ')
    if [ -n "$missing" ]; then
      say "ldd $(basename "$lib"): $missing"
      ok=2
    fi
  done
  ((ok == 0)) && say "ldd: every library found"
  step "info --build --check-gpu" smoke.log 25 "$dgnn" info --build --check-gpu
  rc=$?
  grep -E "^(torch|CUDA|GPUs|  GPU|GPU check|host wait|BLAS|OpenMP)" "$logs/smoke.log" | tail -14 |
    tee -a "$summary"
  if ((rc == 127 || rc == 132)) || grep -q "no kernel image" "$logs/smoke.log"; then
    ok=2
  elif ((rc != 0 && ok == 0)); then
    ok=1
  fi
  local cuobjdump
  cuobjdump=$(tool cuobjdump)
  if [ -z "$cuobjdump" ]; then
    say "cuobjdump: not available on this machine"
  elif "$cuobjdump" --list-elf "$dgnn" 2>&1 | grep -q "sm_90"; then
    say "cuobjdump: $(basename "$dgnn") holds sm_90 code ($("$cuobjdump" --list-elf "$dgnn" 2>&1 | grep -c sm_90) ELF image(s))"
  else
    say "cuobjdump: no sm_90 code in $(basename "$dgnn")"
    ok=2
  fi
  return $ok
}

# gather: the methods on 4 GiB tables of 400, 512 and 2408 B rows, 1M fresh ids per gather:
# float32 and float16 at base offset 0 (each method under CUDA's default wait and a blocking
# one, for the CPU time), float32 at offset 64 (torch's allocations are 64-byte aligned).
stage_gather() {
  local common=(--table-gib "${GATHER_TABLE_GIB:-4}" --row-bytes 400,512,2408 --ids 1000000
    --reps "${GATHER_REPS:-10}")
  enough gather 30 || return
  step "gather model" gather.log 5 "$dgnn" bench gather --model
  step "bench gather, offset 0" gather.log 90 "$dgnn" bench gather "${common[@]}" \
    --dtype float32,float16 --base-offset 0 --cuda-sync auto,blocking \
    --json "$OUT/gather-0.json" || failed=1
  step "bench gather, offset 64" gather.log 40 "$dgnn" bench gather "${common[@]}" \
    --dtype float32 --base-offset 64 --json "$OUT/gather-64.json" || failed=1
  grep -E "^(pinned|PCIe|bench gather on) |^ +[0-9]+ (float|bfloat)" "$logs/gather.log" | tee -a "$summary"
}

# gather-capped: capped GPU threads against uncapped (both in this run), 400 and 2408 B rows.
stage_gather-capped() {
  enough gather-capped 20 || return
  local common=(--table-gib "${GATHER_TABLE_GIB:-4}" --row-bytes 400,2408 --ids 1000000
    --dtype float32 --reps "${GATHER_REPS:-10}")
  step "bench gather, uncapped" gather-capped.log 20 "$dgnn" bench gather "${common[@]}" \
    --json "$OUT/gather-uncapped.json" || failed=1
  step "bench gather, capped threads" gather-capped.log 20 "$dgnn" bench gather "${common[@]}" \
    --max-threads "${GATHER_MAX_THREADS:-16384}" --json "$OUT/gather-capped.json" || failed=1
  grep -E "^ +[0-9]+ float" "$logs/gather-capped.log" | tee -a "$summary"
}

# train: a papers100M-shaped graph (10M nodes, average degree 15, 128-d float32, 1% training
# seeds: about 98 steps), GraphSAGE 3x256, fan-out 15,10,5, batch 1024; every GPU mode with
# both samplers under CUDA's default wait, then again under a blocking one (cut first when
# time runs short), two epochs each (the first pays CUDA's start-up and the allocator's
# growth), the second reported. All-in-GPU keeps graph and features on the GPU. --strict: a
# mode that could not run fails the stage. The JSON is written after every mode.
stage_train() {
  enough train 60 || return
  step "bench train (modes)" train.log 140 "$dgnn" bench train \
    --synthetic "${TRAIN_SYNTHETIC:-10000000,15,128}" --train-fraction "${TRAIN_FRACTION:-0.01}" \
    --layers 3 --hidden 256 --fan-out 15,10,5 --batch-size 1024 --epochs "${TRAIN_EPOCHS:-2}" \
    --warmup-epochs 1 --prefetch 2 --modes conventional,zero-copy,all-in-gpu --samplers cpu,gpu \
    --cuda-sync auto,blocking --strict --no-eval --json "$OUT/train.json" \
    --html "$OUT/train.html" || failed=1
  grep -E "^bench train|^dataset|^mode|^(conventional|zero-copy|all-in-gpu|cpu) |^error" \
    "$logs/train.log" | tee -a "$summary"
}

# gpu-tests: the unit tests that need a GPU, against the CPU oracle, each op synchronised.
stage_gpu-tests() {
  enough gpu-tests 15 || return
  make_filter "${gpu_test_patterns[@]}"
  step "GPU unit tests" gpu-tests.log 50 env DIRECTGNN_DEBUG_SYNC=1 "$unit_tests" \
    --gtest_filter="$filter" || failed=1
  gtest_tail "$logs/gpu-tests.log"
  check_skips "$logs/gpu-tests.log"
}

# sanitizer_refused LOG: whether compute-sanitizer refused this machine (no test ran under it).
sanitizer_refused() {
  ! grep -q "^\[ RUN      \]" "$1" &&
    grep -qE "Device not supported|error 999|Unable to find injection|not supported on this" "$1"
}

# memcheck NAME LOG CAP PATTERN...: the tests under compute-sanitizer memcheck, without torch's
# caching allocator (it hides overruns inside its blocks); CUDA API errors the code expects and
# handles (an already registered pin, the device-pointer probe) are not findings. Any failure
# is one, unless compute-sanitizer refused the machine before a test ran.
memcheck() {
  local name=$1 log=$2 cap=$3 sanitizer
  shift 3
  sanitizer=$(tool compute-sanitizer)
  if [ -z "$sanitizer" ]; then
    say "$name: compute-sanitizer not available on this machine"
    return
  fi
  enough "$name" 15 || return
  make_filter "$@"
  if ! step "$name" "$log" "$cap" env DIRECTGNN_GATHER_TEST_GRID=small \
    PYTORCH_NO_CUDA_MEMORY_CACHING=1 "$sanitizer" --tool memcheck --report-api-errors no \
    --error-exitcode 1 "$unit_tests" --gtest_filter="$filter"; then
    if sanitizer_refused "$logs/$log"; then
      say "$name: not available (compute-sanitizer refused this machine: $(grep -m1 -oE 'Device not supported|error 999|Unable to find injection[^.]*|[^.]*not supported on this[^.]*' "$logs/$log"))"
    else
      failed=1
    fi
  fi
  grep -E "ERROR SUMMARY|Invalid|tests? from .* ran|^\[  (PASSED|FAILED) " "$logs/$log" |
    head -10 | tee -a "$summary"
  check_skips "$logs/$log"
}

stage_memcheck() {
  memcheck "memcheck (gather kernels)" memcheck.log 35 "${memcheck_gather_patterns[@]}"
  memcheck "memcheck (sampler, dropout, pipeline)" memcheck-other.log 25 "${memcheck_other_patterns[@]}"
}

# unit-rest: every unit test call A's GPU tests left out.
stage_unit-rest() {
  enough unit-rest 20 || return
  make_filter "${gpu_test_patterns[@]}"
  step "unit tests (the rest)" unit.log 60 "$unit_tests" --gtest_filter="-$filter" || failed=1
  gtest_tail "$logs/unit.log"
  check_skips "$logs/unit.log"
}

# nccl: Cora over seeds NCCL_SEEDS (0 1), two ranks sharing the GPU (--dist-backend auto: Gloo,
# as NCCL takes one GPU per rank) against one CPU process: mean test accuracy within 0.02.
stage_nccl() {
  local cora=$DIRECTGNN_DATA/cora.npz ref=() run=() seed
  for seed in ${NCCL_SEEDS:-0 1}; do
    enough "cora seed $seed" 40 || break
    step "cora seed $seed, CPU" cora.log 15 "$dgnn" train --dataset "$cora" --device cpu \
      --seed $seed --metrics "$logs/cpu-$seed.jsonl" && ref+=("$logs/cpu-$seed.jsonl")
    step "cora seed $seed, 2 ranks on the GPU" cora.log 25 "$dgnn" launch -n 2 -- train \
      --dataset "$cora" --dist-backend auto --seed $seed --metrics "$logs/ranks-$seed.jsonl" &&
      run+=("$logs/ranks-$seed.jsonl")
  done
  [ -f "$logs/cora.log" ] && grep -E "ranks \(|^Device" "$logs/cora.log" | sort | uniq -c | tee -a "$summary"
  if ((${#ref[@]} == 0 || ${#run[@]} == 0)); then
    say "cora accuracy: FAILED (no complete runs to compare)"
    failed=1
    return
  fi
  python3 bench/gpu/check.py accuracy "${ref[@]}" -- "${run[@]}" 2>&1 | tee -a "$summary"
  ((PIPESTATUS[0] == 0)) || failed=1
}

# e2e: the end-to-end tests (the CLI as users run it).
stage_e2e() {
  step "end-to-end tests" e2e.log 450 "$e2e_tests" || failed=1
  gtest_tail "$logs/e2e.log"
  check_skips "$logs/e2e.log"
}

# python: the Python package on the GPU (unified tensors, pinning, the GPU sampler and loader).
stage_python() {
  step "python tests" python.log 300 env PYTHONPATH="$py_path" python3 -m pytest -q -rs \
    -p no:cacheprovider python/tests || failed=1
  [ -f "$logs/python.log" ] && tail -4 "$logs/python.log" | tee -a "$summary"
  check_skips "$logs/python.log"
}

. "$root/bench/gpu/stages_later.sh"
