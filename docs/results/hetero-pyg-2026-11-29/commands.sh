# Issue 43's comparison with PyG (machine A: 2-core AMD EPYC, no GPU; run from /work/main at
# commit 6bd5d14 or later with the same sources; pyg-lib 0.8.0 built with
# ../shared/tools/build-pyg-lib.sh into /tmp/pyg-lib-build). Dataset:
#   build/directgnn generate mag --scale 0.05 --out /tmp/hetero-bench/mag0.05 --threads 2
# Medians of epochs 2-5, seeds 0-2, fan-out 10,10, batch 1024, hidden 64, 2 threads.
set -x
cd /work/main; R=docs/results/hetero-pyg-2026-11-29; export OMP_WAIT_POLICY=PASSIVE
D=/tmp/hetero-bench/mag0.05
for m in rgcn hsage; do for s in 0 1 2; do
  build/directgnn train --dataset $D --model $m --fan-out 10,10 --batch-size 1024 --hidden 64 --epochs 5 --threads 2 --seed $s --metrics $R/dgnn-$m-seed$s.jsonl > $R/dgnn-$m-seed$s.log 2>&1
done; done
PYTHONPATH=/tmp/pyg-lib-build/pyglib-0.8.0 .venv/bin/python bench/python/hetero_train.py $D --model rgcn --trim --epochs 5 --seeds 0 1 2 --threads 2 --json $R/pyg-rgcn.json > $R/pyg-rgcn.log 2>&1
PYTHONPATH=/tmp/pyg-lib-build/pyglib-0.8.0 .venv/bin/python bench/python/hetero_train.py $D --model sage --epochs 5 --seeds 0 1 2 --threads 2 --json $R/pyg-sage.json > $R/pyg-sage.log 2>&1
