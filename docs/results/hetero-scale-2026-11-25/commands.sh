# Commands of the runs in this directory (machine A, 2 cores; run from the repository root).
# Cora's edge list without features: the npz's 5,429 adjacency entries written as "u v" lines and
# its labels as labels.npy, then converted with --add-inverse-edges (10,556 edges).
build/directgnn convert cora.txt dirsym --labels labels.npy --add-inverse-edges
for seed in 0 1 2; do
  build/directgnn train --dataset dirsym --epochs 100 --seed $seed --threads 2 --metrics cora-degree-features-$seed.jsonl
  build/directgnn train --dataset dirsym --node-embeddings 64 --embedding-lr 0.1 --epochs 100 --seed $seed --threads 2 --metrics cora-emb-adagrad-$seed.jsonl
  build/directgnn train --dataset dirsym --node-embeddings 64 --embedding-optimizer adam --embedding-lr 0.05 --epochs 100 --seed $seed --threads 2 --metrics cora-emb-adam-$seed.jsonl
done
# ogbn-mag's size in memory, one RGCN epoch with 128-d learnable author, institution and field tables
/usr/bin/time -v build/directgnn train --dataset mag:1 --node-embeddings 128 --hidden 64 --epochs 1 --threads 2 --metrics mag1-rgcn-emb128.jsonl > mag1-rgcn-emb128.log 2>&1
/usr/bin/time -v build/directgnn generate mag --scale 1 --in-memory
