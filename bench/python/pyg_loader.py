"""PyG's GraphSAGE (3 layers of 256) trained through different loaders on the 100k benchmark
graph (`directgnn.datasets.synthetic(100000, 20, 128)`, 50% training seeds, fan-out 15,10,5,
batch 1024), each epoch split into load time (waiting for the batch: sampling, feature rows,
collation, the copy to the device) and compute time (forward, backward, optimiser step).

Loaders:
  pyg        PyG's own NeighborLoader on the in-memory Data (needs pyg-lib or torch-sparse;
             reported as skipped without them)
  directgnn  directgnn.pyg.NeighborLoader: rows gathered onto --device by directgnn (on a GPU
             read in place from pinned memory by the aligned zero-copy kernels)
  host-rows  directgnn's sampler, rows gathered on the CPU and the batch copied to --device:
             PyG's default feature path, x[n_id].to(device)

    .venv/bin/python bench/python/pyg_loader.py [--loaders pyg directgnn] [--device cuda]
        [--epochs 2] [--load-only] [--pairs N [--repeat R]] [--dataset cora.npz
        --batch-size 64 --fan-out 10,10] [--json OUT]

--load-only iterates the batches (and copies them to --device) without training: PyG's loader
and directgnn's both prepare each batch when it is asked for, so their load times do not
depend on the training step between requests.

--pairs N (with --load-only) times the loaders in turn instead, N rounds after a warm-up, the
first loader alternating between rounds; each round times --repeat passes of each, and the
figure is the median over rounds of each loader's time and of their ratio round by round (the
pairing keeps the ratio meaningful while the machine's speed drifts). --dataset reads a
dataset with directgnn's readers (seeds: the training ids of its seeded split 0) instead of
the 100k graph.

Idle OpenMP threads sleep (OMP_WAIT_POLICY=PASSIVE, set before torch loads) unless the
environment says otherwise.
"""

import os

os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")

import argparse
import json
import statistics
import sys
import time

import torch
import torch.nn.functional as F
from torch_geometric.nn.models import GraphSAGE

import directgnn
from directgnn import pyg

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "../../examples"))
import pyg_sage  # noqa: E402


def make_loader(name, data, seeds, device, fanouts=(15, 10, 5), batch_size=1024):
    kwargs = dict(num_neighbors=list(fanouts), batch_size=batch_size, input_nodes=seeds,
                  shuffle=True)
    if name == "pyg":
        from torch_geometric.loader import NeighborLoader

        return NeighborLoader(data, **kwargs)
    if name == "directgnn":
        return pyg.NeighborLoader(data, device=device, **kwargs)
    if name == "host-rows":
        return pyg.NeighborLoader(data, device="cpu", **kwargs)
    raise ValueError(f"unknown loader {name!r}")


def load_epoch(loader, device):
    """One pass that only fetches the batches; returns (load seconds, 0)."""
    t = time.perf_counter()
    for batch in loader:
        batch.to(device)
    if device.type == "cuda":
        torch.cuda.synchronize(device)
    return time.perf_counter() - t, 0.0


def measure(name, data, seeds, device, epochs, load_only, fanouts, batch_size):
    torch.manual_seed(0)
    try:
        loader = make_loader(name, data, seeds, device, fanouts, batch_size)
        next(iter(loader))
    except ImportError as error:
        print(f"{name}: skipped ({error})")
        return {"skipped": str(error)}
    model = GraphSAGE(data.num_features, 256, num_layers=len(fanouts),
                      out_channels=int(data.y.max()) + 1).to(device)
    opt = torch.optim.Adam(model.parameters(), lr=0.01)
    runs = []
    for epoch in range(epochs + 1):  # the first is a warm-up
        if load_only:
            load, compute = load_epoch(loader, device)
        else:
            load, compute = pyg_sage.train_epoch(model, opt, loader, device)
        if epoch > 0:
            runs.append({"load_s": load, "compute_s": compute})
        print(f"{name} epoch {epoch}{' (warm-up)' if epoch == 0 else ''}: load {load:.3f} s, "
              f"compute {compute:.3f} s", flush=True)
    load = statistics.median(r["load_s"] for r in runs)
    compute = statistics.median(r["compute_s"] for r in runs)
    return {"epochs": runs, "load_s": load, "compute_s": compute, "epoch_s": load + compute}


def pairs(names, data, seeds, device, rounds, repeat, fanouts, batch_size):
    """Load-only passes of each loader in turn: per round, ``repeat`` passes of each, the
    first loader alternating; each loader's seconds per pass, and each round's ratios to the
    first loader named."""
    torch.manual_seed(0)
    loaders = {n: make_loader(n, data, seeds, device, fanouts, batch_size) for n in names}
    for loader in loaders.values():  # warm-up
        for _ in range(repeat):
            load_epoch(loader, device)
    times = {n: [] for n in names}
    for r in range(rounds):
        order = names if r % 2 == 0 else names[::-1]
        for n in order:
            t = sum(load_epoch(loaders[n], device)[0] for _ in range(repeat))
            times[n].append(t / repeat)
    base = names[0]
    out = {"rounds": rounds, "repeat": repeat, "seconds_per_pass": times, "loaders": {}}
    for n in names:
        ratios = [a / b for a, b in zip(times[n], times[base])]
        out["loaders"][n] = {"median_s": statistics.median(times[n]),
                             f"ratio_to_{base}": {"median": statistics.median(ratios),
                                                  "min": min(ratios), "max": max(ratios)}}
        print(f"{n}: {statistics.median(times[n]) * 1e3:.3f} ms per pass (median of {rounds}); "
              f"/ {base}: median {statistics.median(ratios):.3f} ({min(ratios):.3f}-"
              f"{max(ratios):.3f})", flush=True)
    return out


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--loaders", nargs="+", default=["pyg", "directgnn"],
                   choices=["pyg", "directgnn", "host-rows"])
    p.add_argument("--device", default="cpu")
    p.add_argument("--epochs", type=int, default=2, help="measured epochs after one warm-up")
    p.add_argument("--load-only", action="store_true", help="iterate the batches, no training")
    p.add_argument("--pairs", type=int, default=0, help="rounds of load-only passes in turn")
    p.add_argument("--repeat", type=int, default=1, help="passes of each loader per round")
    p.add_argument("--dataset", help="a dataset to read instead of the 100k graph")
    p.add_argument("--batch-size", type=int, default=1024)
    p.add_argument("--fan-out", default="15,10,5")
    p.add_argument("--json", help="write the figures here")
    a = p.parse_args()
    device = torch.device(a.device)
    fanouts = [int(f) for f in a.fan_out.split(",")]
    if a.dataset:
        ds = directgnn.load(a.dataset)
        seeds = ds.train_idx if ds.splits else ds.random_split(0)["train"]
    else:
        ds = directgnn.datasets.synthetic(100000, 20, 128, train_fraction=0.5,
                                          val_fraction=0.05)
        seeds = ds.train_idx
    data = pyg_sage.as_pyg(ds)
    results = {"device": str(device), "threads": torch.get_num_threads(),
               "torch": torch.__version__, "graph": repr(ds), "load_only": a.load_only,
               "fanouts": fanouts, "batch_size": a.batch_size, "loaders": {}}
    if a.pairs:
        results["pairs"] = pairs(a.loaders, data, seeds, device, a.pairs, a.repeat, fanouts,
                                 a.batch_size)
        a.loaders = []
    for name in a.loaders:
        results["loaders"][name] = measure(name, data, seeds, device, a.epochs, a.load_only,
                                           fanouts, a.batch_size)
    for name, r in results["loaders"].items():
        if "load_s" in r:
            print(f"{name}: epoch {r['epoch_s']:.3f} s = load {r['load_s']:.3f} s + compute "
                  f"{r['compute_s']:.3f} s (median of {a.epochs})")
    if a.json:
        with open(a.json, "w") as f:
            json.dump(results, f, indent=1)


if __name__ == "__main__":
    main()
