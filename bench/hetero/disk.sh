#!/usr/bin/env bash
# A heterogeneous graph's paper table read from disk (issue 43, part 1) against the same table in
# RAM: the mag generator written to a directory, RGCN trained with the paper table host, on disk
# without a cache, and on disk with a cache of CACHE_FRACTION of the table ranked by pre-sampling
# and by degree. Reads use O_DIRECT (--disk-direct), so the page cache never serves a row.
#
#   bench/hetero/disk.sh [SCALE] [EPOCHS] [OUT_DIR] [CACHE_FRACTION]
#
# Prints per run the median of the warm epochs (2..EPOCHS), the rows gathered and the bytes read
# per warm epoch, and the cache's hit rate; the logs and --metrics JSONL stay in OUT_DIR (the
# generated dataset in OUT_DIR/mag-SCALE, which is not to be committed).
set -euo pipefail

scale=${1:-1}
epochs=${2:-4}
out=${3:-hetero-disk-bench}
fraction=${4:-0.25}
bin=${DIRECTGNN:-build/directgnn}
python=${PYTHON:-.venv/bin/python}
data="$out/mag-$scale"
mkdir -p "$out"
[ -d "$data" ] || "$bin" generate mag --scale "$scale" --out "$data" >"$out/generate.log"

# The paper table's bytes, and the cache's GiB at the fraction asked.
table=$(stat -c %s "$data/nodes/paper/features.npy")
gib=$("$python" -c "print(f'{$table * $fraction / 2**30:.6f}')")
echo "paper table $((table / 1000000)) MB; cache ${gib} GiB ($fraction of it); $epochs epochs"

run() {
  local name=$1
  shift
  local start=$SECONDS
  "$bin" train --dataset "$data" --model rgcn --epochs "$epochs" --eval-every 1000 --threads 2 \
    --metrics "$out/$name.jsonl" "$@" >"$out/$name.log" 2>&1
  echo "== $name ($((SECONDS - start)) s in all): $*"
  grep -E "^(Features|Feature cache)" "$out/$name.log" || true
  "$python" "$(dirname "$0")/warm_epochs.py" "$out/$name.jsonl"
}

run host --features host
run disk --features-per-type paper=disk --disk-direct
run disk-cache-presample --features-per-type paper=disk --disk-direct --feature-cache-gib "$gib"
run disk-cache-degree --features-per-type paper=disk --disk-direct --feature-cache-gib "$gib" \
  --feature-cache-rank degree
