# The stages of the later calls (bench/gpu/README.md's priority list), sourced by stages.sh.

# scale: papers100M's size (111M nodes, ~1.6B directed edges after symmetrising, 128-d
# float16) as an in-memory R-MAT graph, one epoch of zero-copy with the GPU sampler; half the
# nodes when less than SCALE_FULL_S (420) seconds of the call are left.
stage_scale() {
  local rmat=${SCALE_RMAT:-111059956,7.5,128,float16}
  if (($(left_s) < ${SCALE_FULL_S:-420})); then
    rmat=${SCALE_HALF_RMAT:-55529978,7.5,128,float16}
    say "scale: $(left_s) s left, under ${SCALE_FULL_S:-420} s: half size ($rmat)"
  fi
  step "bench train (scale)" scale.log 560 "$dgnn" bench train --rmat "$rmat" \
    --layers 3 --hidden 256 --fan-out 15,10,5 --batch-size 1024 --epochs 1 --prefetch 2 \
    --modes zero-copy --samplers gpu --strict --no-eval --json "$OUT/scale.json" || failed=1
  grep -E "^bench train|^dataset|^zero-copy|^error" "$logs/scale.log" | tee -a "$summary"
}

# pyg: (issue 15) PyG's GraphSAGE 3x256 on the 100k graph through directgnn.pyg: rows read in
# place from pinned memory (aligned zero-copy) against PyG's default feature path (rows
# gathered on the CPU, then batch.to(device)), same sampler; and PyG's own NeighborLoader where
# pyg-lib or torch-sparse is installed.
stage_pyg() {
  step "pyg loaders" pyg.log 280 env PYTHONPATH="$py_path" python3 bench/python/pyg_loader.py \
    --device cuda --loaders pyg host-rows directgnn --epochs "${PYG_EPOCHS:-3}" \
    --json "$OUT/pyg.json" || failed=1
  grep -E "^(pyg|host-rows|directgnn): " "$logs/pyg.log" | tee -a "$summary"
}

# link: (issue 31) the GPU link sampler against its CPU twin; Cora's link recipe with the GPU
# sampler over seeds 0-2 (mean test ROC-AUC); 2 x LINK_STEPS (100) link steps on an R-MAT graph
# of LINK_SCALE (22) with aligned zero-copy rows, CPU sampler against GPU sampler, the second
# epoch reported. The R-MAT dataset stays in build-gpu/ while the machine is warm.
stage_link() {
  local cora=$DIRECTGNN_DATA/cora.npz dir=$root/build-gpu/link-rmat seed sampler
  make_filter "GpuLinkSampler.* 1"
  step "link sampler and loader tests" link-unit.log 60 "$unit_tests" \
    --gtest_filter="$filter:LinkSampler.*:LinkLoader.*" || failed=1
  gtest_tail "$logs/link-unit.log"
  check_skips "$logs/link-unit.log"
  for seed in 0 1 2; do
    step "cora link seed $seed, GPU sampler" link-cora.log 60 "$dgnn" train --task link \
      --dataset "$cora" --device cuda --sampler gpu --seed $seed --decoder mlp --epochs 100 \
      --eval-every 5 --fan-out 10,10 --batch-size 256 --metrics "$logs/link-cora-$seed.jsonl" ||
      failed=1
  done
  if ls "$logs"/link-cora-*.jsonl >/dev/null 2>&1; then
    python3 bench/gpu/check.py link "$logs"/link-cora-*.jsonl 2>&1 | tee -a "$summary"
    ((PIPESTATUS[0] == 0)) || failed=1
  fi
  if [ ! -d "$dir" ]; then
    step "generate r-mat for link" link-gen.log 120 "$dgnn" generate rmat \
      --scale "${LINK_SCALE:-22}" --edge-factor 8 --feat-dim 128 --out "$dir.src" &&
      step "link split" link-gen.log 120 "$dgnn" convert "$dir.src" "$dir" \
        --link-split 0.85,0.05,0.1 || { failed=1; return; }
  fi
  for sampler in cpu gpu; do
    step "link steps, $sampler sampler" link-train.log 120 "$dgnn" train --task link \
      --dataset "$dir" --device cuda --sampler $sampler --layers 3 --hidden 256 \
      --fan-out 15,10,5 --batch-size 1024 --epochs 2 --steps-per-epoch "${LINK_STEPS:-100}" \
      --no-eval --prefetch 2 --metrics "$OUT/link-$sampler.jsonl" || failed=1
  done
  grep -E "^(Epoch|Average|Features)" "$logs/link-train.log" | tee -a "$summary"
}

# Each type's table in each placement on the GPU (issue 43, part 1), seed 0 against the CPU's
# reference (`ref`, stage_hetero's): pinned read by the aligned gather, host gathered by the CPU
# and copied, and paper on disk through the shared RAM cache (rows read into pinned memory, then
# copied: FeatureStore::gather_disk_to_gpu's first run) from the generator written to a scratch
# directory, the same graph as mag:SCALE with seed 0.
stage_hetero_placements() {
  local dir=$root/build-gpu/mag-dir placed=() i=0 how
  rm -rf "$dir"
  step "mag ${HETERO_SCALE:-0.05} written to a directory" hetero-place.log 60 "$dgnn" generate \
    mag --scale "${HETERO_SCALE:-0.05}" --out "$dir" || { failed=1 && return; }
  for how in "--features pinned --gather aligned" "--features host" \
    "--features-per-type paper=disk --feature-cache-gib 0.005"; do
    i=$((i + 1))
    # shellcheck disable=SC2086  # the placement's flags, split on purpose
    step "rgcn seed 0, GPU, $how" hetero-place.log 60 "$dgnn" train --dataset "$dir" \
      --device cuda --seed 0 --epochs 10 --hidden 64 $how \
      --metrics "$logs/hetero-place-$i.jsonl" && placed+=("$logs/hetero-place-$i.jsonl")
  done
  grep -E "^(Features|Feature cache)" "$logs/hetero-place.log" | tee -a "$summary"
  mapfile -t placed < <(existing "${placed[@]}")
  if ((${#ref[@]} && ${#placed[@]})); then
    python3 bench/gpu/check.py accuracy "${ref[0]}" -- "${placed[@]}" 2>&1 | tee -a "$summary"
    ((PIPESTATUS[0] == 0)) || failed=1
  fi
  rm -rf "$dir"
}

# hetero: (issue 32) the heterogeneous model on the GPU against the CPU; RGCN on the mag
# generator (HETERO_SCALE 0.05) over seeds 0-2 on the GPU against the CPU (mean test
# accuracy), sampled by the GPU twin of the heterogeneous sampler (issue 43, part 4: its oracle
# tests run first, and seed 0 once more with the CPU sampler), then with learnable embeddings
# (pinned, read by GPU threads); link prediction on author,writes,paper on the GPU against the
# CPU; one epoch at ogbn-mag's size (mag:1) with 128-d embeddings on the GPU.
stage_hetero() {
  local seed scale=mag:${HETERO_SCALE:-0.05} ref=() run=() emb=() device
  step "hetero model tests" hetero-unit.log 90 "$unit_tests" \
    --gtest_filter='HeteroModel*:All/HeteroModel*:HeteroConvs*:HeteroSampler*:GpuHeteroSampler*:HeteroLink*:EmbeddingTable*:GpuTables*' ||
    failed=1
  gtest_tail "$logs/hetero-unit.log"
  check_skips "$logs/hetero-unit.log"
  for seed in 0 1 2; do
    step "$scale rgcn seed $seed, CPU" hetero.log 60 "$dgnn" train --dataset "$scale" \
      --device cpu --seed $seed --epochs 10 --hidden 64 \
      --metrics "$logs/hetero-cpu-$seed.jsonl" && ref+=("$logs/hetero-cpu-$seed.jsonl")
    step "$scale rgcn seed $seed, GPU" hetero.log 60 "$dgnn" train --dataset "$scale" \
      --device cuda --seed $seed --epochs 10 --hidden 64 \
      --metrics "$logs/hetero-gpu-$seed.jsonl" && run+=("$logs/hetero-gpu-$seed.jsonl")
    step "$scale rgcn seed $seed, GPU, embeddings" hetero.log 60 "$dgnn" train \
      --dataset "$scale" --device cuda --seed $seed --epochs 10 --hidden 64 \
      --node-embeddings 64 --metrics "$logs/hetero-emb-$seed.jsonl" &&
      emb+=("$logs/hetero-emb-$seed.jsonl")
  done
  step "$scale rgcn seed 0, GPU, CPU sampler" hetero.log 60 "$dgnn" train --dataset "$scale" \
    --device cuda --sampler cpu --seed 0 --epochs 10 --hidden 64 \
    --metrics "$logs/hetero-gpu-cpusampler.jsonl" && run+=("$logs/hetero-gpu-cpusampler.jsonl")
  mapfile -t ref < <(existing "${ref[@]}")
  mapfile -t run < <(existing "${run[@]}")
  mapfile -t emb < <(existing "${emb[@]}")
  if ((${#ref[@]} && ${#run[@]})); then
    python3 bench/gpu/check.py accuracy "${ref[@]}" -- "${run[@]}" 2>&1 | tee -a "$summary"
    ((PIPESTATUS[0] == 0)) || failed=1
  fi
  if ((${#ref[@]} && ${#emb[@]})); then
    python3 bench/gpu/check.py accuracy "${ref[@]}" -- "${emb[@]}" 2>&1 | tee -a "$summary"
    ((PIPESTATUS[0] == 0)) || failed=1
  fi
  stage_hetero_placements
  for device in cpu cuda; do
    step "$scale link author,writes,paper, $device" hetero-link.log 90 "$dgnn" train \
      --dataset "$scale" --task link --target-relation author,writes,paper --device $device \
      --epochs 3 --hidden 64 --metrics "$OUT/hetero-link-$device.jsonl" || failed=1
  done
  grep -E "^best epoch" "$logs/hetero-link.log" | tee -a "$summary"
  step "mag:1 rgcn, 128-d embeddings, GPU" hetero-scale.log 300 "$dgnn" train --dataset mag:1 \
    --device cuda --epochs 1 --hidden 64 --node-embeddings 128 \
    --metrics "$OUT/hetero-mag1.jsonl" || failed=1
  grep -E "^(epoch|best)" "$logs/hetero.log" "$logs/hetero-scale.log" | tail -12 | tee -a "$summary"
}

# tables: (issue 43, part 2) a TABLE_ROWS (100M) x 128 float32 learnable table (51 GB) in
# pinned host memory over a featureless R-MAT graph, trained with torch's allocator capped at
# 12 GiB: batch rows read by the aligned gather, updates applied in place by the CPU. One
# epoch of about 49 steps, no evaluation and no checkpoint (51 GB a copy would fill the
# device's disk). A rehearsal makes a graph of 200k nodes.
stage_tables() {
  local rows=${TABLE_ROWS:-100000000} dir=$root/build-gpu/tables-rmat
  ((rehearsal)) && rows=200000
  if [ ! -d "$dir" ]; then
    step "r-mat of $rows featureless nodes" tables.log 200 "$dgnn" generate rmat \
      --nodes "$rows" --edge-factor 4 --feat-dim 1 --train 0.0005 --val 0.0001 --test 0.0001 \
      --out "$dir" || { failed=1 && return; }
  fi
  step "$rows x 128 pinned table, allocator capped at 12 GiB" tables.log 360 "$dgnn" train \
    --dataset "$dir" --device cuda --node-embeddings 128 --embedding-init-hops 0 \
    --embedding-placement pinned --gpu-memory-gib 12 --no-eval --epochs 1 \
    --metrics "$OUT/tables.jsonl" || failed=1
  grep -E "^(Learnable|Epoch|Average)" "$logs/tables.log" | tee -a "$summary"
  if [ -f "$OUT/tables.jsonl" ]; then
    python3 - "$OUT/tables.jsonl" <<'PY' | tee -a "$summary"
import json, sys
records = [json.loads(line) for line in open(sys.argv[1])]
e, final = [r for r in records if r.get("event") == "epoch"][-1], records[-1]
print(f"tables: {e['epoch_time_s']:.1f} s an epoch of {final['steps_per_epoch']} steps, peak RSS "
      f"{final['peak_rss_bytes'] / 2**30:.1f} GiB, GPU peak {e.get('gpu_peak_bytes', 0) / 2**30:.2f} GiB")
PY
  fi
}

# disk: (issue 44) rows read from disk for a GPU run (FeatureStore::gather_disk_to_gpu: into
# pinned memory, then one copy), never run on a GPU before: an R-MAT graph of DISK_SCALE (20:
# 1M nodes, 1024-d float32, a 4 GiB table) trained on the GPU two epochs with its table pinned,
# then on disk with a 1 GiB cache (static, then sieve; lookahead plans CPU gathers only), the
# second epoch reported. O_DIRECT first; where the device's file system refuses it (the library
# says so), buffered reads with a note, as the page cache may then serve what the disk would.
# A rehearsal makes a graph of scale 12.
stage_disk() {
  local scale=${DISK_SCALE:-20} dir=$root/build-gpu/disk-rmat direct=--disk-direct policy
  ((rehearsal)) && scale=12
  if [ ! -d "$dir" ]; then
    step "r-mat scale $scale, 1024-d float32" disk.log 150 "$dgnn" generate rmat --scale "$scale" \
      --edge-factor 16 -a 0.45 -b 0.22 -c 0.22 --feat-dim 1024 --train 0.02 --out "$dir" ||
      { failed=1 && return; }
  fi
  local common=(train --dataset "$dir" --device cuda --epochs 2 --no-eval --layers 3
    --fan-out 15,10,5 --hidden 64)
  step "pinned table" disk.log 120 "$dgnn" "${common[@]}" --features pinned \
    --metrics "$OUT/disk-pinned.jsonl" || failed=1
  for policy in static sieve; do
    step "disk, 1 GiB $policy cache${direct:+, O_DIRECT}" disk.log 150 "$dgnn" "${common[@]}" \
      --features disk $direct --feature-cache-gib 1 --feature-cache-policy "$policy" \
      --metrics "$OUT/disk-$policy.jsonl"
    local rc=$?
    if ((rc != 0)) && [ -n "$direct" ] && grep -q "refuses O_DIRECT" "$logs/disk.log"; then
      say "disk: this file system refuses O_DIRECT; buffered reads from here on (the page cache may serve rows)"
      direct=
      step "disk, 1 GiB $policy cache, buffered" disk.log 150 "$dgnn" "${common[@]}" \
        --features disk --feature-cache-gib 1 --feature-cache-policy "$policy" \
        --metrics "$OUT/disk-$policy.jsonl" || failed=1
    elif ((rc != 0)); then
      failed=1
    fi
  done
  grep -E "^(Feature cache|Epoch|Average|error)" "$logs/disk.log" | tee -a "$summary"
}

# sharded: (issue 45, part 2) a sharded table on GPU ranks. Two ranks share the GPU (Gloo: NCCL
# takes a GPU per rank, so the NCCL path runs in GpuExchange's group of one) on an R-MAT graph
# of SHARD_SCALE (22) with 5% training nodes in 2 random parts, 3 epochs each (the first pays
# the GPU's start-up; compare the later ones in the metrics): replicated (each rank's whole table pinned); sharded with the rows exchanged on the
# CPU, then copied (auto under Gloo); exchanged on the GPU, each owner's part pinned (its GPU
# reads the rows by the aligned gather); and in GPU memory. R-MAT's labels are noise: the epoch
# times, the bytes a step and the loader's mode are what count.
stage_sharded() {
  local dir=$root/build-gpu/shard-rmat mode flags
  if [ ! -d "$dir" ]; then
    step "generate r-mat for sharding" shard-gen.log 120 "$dgnn" generate rmat \
      --scale "${SHARD_SCALE:-22}" --edge-factor 8 --feat-dim 128 --train 0.05 \
      --out "$dir.src" &&
      step "partition it in 2" shard-gen.log 120 "$dgnn" partition "$dir.src" "$dir" \
        --parts 2 --method random || { failed=1; return; }
  fi
  for mode in replicated cpu gpu device; do
    case $mode in
      replicated) flags=(--shard-features off) ;;
      cpu) flags=(--exchange-device cpu) ;;
      gpu) flags=(--exchange-device gpu) ;;
      device) flags=(--exchange-device gpu --features device) ;;
    esac
    say "sharded: $mode"
    step "sharded $mode" sharded.log 120 "$dgnn" launch -n 2 -- train --dataset "$dir" \
      --device cuda --epochs 3 --no-eval --prefetch 2 \
      --metrics "$logs/sharded-$mode.jsonl" "${flags[@]}" || failed=1
  done
  grep -E "^(Device|Epoch 00003|error)" "$logs/sharded.log" | tee -a "$summary"
}
