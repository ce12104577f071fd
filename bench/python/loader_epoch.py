"""One directgnn.Loader epoch that only iterates the minibatches, on the 100k benchmark graph
(the graph of `bench train --synthetic 100000,20,128`: 50% training seeds, fan-out 15,10,5,
batch 1024), to set against the sampling + gathering time `bench train` reports for it.

    .venv/bin/python bench/python/loader_epoch.py [--epochs 3] [--json OUT]
"""

import argparse
import json
import statistics
import time

import torch

import directgnn


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--epochs", type=int, default=3)
    p.add_argument("--json", help="write the figures here")
    a = p.parse_args()
    start = time.perf_counter()
    data = directgnn.datasets.synthetic(100000, 20, 128, train_fraction=0.5, val_fraction=0.05)
    print(f"graph built in {time.perf_counter() - start:.1f} s: {data}")
    results = {}
    for prefetch in (0, 2):
        loader = directgnn.Loader(data, data.train_idx, fanouts=[15, 10, 5], batch_size=1024,
                                  device="cpu", prefetch=prefetch)
        times = []
        for _ in range(a.epochs):
            start = time.perf_counter()
            steps = sum(1 for _ in loader)
            times.append(time.perf_counter() - start)
        results[f"prefetch {prefetch}"] = {"epoch_s": times, "steps": steps}
        print(f"prefetch {prefetch}: {steps} steps, epoch {statistics.median(times):.3f} s "
              f"(median of {a.epochs}; {torch.get_num_threads()} threads)")
    if a.json:
        with open(a.json, "w") as f:
            json.dump(results, f, indent=1)


if __name__ == "__main__":
    main()
