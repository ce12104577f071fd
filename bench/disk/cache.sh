#!/usr/bin/env bash
# A feature table larger than RAM (issue 17): --features disk without a cache, with a hot-row
# cache ranked by pre-sampling and by degree, against the same graph with float16 features in
# memory. Each run trains EPOCHS epochs without evaluation; the page cache is dropped before each
# run where the machine allows it (root). Figures come from each run's --metrics JSONL (per
# epoch: time, disk bytes read from /proc/self/io, bytes of rows gathered, hit rate).
#
#   bench/disk/cache.sh DATASET_F32 DATASET_F16 [CACHE_GIB] [EPOCHS] [OUT_DIR]
#
# DATASET_F32 is a directory from `directgnn generate`/`convert` (4 KiB-aligned features.npy),
# DATASET_F16 the same graph with --feat-dtype float16. Prints one summary line per run and
# epoch; the JSONL files stay in OUT_DIR. RUNS="disk-presample disk-degree" runs only those.
set -euo pipefail

f32=${1:?usage: bench/disk/cache.sh DATASET_F32 DATASET_F16 [CACHE_GIB] [EPOCHS] [OUT_DIR]}
f16=${2:?usage: bench/disk/cache.sh DATASET_F32 DATASET_F16 [CACHE_GIB] [EPOCHS] [OUT_DIR]}
gib=${3:-12}
epochs=${4:-2}
out=${5:-disk-cache-bench}
bin=${DIRECTGNN:-build/directgnn}
mkdir -p "$out"

drop_caches() {
  sync
  if [ -w /proc/sys/vm/drop_caches ]; then
    echo 3 >/proc/sys/vm/drop_caches
  else
    echo "note: cannot drop the page cache here (not root); runs may start warm" >&2
  fi
}

run() {
  local name=$1 dataset=$2
  shift 2
  case " ${RUNS:-$name} " in *" $name "*) ;; *) return 0 ;; esac
  drop_caches
  local start=$SECONDS
  "$bin" bench train --dataset "$dataset" --epochs "$epochs" --no-eval --layers 2 \
    --fan-out 10,10 --threads 2 --metrics "$out/$name.jsonl" "$@" >"$out/$name.log" 2>&1
  echo "== $name ($((SECONDS - start)) s in all): $*"
  grep -E "^Feature cache" "$out/$name.log" || true
  "${PYTHON:-python3}" - "$out/$name.jsonl" <<'EOF'
import json, sys
for line in open(sys.argv[1]):
    r = json.loads(line)
    if r.get("event") != "epoch":
        continue
    text = f"  epoch {r['epoch']}: {r['epoch_time_s']:.1f} s (gather {r['gather_s']:.1f}, wait {r['wait_s']:.1f})"
    if "disk_bytes_gathered" in r:
        read = r["disk_bytes_read"]
        missed = r["disk_bytes_gathered"] * (1 - r["disk_cache_hit_rate"])
        text += (f"; rows {r['disk_bytes_gathered'] / 1e9:.2f} GB, hit {100 * r['disk_cache_hit_rate']:.1f}%,"
                 f" missed rows {missed / 1e9:.2f} GB, blocks asked {r['disk_bytes_asked'] / 1e9:.2f} GB,"
                 f" read from disk {read / 1e9 if read is not None else float('nan'):.2f} GB,"
                 f" reads {r['disk_read_s']:.1f} s")
    print(text)
EOF
}

run float16-host "$f16" --features host
run disk-nocache "$f32" --features disk
run disk-presample "$f32" --features disk --feature-cache-gib "$gib" --feature-cache-rank presample
run disk-degree "$f32" --features disk --feature-cache-gib "$gib" --feature-cache-rank degree
