# Helpers of bench/gpu/run.sh (sourced there, after `root`, `deps` and `budget` are set): the
# summary, steps under the call's budget, CUDA tools, and the binaries the call runs (the
# prebuilt pack, or a build on the device).

OUT=${OUT:-$root/build-gpu/out}
logs=$root/build-gpu/logs
summary=$OUT/summary.txt
t0=$(date +%s)
failed=0
rehearsal=${DIRECTGNN_REHEARSAL:-0}
cap_scale=${CAP_SCALE:-1}

say() { echo "$*" | tee -a "$summary"; }
left_s() { echo $((budget - ($(date +%s) - t0))); }

# What a command prints when it failed only because no GPU is visible: in a rehearsal (no GPU
# here), such a step is "not run here", not a failure.
no_gpu_pattern='needs a GPU|no GPU here|no CUDA device|no usable CUDA device|nothing to run \(|has no CUDA support|needs a GPU; none is visible'

# step NAME LOG CAP COMMAND...: runs COMMAND with its output appended to build-gpu/logs/LOG,
# under min(CAP x CAP_SCALE, what is left of the budget less 20 s kept for the summary); says
# its exit status and time.
step() {
  local name=$1 log=$logs/$2 cap=$(($3 * cap_scale)) left start rc from
  shift 3
  left=$(($(left_s) - 20))
  ((left > cap)) && left=$cap
  if ((left < 5)); then
    say "$name: not run, the call's time is used up"
    return 124
  fi
  from=$(stat -c %s "$log" 2>/dev/null || echo 0)
  start=$(date +%s)
  timeout -k 10 "$left" "$@" >>"$log" 2>&1
  rc=$?
  if ((rc != 0 && rehearsal)) && tail -c +$((from + 1)) "$log" | grep -qE "$no_gpu_pattern"; then
    say "$name: not run here: no GPU (exit $rc in $(($(date +%s) - start)) s)"
    return 0
  fi
  say "$name: exit $rc in $(($(date +%s) - start)) s$( ((rc == 124 || rc == 137)) && echo " (timed out at $left s)")"
  return $rc
}

# existing FILE...: those of the files that exist, one a line (a step "not run here" in a
# rehearsal succeeds without writing its metrics).
existing() {
  local f
  for f in "$@"; do [ -f "$f" ] && echo "$f"; done
  return 0
}

# tool NAME: the path of a CUDA tool, or nothing where this machine lacks it.
tool() { command -v "$1" || { [ -x "/usr/local/cuda/bin/$1" ] && echo "/usr/local/cuda/bin/$1"; }; }

# The device's torch: its version, its CUDA version with whether a GPU is visible, and the
# library folders the pack's binaries (no RPATH) need: torch's lib/, every nvidia/*/lib that pip
# installed on the path, the CUDA toolkit's lib64. One Python start, three lines.
read_torch() {
  python3 - 2>/dev/null <<'PY' || printf 'none\nnone\n\n'
import glob, os, sys
try:
    import torch
except Exception:
    print("none\nnone\n")
    sys.exit(0)
dirs = [os.path.join(os.path.dirname(torch.__file__), "lib")]
for entry in sys.path:
    dirs += sorted(glob.glob(os.path.join(entry, "nvidia", "*", "lib")))
dirs.append("/usr/local/cuda/lib64")
found = []
for d in dirs:
    if os.path.isdir(d) and d not in found:
        found.append(d)
print(torch.__version__)
print(f"{torch.version.cuda}, GPU visible: {torch.cuda.is_available()}")
print(":".join(found))
PY
}

# Points the call at binaries under DIR: bin/ and python/ for the pack, the build tree for a
# device build.
use_binaries() {
  case $1 in
    pack)
      local dir=$root/build-gpu/pack
      dgnn=$dir/bin/directgnn unit_tests=$dir/bin/directgnn_tests
      e2e_tests=$dir/bin/directgnn_e2e_tests py_path=$dir/python
      ;;
    build)
      dgnn=$root/build-gpu/directgnn unit_tests=$root/build-gpu/tests/directgnn_tests
      e2e_tests=$root/build-gpu/tests/directgnn_e2e_tests py_path=$root/build-gpu/python
      ;;
  esac
  binaries=$1
  # Tests carried from another machine read this tree and run this CLI, not the paths they
  # were built with.
  export DIRECTGNN_CLI=$dgnn DIRECTGNN_SOURCE_DIR=$root
}

# unpack_pack: the prebuilt binaries into build-gpu/pack, where the manifest matches this tree
# and this machine's torch.
unpack_pack() {
  [ -f "$deps/pack.tar.gz" ] || { say "pack: none carried (bench/gpu/prepare.sh makes it)"; return 1; }
  python3 bench/gpu/pack.py check "$deps/pack.json" "$torch_version" | tee -a "$summary"
  ((PIPESTATUS[0] == 0)) || return 1
  rm -rf "$root/build-gpu/pack" && mkdir -p "$root/build-gpu/pack" &&
    tar -xzf "$deps/pack.tar.gz" -C "$root/build-gpu/pack"
}

# device_build TARGET...: builds the targets on the device against its own torch (the
# fallback when the pack cannot be used: minutes of device time).
device_build() {
  local nvcc zlib_args=() libz
  nvcc=$(tool nvcc)
  if [ ! -f /usr/include/zlib.h ]; then
    libz=$(ls /usr/lib/x86_64-linux-gnu/libz.so* /lib/x86_64-linux-gnu/libz.so* 2>/dev/null | head -1)
    zlib_args=(-DZLIB_INCLUDE_DIR="$deps/zlib/include" -DZLIB_LIBRARY="$libz")
  fi
  python3 bench/gpu/source_times.py restore build-gpu/source-times.json | tee -a "$summary"
  # Hopper only (sm_90): DIRECTGNN_CUDA_ARCHITECTURES sets both TORCH_CUDA_ARCH_LIST and the
  # kernels target's CUDA_ARCHITECTURES (cmake/dependencies.cmake).
  step configure build.log 120 cmake -S . -B build-gpu -G Ninja -DCMAKE_BUILD_TYPE=Release \
    -DDIRECTGNN_CUDA=ON -DCMAKE_CUDA_COMPILER="$nvcc" -DDIRECTGNN_CUDA_ARCHITECTURES=90 \
    -DDIRECTGNN_PYTHON="$(command -v python3)" -DCMAKE_INCLUDE_PATH="$deps/include" \
    -DDIRECTGNN_GTEST_SOURCE="$deps/googletest" -DBUILD_BENCHMARKS=OFF "${zlib_args[@]}" &&
    step build build.log 600 cmake --build build-gpu -j "$(nproc)" --target "$@"
  local status=$?
  python3 bench/gpu/source_times.py record build-gpu/source-times.json
  if ((status != 0)); then
    grep -E "error|Error" "$logs/build.log" | head -30 | tee -a "$summary"
    return $status
  fi
  grep -cE "^\[[0-9]+/[0-9]+\] Building" "$logs/build.log" | sed 's/^/files compiled: /' | tee -a "$summary"
}

# pack_logs: the logs as one file under $OUT (at most 8 files come back from a call).
pack_logs() { tar -C "$logs" -czf "$OUT/logs.tar.gz" . 2>/dev/null; }
