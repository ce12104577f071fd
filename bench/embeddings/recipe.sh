#!/usr/bin/env bash
# The learnable-embedding recipe's measurements (issue 42 item 12; outside CI; about 45 minutes
# on 2 cores beside other work): test metrics over seeds 0-2 of featureless inputs trained
# through learnable tables, with the tables' start smoothed over 0-16 hops, at two learning
# rates, with and without an L2 penalty, on three graphs:
#   cora-node  Cora with its features left out, node classification, 100 epochs
#   cora-link  the same graph, link prediction, 20 epochs
#   ui-link    a featureless user-item graph (bench/embeddings/user_item.py), 10 epochs
# and the ogbn-mag-shaped generator at scale 0.05 (paper features, learnable author,
# institution and field tables): node classification (10 epochs) and author-writes-paper links
# (3 epochs), without and with the smoothed start.
#
#   bench/embeddings/recipe.sh OUT_DIR      # then: .venv/bin/python bench/embeddings/summary.py OUT_DIR
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
out=${1:?usage: recipe.sh OUT_DIR}
bin=${DIRECTGNN:-$root/build/directgnn}
cora=${CORA:-$root/../shared/datasets/cora.npz}
mkdir -p "$out"
ui="$out/ui.ds"
if [[ ! -d $ui ]]; then
  "$root/.venv/bin/python" "$root/bench/embeddings/user_item.py" "$out/ui-csv"
  "$bin" convert "$out/ui-csv" "$ui" --add-inverse-edges > /dev/null
fi

# run NAME DATASET ARGS...: seeds 0-2, one JSON-lines file each, skipped when already there.
run() {
  local name=$1 dataset=$2
  shift 2
  for seed in 0 1 2; do
    local file="$out/$name-seed$seed.jsonl"
    [[ -s $file ]] && continue
    "$bin" train --dataset "$dataset" --threads 1 --seed "$seed" --metrics "$file.tmp" "$@" \
      > "$out/$name-seed$seed.log" 2>&1
    mv "$file.tmp" "$file"
  done
  echo "$name done"
}

cora_node=(--node-embeddings 64 --epochs 100)
cora_link=(--task link --node-embeddings 64 --epochs 20)
ui_link=(--task link --target-relation user,rates,item --node-embeddings 64 --epochs 10)
for hops in 0 2 4 8 16; do
  run "cora-node-hops$hops" "$cora" "${cora_node[@]}" --embedding-init-hops $hops
  run "cora-link-hops$hops" "$cora" "${cora_link[@]}" --embedding-init-hops $hops
  run "ui-link-hops$hops" "$ui" "${ui_link[@]}" --embedding-init-hops $hops
done
for hops in 0 8; do
  run "cora-node-hops$hops-lr0.1" "$cora" "${cora_node[@]}" --embedding-init-hops $hops --embedding-lr 0.1
  run "cora-link-hops$hops-lr0.1" "$cora" "${cora_link[@]}" --embedding-init-hops $hops --embedding-lr 0.1
  run "ui-link-hops$hops-lr0.1" "$ui" "${ui_link[@]}" --embedding-init-hops $hops --embedding-lr 0.1
  run "cora-node-hops$hops-lr0.1-wd0.001" "$cora" "${cora_node[@]}" --embedding-init-hops $hops \
    --embedding-lr 0.1 --embedding-weight-decay 0.001
  run "mag-node-hops$hops" mag:0.05 --node-embeddings 64 --epochs 10 --hidden 64 \
    --embedding-init-hops $hops
  run "mag-link-hops$hops" mag:0.05 --task link --target-relation author,writes,paper \
    --node-embeddings 64 --epochs 3 --hidden 64 --embedding-init-hops $hops
done
