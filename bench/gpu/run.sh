#!/usr/bin/env bash
# One device call of a GPU day: run.sh CALL (A, B, C ...: bench/gpu/README.md), or run.sh
# STAGE... Leaves under $OUT a summary, the logs and the stages' JSON.
#   here:    bench/gpu/prepare.sh    (the pack of prebuilt binaries, the build's dependencies)
#            bench/gpu/rehearse.sh   (this script, as the device runs it, without a GPU)
#   device:  run(command="bench/gpu/run.sh A", carry=[".deps/gpu"], timeout_s=450)
# Every call starts with the smoke stage on the pack's binaries where its manifest matches this
# tree and the device's torch (bench/gpu/pack.py); a pack that does not match, or that fails
# the smoke stage, gives way to a build on the device (minutes), then the smoke stage again.
# Every step runs under `timeout` with min(its cap, what is left of the call's budget), so the
# summary and the logs are always written.
# Environment: BUDGET_S (the call's seconds: leave 10-15 s of the call's timeout_s for the
# transfers), CAP_SCALE (multiplies every step's cap), DIRECTGNN_REHEARSAL=1 (no GPU here: a
# step that fails only for want of one says so; set by rehearse.sh).
set -uo pipefail
cd "$(dirname "$0")/../.."
root=$PWD
deps=$root/.deps/gpu

# The calls, in priority order: their stages, and the budget each is planned for.
declare -A call_stages=(
  [A]="gather train gpu-tests memcheck"
  [B]="unit-rest gather-capped nccl"
  [C]="e2e python"
  [D]="scale"
  [E]="pyg link"
  [F]="hetero"
  [G]="tables"
  [H]="disk"
  [I]="sharded"
)
declare -A call_budget=([A]=435 [B]=235 [C]=585 [D]=585 [E]=585 [F]=585 [G]=585 [H]=585 [I]=585)
all_stages="smoke gather gather-capped train gpu-tests memcheck unit-rest nccl e2e python link pyg hetero scale tables disk sharded"

stages=()
default_budget=560
for arg in "$@"; do
  if [ -n "${call_stages[$arg]:-}" ]; then
    read -ra more <<<"${call_stages[$arg]}"
    stages+=("${more[@]}")
    default_budget=${call_budget[$arg]}
  elif [[ " $all_stages " == *" $arg "* ]]; then
    stages+=("$arg")
  else
    echo "usage: bench/gpu/run.sh A|B|C|D|E|F|G|H|I, or STAGE... ($all_stages)" >&2
    exit 2
  fi
done
((${#stages[@]} > 0)) || { echo "usage: bench/gpu/run.sh A|B|C|D|E|F|G|H|I, or STAGE... ($all_stages)" >&2; exit 2; }
budget=${BUDGET_S:-$default_budget}

. bench/gpu/lib.sh
. bench/gpu/stages.sh
mkdir -p "$OUT"
rm -rf "$logs" && mkdir -p "$logs"
: >"$summary"
trap pack_logs EXIT

say "call: $*; stages: ${stages[*]}; budget ${budget} s$( ((rehearsal)) && echo '; REHEARSAL (no GPU)')"
[ -d "$deps/googletest" ] && [ -f "$deps/datasets/cora.npz" ] ||
  { say "error: $deps is incomplete: run bench/gpu/prepare.sh here and carry .deps/gpu"; exit 2; }
export DIRECTGNN_DATA=$deps/datasets
say "cmake: $(cmake --version 2>/dev/null | head -1); compute-sanitizer: $(tool compute-sanitizer || echo 'not available'); ncu: $(tool ncu || echo 'not available')"

# The fallback build's targets: what the stages run.
targets=(directgnn_cli)
for s in "${stages[@]}"; do
  case $s in
    gpu-tests | memcheck | unit-rest | link | hetero) targets+=(directgnn_tests) ;;
    e2e) targets+=(directgnn_e2e_tests) ;;
    python | pyg) targets+=(directgnn_ops) ;;
  esac
done
mapfile -t targets < <(printf '%s\n' "${targets[@]}" | sort -u)

mapfile -t torch_info < <(read_torch)
torch_version=${torch_info[0]:-none}
say "torch: $torch_version (CUDA ${torch_info[1]:-none})"
[ -n "${torch_info[2]:-}" ] || say "torch: not importable here; the pack's binaries will not find its libraries"
export LD_LIBRARY_PATH=${torch_info[2]:-}${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}

# The pack unless it is stale or cannot run here (smoke 2); a smoke failure of another kind (a
# kernel that differs from the CPU, a slow first start) is reported and the pack kept: a build
# here would not mend it.
say "--- stage smoke"
smoke=2
if unpack_pack && use_binaries pack; then
  stage_smoke
  smoke=$?
fi
if ((smoke != 2)); then
  ((smoke == 0)) || failed=1
  say "binaries: the pack's"
elif ((rehearsal)); then
  say "binaries: the pack cannot run here; a rehearsal does not build (minutes on 2 cores)"
  exit 1
else
  say "binaries: building on the device (${targets[*]})"
  device_build "${targets[@]}" || { say "done in $(($(date +%s) - t0)) s; BUILD FAILED"; exit 1; }
  use_binaries build
  say "--- stage smoke (device build)"
  stage_smoke || failed=1
fi

for s in "${stages[@]}"; do
  [ "$s" = smoke ] && continue
  say "--- stage $s ($(left_s) s left)"
  "stage_$s"
done
say "done in $(($(date +%s) - t0)) s with the $binaries binaries; $( ((failed)) && echo 'SOMETHING FAILED' || echo 'all passed')"
exit $failed
