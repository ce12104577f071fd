#!/usr/bin/env bash
# Run here (Debian, after scripts/install-deps.sh) before a GPU day: fills .deps/gpu
# (git-ignored), which every device call carries:
#   carry: [".deps/gpu"],  command: bench/gpu/run.sh A   (the calls: bench/gpu/README.md)
# - pack.tar.gz and pack.json: the CLI, both test binaries and the ops library, built here in
#   build-pack/ for the device (Hopper kernels only, x86-64-v3 host code, no io_uring, no
#   RPATH), stripped, checked and packed with a manifest (bench/gpu/pack.py). run.sh uses them
#   when the manifest matches the tree and the device's torch, and builds there otherwise;
# - header-only and source dependencies of that fallback build (GoogleTest, CLI11,
#   nlohmann-json, Gloo's and zlib's headers);
# - the test datasets (../shared does not travel, and a GPU test that skips there fails).
# --deps-only skips the pack (the device then builds, which costs minutes of device time).
# The pack's build takes about 12 minutes on 2 cores from nothing, less when build-pack/ is
# there; it is not part of CI.
set -euo pipefail
cd "$(dirname "$0")/../.."
dest=.deps/gpu
data=${DIRECTGNN_DATA:-../shared/datasets}
pack=1
[ "${1:-}" = "--deps-only" ] && pack=0
for f in cora.npz tolokers.npz; do
  [ -f "$data/$f" ] || { echo "error: $data/$f is missing: set DIRECTGNN_DATA to the folder that holds it" >&2; exit 2; }
done
mkdir -p "$dest"
rm -rf "$dest/googletest" "$dest/include" "$dest/zlib" "$dest/datasets"
mkdir -p "$dest/include" "$dest/zlib/include" "$dest/datasets"
cp -r /usr/src/googletest "$dest/googletest"
cp -r /usr/include/CLI "$dest/include/CLI"
cp -r /usr/include/nlohmann "$dest/include/nlohmann"
# pip's torch links Gloo in but ships none of its headers, which c10d's Gloo header includes.
cp -r /usr/include/gloo "$dest/include/gloo"
cp /usr/include/zlib.h /usr/include/zconf.h "$dest/zlib/include/"
cp "$data/cora.npz" "$data/tolokers.npz" "$dest/datasets/"

if ((pack)); then
  python=.venv/bin/python
  [ -x "$python" ] || { echo "error: $python is missing: run scripts/install-deps.sh first" >&2; exit 2; }
  mkdir -p build-pack
  log=build-pack/prepare.log
  # What the build reads, before it reads it: a source edited during the build makes the pack
  # refuse itself rather than describe binaries built from other sources.
  digest=$("$python" bench/gpu/pack.py digest)
  # No RPATH: the binaries find torch through LD_LIBRARY_PATH (run.sh), so test discovery waits
  # for ctest (PRE_TEST) instead of running them after the build.
  # The device's CPU is unknown: x86-64-v3 (AVX2) at most, and no AVX-512 anywhere.
  cmake -S . -B build-pack -G Ninja -DCMAKE_BUILD_TYPE=Release -DDIRECTGNN_CUDA=ON \
    -DDIRECTGNN_CUDA_ARCHITECTURES=90 -DDIRECTGNN_NATIVE=OFF -DCMAKE_CXX_FLAGS=-march=x86-64-v3 \
    -DDIRECTGNN_IO_URING=OFF -DDIRECTGNN_METIS=OFF -DCMAKE_SKIP_RPATH=ON -DBUILD_BENCHMARKS=OFF \
    -DCMAKE_GTEST_DISCOVER_TESTS_DISCOVERY_MODE=PRE_TEST \
    -DDIRECTGNN_PYTHON="$PWD/$python" >"$log" 2>&1 || { tail -20 "$log"; exit 1; }
  echo "prepare: building the pack in build-pack/ (log: $log)"
  cmake --build build-pack --parallel "$(nproc)" --target directgnn_cli directgnn_tests \
    directgnn_e2e_tests directgnn_ops >>"$log" 2>&1 || { tail -30 "$log"; exit 1; }
  rm -f "$dest/pack.tar.gz" "$dest/pack.json"
  "$python" bench/gpu/pack.py make build-pack "$dest/pack.tar.gz" "$digest"
fi
du -sh "$dest"
