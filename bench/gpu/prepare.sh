#!/usr/bin/env bash
# Run here (Debian, after scripts/install-deps.sh) before using the device tool: copies the
# header-only and source dependencies the GPU machine lacks into .deps/gpu (git-ignored),
# which the device call then carries:  carry: [".deps/gpu"],  command: bench/gpu/run.sh
set -euo pipefail
cd "$(dirname "$0")/../.."
dest=.deps/gpu
rm -rf "$dest"
mkdir -p "$dest/include" "$dest/zlib/include"
cp -r /usr/src/googletest "$dest/googletest"
cp -r /usr/include/CLI "$dest/include/CLI"
cp -r /usr/include/nlohmann "$dest/include/nlohmann"
# pip's torch links Gloo in but ships none of its headers, which c10d's Gloo header includes.
cp -r /usr/include/gloo "$dest/include/gloo"
cp /usr/include/zlib.h /usr/include/zconf.h "$dest/zlib/include/"
du -sh "$dest"
