"""Link prediction's loaders, load only (issue 31's speed target): PyG's LinkNeighborLoader
(with pyg-lib, or torch-sparse, where installed) against directgnn.pyg.LinkNeighborLoader on
the 100k benchmark graph (`directgnn.datasets.synthetic(100000, 20, 128)`), fan-out 15,10,5,
batches of 1024 positive edges (the graph's own edges, shuffled) with one binary negative
each: seconds per batch over --batches batches after --warmup batches. One loader per process;
alternate processes to compare (docs/benchmarks.md).

    .venv/bin/python bench/python/link_loader.py --loader pyg|directgnn|native [--exclude]
        [--batches 50] [--warmup 5] [--json OUT]

`native` is directgnn.LinkLoader, the C++ link loader `directgnn train --task link` runs (the
same batches with the rows gathered); --exclude leaves each batch's positive edges out of its
neighbourhoods there (PyG's loaders cannot, so the like-for-like figures run without it).

Idle OpenMP threads sleep (OMP_WAIT_POLICY=PASSIVE, set before torch loads) unless the
environment says otherwise.
"""

import os

os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")

import argparse
import json
import sys
import time

import torch
from torch_geometric.sampler import NegativeSampling

import directgnn
from directgnn import pyg

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "../../examples"))
import pyg_sage  # noqa: E402


def make_loader(name, data, edges, fanouts, batch_size, ds=None, exclude=False):
    if name == "native":
        return directgnn.LinkLoader(ds, edges.t(), fanouts=fanouts, batch_size=batch_size,
                                    neg_sampling="binary", neg_ratio=1, device="cpu", mode="pyg",
                                    exclude_seed_edges=exclude, prefetch=0)
    kwargs = dict(num_neighbors=fanouts, edge_label_index=edges, batch_size=batch_size,
                  shuffle=True, neg_sampling=NegativeSampling("binary", 1))
    if name == "pyg":
        from torch_geometric.loader import LinkNeighborLoader

        return LinkNeighborLoader(data, **kwargs)
    return pyg.LinkNeighborLoader(data, **kwargs)


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--loader", choices=["pyg", "directgnn", "native"], required=True)
    p.add_argument("--exclude", action="store_true")
    p.add_argument("--batches", type=int, default=50)
    p.add_argument("--warmup", type=int, default=5)
    p.add_argument("--batch-size", type=int, default=1024)
    p.add_argument("--fan-out", default="15,10,5")
    p.add_argument("--json")
    a = p.parse_args()
    torch.manual_seed(0)
    ds = directgnn.datasets.synthetic(100000, 20, 128, train_fraction=0.5, val_fraction=0.05)
    data = pyg_sage.as_pyg(ds)
    fanouts = [int(f) for f in a.fan_out.split(",")]
    if a.exclude and a.loader != "native":
        p.error("--exclude needs --loader native (PyG's loaders do not exclude seed edges)")
    loader = make_loader(a.loader, data, data.edge_index, fanouts, a.batch_size, ds, a.exclude)
    it = iter(loader)
    for _ in range(a.warmup):
        next(it)
    times = []
    for _ in range(a.batches):
        t = time.perf_counter()
        next(it)
        times.append(time.perf_counter() - t)
    sampler_lib = "none"
    for name in ("pyg_lib", "torch_sparse"):  # the one PyG's loader uses, pyg-lib first
        try:
            sampler_lib = f"{name} {__import__(name).__version__}"
            break
        except ImportError:
            continue
    result = {"loader": a.loader, "exclude_seed_edges": a.exclude, "threads": torch.get_num_threads(), "torch": torch.__version__,
              "pyg_sampler": sampler_lib,
              "graph": repr(ds), "fanouts": fanouts, "batch_size": a.batch_size,
              "batches": a.batches, "warmup": a.warmup, "seconds_per_batch": times,
              "mean_s": sum(times) / len(times)}
    print(f"{a.loader}: {result['mean_s'] * 1e3:.1f} ms per batch (mean of {a.batches})")
    if a.json:
        with open(a.json, "w") as f:
            json.dump(result, f, indent=1)


if __name__ == "__main__":
    main()
