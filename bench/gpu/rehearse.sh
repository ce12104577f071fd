#!/usr/bin/env bash
# Rehearses the GPU day here, without a GPU: copies the tree as the device tool sends it
# (tracked and untracked-not-ignored files, with .deps/gpu carried) to a scratch folder at
# another path, and runs bench/gpu/run.sh there for each call with the device's environment
# ($OUT, `python3` holding torch on the PATH), under strace. Then checks that
#   - every step ran or said why not (run.sh exits 0: a step that failed only for want of a
#     GPU says "not run here"), and the summary was written;
#   - what $OUT holds comes back from a device call: at most 8 files, 16 MiB each, 64 MiB in
#     all, no more than 2 folders down, names of letters, digits, '.', '_' and '-';
#   - nothing reached back into this checkout (no file under it opened, but the .venv that
#     stands in for the device's python), and the tree with its carry fits in 64 MiB.
# Run it whenever bench/gpu/ or the build changes, after bench/gpu/prepare.sh.
#   bench/gpu/rehearse.sh [CALL...]   (default: A B)   KEEP=1 keeps the scratch folder
set -uo pipefail
cd "$(dirname "$0")/../.."
checkout=$PWD
calls=("$@")
((${#calls[@]})) || calls=(A B)
[ -f .deps/gpu/pack.tar.gz ] || { echo "rehearse: no pack: run bench/gpu/prepare.sh first" >&2; exit 2; }
[ -x .venv/bin/python ] || { echo "rehearse: no .venv: run scripts/install-deps.sh first" >&2; exit 2; }
command -v strace >/dev/null || { echo "rehearse: strace is missing (apt-get install strace)" >&2; exit 2; }

scratch=$(mktemp -d /tmp/directgnn-rehearsal-XXXXXX)
[ "${KEEP:-0}" = 1 ] || trap 'rm -rf "$scratch"' EXIT
repo=$scratch/repo
mkdir -p "$repo"
git ls-files -co --exclude-standard -z | tar --null -T - -cf - | tar -xf - -C "$repo"
mkdir -p "$repo/.deps" && cp -r .deps/gpu "$repo/.deps/gpu"
# The device's python3 holds torch: here a scratch venv that sees the .venv's packages, and
# not the .venv's own .pth files (scripts/build.sh's points into this checkout's build/).
base=$(.venv/bin/python -c 'import sys; print(sys._base_executable)')
"$base" -m venv --without-pip "$scratch/venv"
.venv/bin/python -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])' \
  >"$("$scratch/venv/bin/python" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')/device-torch.pth"
status_before=$(git status --porcelain)
problems=()
size=$(du -sb "$repo" | cut -f1)
echo "rehearse: tree with .deps/gpu: $((size >> 20)) MiB (a call sends at most 64 MiB) in $repo"
((size <= 64 << 20)) || problems+=("the tree and its carry are $((size >> 20)) MiB, over 64 MiB")

# check_out DIR: what a device call would bring back of DIR.
check_out() {
  local dir=$1 files total=0 f rel depth bytes
  files=$(find "$dir" -type f | wc -l)
  ((files <= 8)) || problems+=("$dir holds $files files; at most 8 come back")
  while IFS= read -r f; do
    rel=${f#"$dir"/}
    depth=$(($(tr -cd / <<<"$rel" | wc -c)))
    bytes=$(stat -c %s "$f")
    total=$((total + bytes))
    ((depth <= 2)) || problems+=("$rel is more than 2 folders down")
    ((bytes <= 16 << 20)) || problems+=("$rel is $((bytes >> 20)) MiB, over 16 MiB")
    [[ $rel =~ ^[A-Za-z0-9._/-]+$ ]] || problems+=("$rel: a name that does not come back")
  done < <(find "$dir" -type f)
  ((total <= 64 << 20)) || problems+=("$dir holds $((total >> 20)) MiB, over 64 MiB")
  echo "rehearse: \$OUT holds $files file(s), $((total >> 10)) KiB: $(cd "$dir" && find . -type f | sed 's|^\./||' | sort | tr '\n' ' ')"
}

for call in "${calls[@]}"; do
  out=$scratch/out-$call
  mkdir -p "$out"
  echo "rehearse: call $call"
  (cd "$repo" && PATH="$scratch/venv/bin:$PATH" OUT=$out DIRECTGNN_REHEARSAL=1 \
    CAP_SCALE=${CAP_SCALE:-4} BUDGET_S=${BUDGET_S:-1800} PYTHONDONTWRITEBYTECODE=1 \
    strace -f -qq --seccomp-bpf -e trace=open,openat,creat,mkdir,rename,unlink,execve \
    -o "$scratch/trace-$call.txt" bench/gpu/run.sh "$call") >"$scratch/call-$call.txt" 2>&1
  rc=$?
  tail -n 60 "$scratch/call-$call.txt"
  ((rc == 0)) || problems+=("call $call: run.sh exited $rc (see the summary above)")
  grep -q "^done in" "$out/summary.txt" 2>/dev/null || problems+=("call $call: no summary written")
  check_out "$out"
  reached=$(grep -oE "\"$checkout/[^\"]*\"" "$scratch/trace-$call.txt" | grep -v "^\"$checkout/.venv/" |
    sort -u | head -5)
  [ -z "$reached" ] || problems+=("call $call reached into the checkout: $(tr '\n' ' ' <<<"$reached")")
done
[ "$(git status --porcelain)" = "$status_before" ] || problems+=("the checkout's git status changed")

if ((${#problems[@]})); then
  printf 'rehearse: FAILED\n'
  printf '  %s\n' "${problems[@]}"
  exit 1
fi
echo "rehearse: passed (calls ${calls[*]})"
