#!/usr/bin/env bash
# Locality on disk (issue 44, part 3): one dataset as stored and renumbered by
# `directgnn convert --reorder degree` and `--reorder rcm`, each table read from disk with
# O_DIRECT (no page cache) by bench/disk/policies.sh's runs, so the bytes read per epoch compare
# with and without renumbering.
#
#   bench/disk/reorder.sh DATASET WORK_DIR [OUT_DIR]
#
# WORK_DIR receives the renumbered copies (each the size of DATASET; one already there is
# reused) and their convert logs. OUT_DIR gets one policies.sh directory per order (none,
# degree, rcm) and summary.json, and the table is printed. By default each order runs the
# load-only passes of the static and lookahead policies at a cache of 25% of the table; ORDERS,
# RUNS (policies.sh's run names), POLICIES and CACHES change that.
set -euo pipefail

dataset=${1:?usage: bench/disk/reorder.sh DATASET WORK_DIR [OUT_DIR]}
work=${2:?usage: bench/disk/reorder.sh DATASET WORK_DIR [OUT_DIR]}
out=${3:-disk-reorder-bench}
bin=${DIRECTGNN:-build/directgnn}
python=${PYTHON:-.venv/bin/python}
mkdir -p "$work" "$out"
export CACHES=${CACHES:-25} POLICIES=${POLICIES:-static lookahead}
export RUNS=${RUNS:-disk-static-$CACHES-load disk-lookahead-$CACHES-load}

for order in ${ORDERS:-none degree rcm}; do
  data=$dataset
  if [ "$order" != none ]; then
    data=$work/$(basename "$dataset")-$order
    if [ ! -e "$data/meta.json" ]; then
      /usr/bin/time -v "$bin" convert "$dataset" "$data" --reorder "$order" \
        >"$work/convert-$order.log" 2>&1 || {
        echo "== convert --reorder $order failed; see $work/convert-$order.log" >&2
        exit 1
      }
      cp "$work/convert-$order.log" "$out/convert-$order.log"
    fi
  fi
  echo "== order $order: $data"
  bench/disk/policies.sh "$data" "$out/$order" >/dev/null
done
"$python" bench/disk/reorder_summary.py "$out"
