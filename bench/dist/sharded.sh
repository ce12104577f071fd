#!/usr/bin/env bash
# Partitioned runs on one machine (docs/benchmarks.md, "Sharded features" and "Partitioned
# structure"): partitions DATASET into P parts (features and structure stored by part), then
# trains P ranks of each mode, one after another, each rank with --threads 1, metrics and logs
# under OUT/runs.
#
#   bench/dist/sharded.sh DATASET OUT [P] [-- extra train flags]
#
# Modes (MODES, space-separated; default "replicated features structure"):
#   replicated  every rank holds the whole table and graph (the parts joined in memory)
#   features    each rank holds its part's feature rows, the structure joined
#   structure   each rank holds its part's rows and in-edges (the defaults on such a dataset)
#   cached      structure, with --remote-cache-gib $CACHE_GIB (default 0.5)
#   global      structure, with --seed-assignment global (the replicated run's batches)
# METHOD (default random), SEED (default 0) and EPOCHS (default 3) as named. A partitioned
# OUT/parts is reused. Summary: bench/dist/sharded_summary.py OUT/runs.
# A heterogeneous DATASET keeps its relations whole (its modes: replicated, features, cached,
# global; the replicated run evaluates sampled, as the sharded ones do).
set -euo pipefail
cd "$(dirname "$0")/../.."
[[ $# -ge 2 ]] || { sed -n 2,18p "$0"; exit 2; }
dataset=$1 out=$2 parts=${3:-4}
shift $(($# >= 3 ? 3 : 2))
[[ ${1:-} == -- ]] && shift
bin=${DIRECTGNN:-build/directgnn}
mkdir -p "$out/runs"
hetero=false
grep -qs '"kind": "heterogeneous"' "$dataset/meta.json" && hetero=true
if [[ ! -f $out/parts/meta.json ]]; then
  structure=by-part
  $hetero && structure=whole
  /usr/bin/time -v "$bin" partition "$dataset" "$out/parts" --parts "$parts" \
    --method "${METHOD:-random}" --seed "${SEED:-0}" --structure "$structure" \
    > "$out/partition.log" 2>&1
fi
for mode in ${MODES:-replicated features structure}; do
  case $mode in
    replicated) flags=(--shard-features off --shard-structure off) ;;
    features) flags=(--shard-structure off) ;;
    structure) flags=() ;;
    cached) flags=(--remote-cache-gib "${CACHE_GIB:-0.5}") ;;
    global) flags=(--seed-assignment global) ;;
    *) echo "unknown mode $mode" >&2; exit 2 ;;
  esac
  if $hetero; then
    case $mode in
      replicated) flags=(--shard-features off --eval-sampled) ;;
      features) flags=() ;;
      structure) echo "a heterogeneous dataset's relations stay whole: no mode $mode" >&2; exit 2 ;;
    esac
  fi
  name="$mode-s${SEED:-0}"
  echo "== $name"
  "$bin" launch -n "$parts" -- train --dataset "$out/parts" --threads 1 --seed "${SEED:-0}" \
    --epochs "${EPOCHS:-3}" --metrics "$out/runs/$name.jsonl" "${flags[@]}" "$@" \
    > "$out/runs/$name.log" 2>&1
  tail -n 2 "$out/runs/$name.log"
done
