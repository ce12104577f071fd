#!/usr/bin/env bash
# Installs what directgnn needs to build on Debian 12:
# - compilers and C++ libraries from Debian's packages (skipped when all are present);
# - PyTorch (pip's torch 2.11.0, a CUDA 13.0 build), numpy, pytest and torch-geometric into .venv/, from
#   requirements.txt. A complete .venv/ for the same requirements is reused as it is.
# Wheels are kept in ${XDG_CACHE_HOME:-~/.cache}/directgnn/wheels, so a second machine state
# or a fresh clone installs without downloading; the cache is never required.
# Run as root (or with sudo available).
set -euo pipefail
cd "$(dirname "$0")/.."

packages=(
  build-essential cmake ninja-build pkg-config
  libgtest-dev libgmock-dev libbenchmark-dev
  libcli11-dev nlohmann-json3-dev zlib1g-dev libgloo-dev liburing-dev libmetis-dev
)
python=${DIRECTGNN_BOOTSTRAP_PYTHON:-python3}
# Debian's own python3 needs python3-venv to make a virtual environment.
if ! command -v "$python" >/dev/null || ! "$python" -c 'import ensurepip, venv' 2>/dev/null; then
  packages+=(python3 python3-venv)
  python=/usr/bin/python3
fi

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
  echo "install-deps: Debian packages present"
else
  sudo_cmd=()
  if [ "$(id -u)" -ne 0 ]; then sudo_cmd=(sudo); fi
  echo "install-deps: installing ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  "${sudo_cmd[@]}" apt-get update -q
  "${sudo_cmd[@]}" apt-get install -y -q --no-install-recommends "${missing[@]}"
fi

venv=.venv
stamp=$venv/.directgnn-complete
want="$(sha256sum requirements.txt | cut -d' ' -f1) $("$python" -c 'import sys; print(sys.version.split()[0])')"
if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$want" ]; then
  echo "install-deps: $venv complete ($(tr '\n' ' ' <requirements.txt | grep -o 'torch==[^ ]*'))"
  exit 0
fi
echo "install-deps: making $venv with $("$python" --version) and requirements.txt"
rm -rf "$venv"
"$python" -m venv "$venv"
cache=${XDG_CACHE_HOME:-$HOME/.cache}/directgnn/wheels
mkdir -p "$cache"
# Download into the cache (files already there are kept), then install from it alone.
if ! "$venv/bin/pip" download --quiet --progress-bar off -d "$cache" -r requirements.txt; then
  echo "install-deps: PyPI could not be reached; installing from the wheels cached in $cache"
fi
"$venv/bin/pip" install --quiet --progress-bar off --no-index --find-links "$cache" \
  -r requirements.txt
"$venv/bin/python" -c 'import torch; print("install-deps: torch", torch.__version__, "CUDA", torch.version.cuda)'
echo "$want" >"$stamp"
