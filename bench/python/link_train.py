"""Link prediction's training loops (issue 31's speed target): PyG's GraphSAGE (3 layers of
256, dot decoder, binary cross-entropy, Adam) trained through PyG's LinkNeighborLoader (pyg-lib
or torch-sparse, whichever PyG finds) or directgnn.pyg.LinkNeighborLoader, on the 100k
benchmark graph (`directgnn.datasets.synthetic(100000, 20, 128)`) after its seeded random link
split: batches of 1024 training positives with one binary negative each, fan-out 15,10,5,
seconds per step over --batches steps after --warmup, split into load (waiting for the batch)
and compute (forward, backward, optimiser step). One loader per process.

    .venv/bin/python bench/python/link_train.py --loader pyg|directgnn [--batches 50]
        [--warmup 5] [--json OUT]
    .venv/bin/python bench/python/link_train.py --save DIR

--save writes the same split as a dataset directory, for `directgnn train --task link
--dataset DIR` (docs/benchmarks.md gives the command that matches this loop).

Idle OpenMP threads sleep (OMP_WAIT_POLICY=PASSIVE, set before torch loads) unless the
environment says otherwise.
"""

import os

os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")

import argparse
import json
import time

import torch
import torch.nn.functional as F
from torch_geometric.data import Data
from torch_geometric.nn.models import GraphSAGE
from torch_geometric.sampler import NegativeSampling

import directgnn
from directgnn import pyg


def the_split():
    ds = directgnn.datasets.synthetic(100000, 20, 128, train_fraction=0.5, val_fraction=0.05)
    return ds.random_link_split(seed=0)


def as_pyg(split):
    """The split's message-passing graph as a PyG Data (row 0 the neighbour, row 1 the node
    whose list holds it)."""
    dst = torch.repeat_interleave(torch.arange(split.num_nodes), split.indptr.diff())
    return Data(x=split.x, edge_index=torch.stack([split.indices.long(), dst]))


def make_loader(name, data, edges, fanouts, batch_size):
    kwargs = dict(num_neighbors=fanouts, edge_label_index=edges, batch_size=batch_size,
                  shuffle=True, neg_sampling=NegativeSampling("binary", 1))
    if name == "pyg":
        from torch_geometric.loader import LinkNeighborLoader

        return LinkNeighborLoader(data, **kwargs)
    return pyg.LinkNeighborLoader(data, **kwargs)


def sampler_library():
    for name in ("pyg_lib", "torch_sparse"):
        try:
            module = __import__(name)
            return f"{name} {module.__version__}"
        except ImportError:
            continue
    return "none"


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--loader", choices=["pyg", "directgnn"])
    p.add_argument("--batches", type=int, default=50)
    p.add_argument("--warmup", type=int, default=5)
    p.add_argument("--save")
    p.add_argument("--json")
    a = p.parse_args()
    split = the_split()
    if a.save:
        split.save(a.save)
        print(f"wrote {a.save}: {split.num_nodes} nodes, {split.link['train'].shape[0]} training "
              "positives")
        return
    if a.loader is None:
        p.error("give --loader or --save")
    torch.manual_seed(0)
    data = as_pyg(split)
    loader = make_loader(a.loader, data, split.link["train"].t(), [15, 10, 5], 1024)
    model = GraphSAGE(128, 256, num_layers=3)
    opt = torch.optim.Adam(model.parameters(), lr=0.005)
    batches = iter(loader)
    load, compute = [], []
    for step in range(a.warmup + a.batches):
        t = time.perf_counter()
        batch = next(batches)
        t1 = time.perf_counter()
        opt.zero_grad()
        h = model(batch.x, batch.edge_index)
        src, dst = batch.edge_label_index
        loss = F.binary_cross_entropy_with_logits((h[src] * h[dst]).sum(-1), batch.edge_label)
        loss.backward()
        opt.step()
        t2 = time.perf_counter()
        if step >= a.warmup:
            load.append(t1 - t)
            compute.append(t2 - t1)
    step_s = [x + y for x, y in zip(load, compute)]
    result = {"loader": a.loader, "sampler_library": sampler_library(),
              "threads": torch.get_num_threads(), "torch": torch.__version__,
              "batches": a.batches, "warmup": a.warmup, "load_s": load, "compute_s": compute,
              "mean_step_s": sum(step_s) / len(step_s), "mean_load_s": sum(load) / len(load),
              "mean_compute_s": sum(compute) / len(compute)}
    print(f"{a.loader} ({result['sampler_library']}): {result['mean_step_s'] * 1e3:.1f} ms a step "
          f"(load {result['mean_load_s'] * 1e3:.1f}, compute {result['mean_compute_s'] * 1e3:.1f})")
    if a.json:
        with open(a.json, "w") as f:
            json.dump(result, f, indent=1)


if __name__ == "__main__":
    main()
