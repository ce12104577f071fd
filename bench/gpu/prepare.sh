#!/usr/bin/env bash
# Run here (Debian, after scripts/install-deps.sh) before using the device tool: copies what
# the GPU machine lacks into .deps/gpu (git-ignored), which every device call carries:
#   carry: [".deps/gpu"],  command: bench/gpu/run.sh STAGE   (stages: see run.sh)
# - header-only and source dependencies (GoogleTest, CLI11, nlohmann-json, Gloo's and zlib's
#   headers);
# - the test datasets (../shared does not travel, and a GPU test that skips there fails the
#   stage).
set -euo pipefail
cd "$(dirname "$0")/../.."
dest=.deps/gpu
data=${DIRECTGNN_DATA:-../shared/datasets}
for f in cora.npz tolokers.npz; do
  [ -f "$data/$f" ] || { echo "error: $data/$f is missing: set DIRECTGNN_DATA to the folder that holds it" >&2; exit 2; }
done
rm -rf "$dest"
mkdir -p "$dest/include" "$dest/zlib/include" "$dest/datasets"
cp -r /usr/src/googletest "$dest/googletest"
cp -r /usr/include/CLI "$dest/include/CLI"
cp -r /usr/include/nlohmann "$dest/include/nlohmann"
# pip's torch links Gloo in but ships none of its headers, which c10d's Gloo header includes.
cp -r /usr/include/gloo "$dest/include/gloo"
cp /usr/include/zlib.h /usr/include/zconf.h "$dest/zlib/include/"
cp "$data/cora.npz" "$data/tolokers.npz" "$dest/datasets/"
du -sh "$dest"
