#!/usr/bin/env bash
# Cache policies for a disk table much larger than its cache (issue 44): the same graph with its
# table in RAM, then on disk read with O_DIRECT (no page cache behind the cache) at caches of
# 10, 25 and 50% of the table, per policy; each as a training run and as a load-only pass
# (sampling and gathering, no model), so the 2 cores' compute does not hide the disk.
#
#   bench/disk/policies.sh DATASET [OUT_DIR]
#
# DATASET: a directory from `directgnn generate rmat` (the issue's: --scale 21 --edge-factor 16
# --feat-dim 1024 --train 0.02 -a 0.45 -b 0.22 -c 0.22; docs/benchmarks.md says why not the
# Graph500 skew). Every run trains 3 layers (15,10,5), hidden 64, EPOCHS epochs (default 3; the
# first is left out as warm-up). Each run's --metrics JSONL and log stay in OUT_DIR, and
# bench/disk/policies_summary.py prints the table and writes summary.json there.
# POLICIES (default "static sieve lookahead"), CACHES (percent, default "10 25 50"), WINDOWS
# (lookahead's --lookahead-batches, default 8; other windows' runs are named -wN) and RUNS
# (names, e.g. "ram disk-sieve-25") choose runs; LOAD_ONLY=0 leaves out the load-only passes.
set -euo pipefail

dataset=${1:?usage: bench/disk/policies.sh DATASET [OUT_DIR]}
out=${2:-disk-policies-bench}
bin=${DIRECTGNN:-build/directgnn}
epochs=${EPOCHS:-3}
python=${PYTHON:-.venv/bin/python}
mkdir -p "$out"
table_bytes=$(stat -c %s "$dataset/features.npy")

run() {
  local name=$1
  shift
  case " ${RUNS:-$name} " in *" $name "*) ;; *) return 0 ;; esac
  local start=$SECONDS
  /usr/bin/time -v "$bin" bench train --dataset "$dataset" --epochs "$epochs" --warmup-epochs 1 \
    --no-eval --layers 3 --fan-out 15,10,5 --hidden 64 --threads 2 \
    --metrics "$out/$name.jsonl" "$@" >"$out/$name.log" 2>&1 || {
    echo "== $name failed; see $out/$name.log" >&2
    return 0
  }
  echo "== $name ($((SECONDS - start)) s): $*"
}

both() {  # a training run and, unless LOAD_ONLY=0, its load-only pass
  local name=$1
  shift
  run "$name" "$@"
  [ "${LOAD_ONLY:-1}" = 0 ] || run "$name-load" --load-only "$@"
}

both ram --features host
for pct in ${CACHES:-10 25 50}; do
  gib=$("$python" -c "print(f'{$pct / 100 * $table_bytes / 2**30:.4f}')")
  for policy in ${POLICIES:-static sieve lookahead}; do
    if [ "$policy" != lookahead ]; then
      both "disk-$policy-$pct" --features disk --disk-direct --feature-cache-gib "$gib" \
        --feature-cache-policy "$policy"
      continue
    fi
    for window in ${WINDOWS:-8}; do  # the default window's runs go without a suffix
      suffix=-w$window
      [ "$window" != 8 ] || suffix=
      both "disk-lookahead-$pct$suffix" --features disk --disk-direct --feature-cache-gib "$gib" \
        --feature-cache-policy lookahead --lookahead-batches "$window"
    done
  done
done
"$python" bench/disk/policies_summary.py "$out"
