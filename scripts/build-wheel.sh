#!/usr/bin/env bash
# Builds a prebuilt wheel of the directgnn package for the torch of one Python environment
# (default: the project's .venv), so that other machines with the same torch install it in
# seconds instead of compiling the CUDA kernels (about 11 minutes on 2 cores).
#
#   scripts/build-wheel.sh [OUT_DIR]          # default OUT_DIR: dist/
#   pip install dist/directgnn-0.1.0+torch2.11.0.cu130-*.whl   # where torch==2.11.0 (CUDA 13.0)
#
# One wheel per torch version and CUDA flavour: its version carries them as a local label
# (+torch2.11.0.cu130, +torch2.11.0.cpu) and it requires exactly that torch. The library finds
# torch's libraries and pip's CUDA runtime through $ORIGIN run paths (no absolute paths of this
# machine). liburing is linked statically where liburing.a exists (the wheel reads
# features="disk" with io_uring without needing the library installed), and left out otherwise
# (pread threads). Environment: PYTHON (the interpreter), DIRECTGNN_CUDA_ARCHITECTURES
# (default 80;90).
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-.venv/bin/python}
OUT=${1:-dist}
if [ ! -x "$PY" ]; then
  echo "error: $PY not found; run scripts/install-deps.sh first, or set PYTHON" >&2
  exit 1
fi
"$PY" -m pip install -q "scikit-build-core>=0.10" wheel
read -r TORCH_VERSION FLAVOUR < <("$PY" -c 'import torch
v = torch.__version__.split("+")[0]
c = torch.version.cuda
print(v, "cu" + c.replace(".", "") if c else "cpu")')
LABEL="torch${TORCH_VERSION}.${FLAVOUR}"

uring=(-C cmake.define.DIRECTGNN_IO_URING=OFF)
for lib in /usr/lib/x86_64-linux-gnu/liburing.a /usr/lib/aarch64-linux-gnu/liburing.a; do
  if [ -f "$lib" ]; then uring=(-C "cmake.define.DIRECTGNN_LIBURING=$lib"); fi
done

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
echo "building the wheel for torch ${TORCH_VERSION} (${FLAVOUR}) ..." >&2
"$PY" -m pip wheel --no-build-isolation --no-deps -w "$work/raw" "${uring[@]}" \
  -C cmake.define.DIRECTGNN_CUDA_ARCHITECTURES="${DIRECTGNN_CUDA_ARCHITECTURES:-80;90}" \
  -C build-dir="$work/build" .
raw=$(ls "$work"/raw/directgnn-*.whl)

# The local version label, and the exact torch.
"$PY" -m wheel unpack -d "$work/unpacked" "$raw" >/dev/null
root=$(ls -d "$work"/unpacked/directgnn-*)
info=$(ls -d "$root"/directgnn-*.dist-info)
version=$(sed -n 's/^Version: //p' "$info/METADATA")
sed -i "s/^Version: .*/Version: ${version}+${LABEL}/; s/^Requires-Dist: torch.*/Requires-Dist: torch==${TORCH_VERSION}/" \
  "$info/METADATA"
mv "$info" "$root/directgnn-${version}+${LABEL}.dist-info"

# What the library needs at run time: no liburing.so, and no absolute run paths.
lib=$(ls "$root"/directgnn/libdirectgnn_ops.so)
if readelf -d "$lib" | grep -q 'liburing.so'; then
  echo "error: $lib needs liburing.so; the wheel must not (link liburing.a or turn it off)" >&2
  exit 1
fi
runpath=$(readelf -d "$lib" | sed -n 's/.*R\(UN\)\?PATH.*\[\(.*\)\]/\2/p')
if [ -n "$runpath" ] && echo "$runpath" | tr ':' '\n' | grep -qv '^\$ORIGIN'; then
  echo "error: $lib has run paths of this machine: $runpath" >&2
  exit 1
fi
mkdir -p "$OUT"
"$PY" -m wheel pack -d "$OUT" "$root" >/dev/null
ls "$OUT"/directgnn-"${version}+${LABEL}"-*.whl
