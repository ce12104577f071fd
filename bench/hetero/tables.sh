#!/usr/bin/env bash
# A large learnable table (issue 43, part 2): ROWS x DIM float32 rows for every node of a
# featureless R-MAT graph (--node-embeddings on a homogeneous dataset: one table replaces its
# features), trained with row-wise Adagrad, without evaluation, saving a checkpoint and a
# training state, then resumed for one more epoch from that state. Reports the table's size,
# the peak RSS of each process (/usr/bin/time), the step time, the saves' seconds and the bytes
# on disk of the checkpoint's and the state's tables.
#
#   bench/hetero/tables.sh [ROWS] [DIM] [OUT_DIR] [EXTRA TRAIN FLAGS...]
#
# The dataset is generated once into OUT_DIR/rmat-ROWS (feature width 1: the table replaces
# it; not to be committed). On a GPU, give e.g. --embedding-placement pinned --gpu-memory-gib 12.
# The tables start at random rows (--embedding-init-hops 0): smoothing needs as much memory again
# as the table, which a table of more than half the RAM does not have.
set -euo pipefail

rows=${1:-30000000}
dim=${2:-128}
out=${3:-hetero-tables-bench}
shift $(($# < 3 ? $# : 3))
bin=${DIRECTGNN:-build/directgnn}
python=${PYTHON:-.venv/bin/python}
data="$out/rmat-$rows"
mkdir -p "$out"
if [ ! -d "$data" ]; then
  /usr/bin/time -v "$bin" generate rmat --nodes "$rows" --edge-factor 4 --feat-dim 1 \
    --train 0.002 --val 0.001 --test 0.001 --out "$data" >"$out/generate.log" 2>&1
fi
echo "table $rows x $dim float32: $("$python" -c "print(f'{$rows * $dim * 4 / 1e9:.2f} GB')")"

common=(--dataset "$data" --node-embeddings "$dim" --embedding-init-hops 0 --no-eval
  --threads 2 --checkpoint "$out/ck" "$@")

# summarise NAME: the run's peak RSS, step time and saves.
summarise() {
  "$python" - "$out/$1.jsonl" "$out/$1.log" <<'EOF'
import json, re, sys
records = [json.loads(line) for line in open(sys.argv[1])]
epochs = [r for r in records if r.get("event") == "epoch"]
final = records[-1]
rss = re.search(r"Maximum resident set size \(kbytes\): (\d+)", open(sys.argv[2]).read())
steps = final["steps_per_epoch"]
text = [f"  peak RSS {int(rss.group(1)) * 1024 / 2**30:.2f} GiB" if rss else "  peak RSS ?"]
for r in epochs:
    text.append(f"epoch {r['epoch']}: {r['epoch_time_s']:.1f} s, {1000 * r['epoch_time_s'] / steps:.0f} ms a step "
                f"(sampling {r['sample_s']:.1f}, gathering {r['gather_s']:.1f}, compute {r['compute_s']:.1f}, waiting {r['wait_s']:.1f})")
if "checkpoint_s" in final:
    text.append(f"checkpoint {final['checkpoint_s']:.1f} s")
if "last_state_save_s" in final:
    text.append(f"training state {final['last_state_save_s']:.1f} s")
print("; ".join(text))
EOF
}

rm -rf "$out/ck" "$out/train.jsonl" "$out/resume.jsonl"
/usr/bin/time -v "$bin" train "${common[@]}" --epochs 2 --metrics "$out/train.jsonl" \
  >"$out/train.log" 2>&1
echo "== train, 2 epochs: $(grep -E '^Learnable' "$out/train.log")"
summarise train
du -sb "$out/ck/embeddings" "$out"/ck/state-embeddings-* | sed 's/^/  bytes on disk: /'

/usr/bin/time -v "$bin" train "${common[@]}" --epochs 3 --resume "$out/ck" \
  --metrics "$out/resume.jsonl" >"$out/resume.log" 2>&1
echo "== resumed from the state for epoch 3"
summarise resume
