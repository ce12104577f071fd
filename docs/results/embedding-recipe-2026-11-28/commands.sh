# Commands of the runs in this directory (machine A: AMD EPYC, 2 cores; commit d51e1ee; run from
# the repository root). The grid, one thread per run (ui-csv and ui.ds, the generated user-item
# graph, were removed afterwards: bench/embeddings/user_item.py makes them again):
bench/embeddings/recipe.sh docs/results/embedding-recipe-2026-11-28
.venv/bin/python bench/embeddings/summary.py docs/results/embedding-recipe-2026-11-28
# The mag runs with a smoothed start were made again at commit 91d6ad3 (a featured type's
# projection held fixed), after removing their files: recipe.sh skips the runs it has.
# The cost at scale, alone on the machine (mag1-rgcn-emb128: commit 91d6ad3 with malloc_trim after
# smoothing, as committed next; mag1-rgcn-emb128-hops0: commit 30f6186):
cd docs/results/embedding-recipe-2026-11-28
/usr/bin/time -v ../../../build/directgnn train --dataset mag:1 --node-embeddings 128 --hidden 64 --epochs 1 --threads 2 --metrics mag1-rgcn-emb128.jsonl > mag1-rgcn-emb128.log 2>&1
/usr/bin/time -v ../../../build/directgnn train --dataset mag:1 --node-embeddings 128 --hidden 64 --epochs 1 --threads 2 --embedding-init-hops 0 --metrics mag1-rgcn-emb128-hops0.jsonl > mag1-rgcn-emb128-hops0.log 2>&1
