# Commands of the runs in this directory (run from /work/main; datasets from `build/directgnn generate mag --scale 0.1|0.05 --out /tmp/hetero-bench/mag0.1|mag0.05 --threads 2`). The first loader runs (loader-*.json) and train-speed-*-r1 were run by hand with the same flags; machine-load.log samples load average and running compilers every 5 s.
set -x
cd /work/main; R=docs/results/hetero-2026-11-25; export OMP_WAIT_POLICY=PASSIVE
D=/tmp/hetero-bench/mag0.05
for m in rgcn mlp hsage; do for s in 0 1 2; do
  build/directgnn train --dataset $D --model $m --fan-out 10,10 --batch-size 1024 --hidden 64 --epochs 10 --threads 2 --seed $s --metrics $R/quality-dgnn-$m-seed$s.jsonl > $R/quality-dgnn-$m-seed$s.log 2>&1
done; done
PYTHONPATH=/tmp/pyg-lib-build/pyglib-0.8.0 .venv/bin/python bench/python/hetero_train.py $D --model rgcn --trim --epochs 10 --seeds 0 1 2 --json $R/quality-pyg-rgcn.json > $R/quality-pyg-rgcn.log 2>&1
PYTHONPATH=/tmp/pyg-lib-build/pyglib-0.8.0 .venv/bin/python bench/python/hetero_train.py $D --model sage --epochs 10 --seeds 0 1 2 --json $R/quality-pyg-sage.json > $R/quality-pyg-sage.log 2>&1
set -x
cd /work/main; R=docs/results/hetero-2026-11-25; export OMP_WAIT_POLICY=PASSIVE
while pgrep -f quality.sh > /dev/null; do sleep 5; done
D=/tmp/hetero-bench/mag0.05
.venv/bin/python bench/python/hetero_train.py $D --model sage --loader directgnn --epochs 10 --seeds 0 1 2 --json $R/quality-dgnnloader-sage.json > $R/quality-dgnnloader-sage.log 2>&1
PYTHONPATH=/tmp/pyg-lib-build/pyglib-0.8.0 .venv/bin/python bench/python/hetero_loader.py /tmp/hetero-bench/mag0.1 --loaders pyg native directgnn --pairs 7 --repeat 2 --json $R/loader3-pyglib-mag0.1.json > $R/loader3-pyglib-mag0.1.log 2>&1
PYTHONPATH=/tmp/ts-site .venv/bin/python bench/python/hetero_loader.py /tmp/hetero-bench/mag0.1 --loaders pyg native directgnn --pairs 5 --repeat 1 --json $R/loader3-torchsparse-mag0.1.json > $R/loader3-torchsparse-mag0.1.log 2>&1
for round in 2 3; do
for pf in 0 auto; do build/directgnn train --dataset /tmp/hetero-bench/mag0.1 --model rgcn --fan-out 10,10 --batch-size 1024 --hidden 64 --epochs 5 --eval-every 100 --threads 2 --prefetch $pf --metrics $R/train-speed-dgnn-rgcn-pf$pf-r$round.jsonl > $R/train-speed-dgnn-rgcn-pf$pf-r$round.log 2>&1; done
PYTHONPATH=/tmp/pyg-lib-build/pyglib-0.8.0 .venv/bin/python bench/python/hetero_train.py /tmp/hetero-bench/mag0.1 --model rgcn --trim --epochs 4 --eval-every 100 --json $R/train-speed-pyg-rgcn-trim-r$round.json > $R/train-speed-pyg-rgcn-trim-r$round.log 2>&1
.venv/bin/python bench/python/hetero_train.py /tmp/hetero-bench/mag0.1 --model rgcn --trim --loader directgnn --epochs 4 --eval-every 100 --json $R/train-speed-dgnnloader-rgcn-trim-r$round.json > $R/train-speed-dgnnloader-rgcn-trim-r$round.log 2>&1
done
cd /work/main; R=docs/results/hetero-2026-11-25; export OMP_WAIT_POLICY=PASSIVE
while pgrep -f rest.sh > /dev/null; do sleep 5; done
# wait (at most 6 min) for 15 s without a compiler
for i in $(seq 72); do q=1; for j in 1 2 3; do [ "$(pgrep -c -x cc1plus)" != 0 ] && q=0; sleep 5; done; [ $q = 1 ] && break; done
echo "start $(date +%T) $(cat /proc/loadavg)"
PYTHONPATH=/tmp/pyg-lib-build/pyglib-0.8.0 .venv/bin/python bench/python/hetero_loader.py /tmp/hetero-bench/mag0.1 --loaders pyg native directgnn --pairs 7 --repeat 2 --json $R/loader3-pyglib-mag0.1-b.json > $R/loader3-pyglib-mag0.1-b.log 2>&1
echo "end $(date +%T) $(cat /proc/loadavg)"
