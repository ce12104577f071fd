#!/usr/bin/env bash
# The MAG240M-shaped generator out of core (issue 43, part 5): `generate mag --shape mag240m`
# writes the dataset (768-d float16 paper features streamed to disk), then RGCN trains with
# 64-d learnable tables for authors and institutions in host memory, evaluating once at the end
# on sampled neighbourhoods (--eval-sampled), with the paper table
#   host: in RAM (the dataset's memory-mapped file, read once and then resident), or
#   disk: read per batch with O_DIRECT (the page cache never serves a row) behind a RAM cache
#         of CACHE_FRACTION of the table, ranked by pre-sampling, or
#   disk-buffered: the same through the page cache (warm epochs read what it kept).
#
#   bench/hetero/mag240m.sh [SCALE] [EPOCHS] [OUT_DIR] [CACHE_FRACTION] [RUNS]
#
# RUNS is "host disk" (default), or any of host, disk and disk-buffered. Prints the generator's peak RSS and time, then per
# run the median of the warm epochs (2..EPOCHS), the rows gathered, the bytes read per warm
# epoch, the cache's hit rate, the final accuracies and the process's peak RSS (/usr/bin/time).
# Logs and --metrics JSONL stay in OUT_DIR; the dataset in OUT_DIR/mag240m-SCALE (about 190 GB
# times SCALE of disk) is not to be committed.
set -euo pipefail

scale=${1:-0.05}
epochs=${2:-5}
out=${3:-hetero-mag240m-bench}
fraction=${4:-0.25}
runs=${5:-host disk}
bin=${DIRECTGNN:-build/directgnn}
python=${PYTHON:-.venv/bin/python}
data="$out/mag240m-$scale"
mkdir -p "$out"
if [ ! -d "$data" ]; then
  /usr/bin/time -v "$bin" generate mag --shape mag240m --scale "$scale" --out "$data" \
    >"$out/generate-$scale.log" 2>&1
fi
grep -E "^(phases|Wrote)" "$out/generate-$scale.log" || true
grep -E "Maximum resident|Elapsed" "$out/generate-$scale.log" | sed 's/^\s*/  generate: /' || true

table=$(stat -c %s "$data/nodes/paper/features.npy")
gib=$("$python" -c "print(f'{$table * $fraction / 2**30:.6f}')")
echo "paper table $((table / 1000000)) MB; cache ${gib} GiB ($fraction of it); $epochs epochs"

run() {
  local name=$1
  shift
  local start=$SECONDS
  /usr/bin/time -v "$bin" train --dataset "$data" --model rgcn --epochs "$epochs" \
    --eval-every "$epochs" --eval-sampled --node-embeddings 64 --threads 2 \
    --metrics "$out/$name-$scale.jsonl" "$@" >"$out/$name-$scale.log" 2>&1
  echo "== $name ($((SECONDS - start)) s in all): $*"
  grep -E "^(Learnable|Features|Feature cache|Best)" "$out/$name-$scale.log" || true
  "$python" "$(dirname "$0")/warm_epochs.py" "$out/$name-$scale.jsonl" "$out/$name-$scale.log"
}

for r in $runs; do
  case $r in
    host) run host --features host ;;
    disk) run disk --features-per-type paper=disk --disk-direct --feature-cache-gib "$gib" ;;
    disk-buffered) run disk-buffered --features-per-type paper=disk --feature-cache-gib "$gib" ;;
    *) echo "unknown run '$r': use host, disk or disk-buffered" >&2; exit 2 ;;
  esac
done
