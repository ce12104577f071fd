#!/bin/sh
# Link prediction on a relation of the mag generator (issue 32 part 7), machine A, 2 threads.
# Quality: rgcn, hsage and mlp on author,writes,paper and paper,cites,paper, seeds 0-2.
.venv/bin/python bench/hetero_link_quality.py --scale 0.05 --epochs 5 --hidden 64 \
  --json docs/results/hetero-link-2026-11-25/quality-mag0.05.json
# One epoch's time on a quiet machine (where it goes: sample, gather, the rest).
build/directgnn train --dataset mag:0.05 --task link --target-relation author,writes,paper \
  --epochs 2 --hidden 64 --threads 2 --metrics docs/results/hetero-link-2026-11-25/epoch-writes.jsonl
# Load only: directgnn.pyg.LinkNeighborLoader against PyG's with pyg-lib on the same HeteroData.
PYTHONPATH=build/python:/tmp/pyg-lib-build/pyglib-0.8.0 .venv/bin/python \
  bench/python/hetero_link_loader.py --scale 0.05 --json docs/results/hetero-link-2026-11-25/loader.json
# Seed 0 again after the review commit 3ece3e8 changed the split:
.venv/bin/python bench/hetero_link_quality.py --relations paper,cites,paper --models rgcn mlp \
  --seeds 0 --json docs/results/hetero-link-2026-11-25/quality-3ece3e8-seed0-cites.json
.venv/bin/python bench/hetero_link_quality.py --relations author,writes,paper --models rgcn mlp \
  --seeds 0 --json docs/results/hetero-link-2026-11-25/quality-3ece3e8-seed0-writes.json
