# Runs of docs/benchmarks.md "MAG240M shape, out of core" (machine A: AMD EPYC, 2 cores, 24 GiB,
# the virtio disk; run from the repository root; the datasets, 9.6 and 20 GB, were written to
# /work/data/m240bench and are not committed). In the order they ran on 2026-11-29:
#
# 1. Generation (commit 00df6f2's generator), then host and disk (O_DIRECT, pread: auto then)
#    at 0.05, then disk at 0.1, then disk-buffered at 0.05 with the table in the page cache.
#    These ran before the smoothed start handed the projected table's pages back (commit
#    298ff92), and their disk runs' peak RSS counts the mapped table: before-release/.
#    host-0.05.* (top level) is from this round too: its RSS holds the table by design.
bench/hetero/mag240m.sh 0.05 5 /work/data/m240bench 0.25 "host disk"
bench/hetero/mag240m.sh 0.1 3 /work/data/m240bench 0.25 disk
bench/hetero/mag240m.sh 0.05 5 /work/data/m240bench 0.25 disk-buffered
# 2. With the release (pread still auto): disk at 0.1 (pread-direct/), disk-buffered at 0.05
#    after the 0.1 run had evicted part of the table from the page cache (top level).
bench/hetero/mag240m.sh 0.1 3 /work/data/m240bench 0.25 disk
bench/hetero/mag240m.sh 0.05 5 /work/data/m240bench 0.25 disk-buffered
# 3. One epoch each, O_DIRECT, a 0.1 GiB cache, io_uring against pread (the output's last lines
#    are below), after which auto became io_uring for O_DIRECT reads:
#      build/directgnn train --dataset /work/data/m240bench/mag240m-0.05 --model rgcn --epochs 1 \
#        --no-eval --threads 2 --features-per-type paper=disk --disk-direct --disk-io io_uring \
#        --feature-cache-gib 0.1
#      Epoch 00001 | Loss 2.4088 | Train Acc 0.5464 | Time(s) 84.3760 | Disk: rows 8.96 GB, cache hits 10.7%, asked 26.19 GB, process read 26.19 GB, reads 77.0 s
#      Average epoch time 84.3760 s, 1534.11 ms a step (sampling 0.9831, gathering 83.2971, compute 14.8739, waiting 69.5013; CPU 48.87 s)
#    the same with --disk-io pread:
#      Epoch 00001 | Loss 2.4088 | Train Acc 0.5464 | Time(s) 114.1536 | Disk: rows 8.96 GB, cache hits 10.7%, asked 26.19 GB, process read 26.19 GB, reads 106.8 s
#      Average epoch time 114.1536 s, 2075.52 ms a step (sampling 1.0157, gathering 113.0463, compute 19.6161, waiting 94.5368; CPU 89.53 s)
# 4. With auto = io_uring for O_DIRECT: disk at 0.05 and at 0.1 (top level).
bench/hetero/mag240m.sh 0.05 5 /work/data/m240bench 0.25 disk
bench/hetero/mag240m.sh 0.1 3 /work/data/m240bench 0.25 disk
# 5. SIEVE against the static cache (commit 0bb027b), bytes and hits only: one thread, no smoothed
#    start, while a CI build ran beside it (its times are not comparable):
build/directgnn train --dataset /work/data/m240bench/mag240m-0.05 --model rgcn --epochs 2 --no-eval \
  --node-embeddings 64 --embedding-init-hops 0 --threads 1 --features-per-type paper=disk \
  --disk-direct --feature-cache-gib 2.177090 --feature-cache-policy sieve \
  --metrics sieve-0.05.jsonl > sieve-0.05.log 2>&1
