"""A stock PyG training loop in which only the loader line changes: PyG's own GraphSAGE
(torch_geometric.nn.models.GraphSAGE, 2 layers of 64) trained on Cora through
directgnn.pyg.NeighborLoader, with no pyg-lib and no torch-sparse.

Protocol (Shchur et al. 2018): a seeded split of 20 nodes per class / 500 / 1000, fan-out
10,10, batch 64, 50 epochs, Adam (lr 0.01, weight decay 5e-4), dropout 0.5; the test accuracy
at the best validation epoch, evaluated on the whole graph.

    .venv/bin/python examples/pyg_sage.py --dataset cora.npz --seeds 0 1 2 [--loader pyg]

`--loader pyg` runs PyG's own NeighborLoader instead (it needs pyg-lib or torch-sparse). Each
run prints its mean epoch time, split into loading (sampling, feature rows, collation) and
compute (forward, backward, optimiser step).
"""

import os

# Idle OpenMP threads sleep instead of spinning: beside another busy process a spinning pool
# made an epoch 30x slower (docs/python.md, Threads). Set before torch loads its runtime.
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")

import argparse
import statistics
import time

import torch
import torch.nn.functional as F
from torch_geometric.data import Data
from torch_geometric.nn.models import GraphSAGE

import directgnn
from directgnn.pyg import NeighborLoader  # was: from torch_geometric.loader import NeighborLoader

LOADERS = {"directgnn": NeighborLoader}


def as_pyg(dataset):
    """A PyG Data over a directgnn dataset: edge_index carries messages from each neighbour
    (row 0) to the node whose list holds it (row 1)."""
    nodes = torch.arange(dataset.num_nodes)
    dst = torch.repeat_interleave(nodes, dataset.indptr[1:] - dataset.indptr[:-1])
    edge_index = torch.stack([dataset.indices.long(), dst])
    return Data(x=dataset.x, y=dataset.y, edge_index=edge_index)


def accuracy(logits, y, idx):
    return (logits[idx].argmax(-1) == y[idx]).float().mean().item()


def pyg_loader(data, **kwargs):
    from torch_geometric.loader import NeighborLoader as PygNeighborLoader

    kwargs.pop("seed")
    return PygNeighborLoader(data, **kwargs)


LOADERS["pyg"] = pyg_loader


def train_epoch(model, opt, loader, device):
    """One pass; returns the seconds spent waiting for batches and computing."""
    model.train()
    load = compute = 0.0
    batches = iter(loader)
    while True:
        t = time.perf_counter()
        batch = next(batches, None)
        if batch is None:
            return load + time.perf_counter() - t, compute
        batch = batch.to(device)
        load += time.perf_counter() - t
        t = time.perf_counter()
        opt.zero_grad()
        out = model(batch.x, batch.edge_index)[: batch.batch_size]
        F.cross_entropy(out, batch.y[: batch.batch_size]).backward()
        opt.step()
        if device.type == "cuda":
            torch.cuda.synchronize(device)
        compute += time.perf_counter() - t


def run(dataset, seed, device, epochs=50, loader="directgnn"):
    """Trains one model; returns (test accuracy at the best validation epoch, mean seconds
    per epoch spent loading, mean seconds per epoch computing)."""
    torch.manual_seed(seed)
    split = dataset.random_split(seed)
    data = as_pyg(dataset)
    model = GraphSAGE(data.num_features, 64, num_layers=2, out_channels=dataset.num_classes,
                      dropout=0.5).to(device)
    opt = torch.optim.Adam(model.parameters(), lr=0.01, weight_decay=5e-4)
    batches = LOADERS[loader](data, num_neighbors=[10, 10], batch_size=64,
                              input_nodes=split["train"], shuffle=True, seed=seed)
    full = data.to(device)
    best_val, test_at_best, load, compute = -1.0, 0.0, 0.0, 0.0
    for _ in range(epochs):
        epoch_load, epoch_compute = train_epoch(model, opt, batches, device)
        load, compute = load + epoch_load, compute + epoch_compute
        model.eval()
        with torch.no_grad():
            logits = model(full.x, full.edge_index)
        val = accuracy(logits, full.y, split["val"].to(device))
        if val > best_val:
            best_val, test_at_best = val, accuracy(logits, full.y, split["test"].to(device))
    return test_at_best, load / epochs, compute / epochs


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dataset", required=True, help="cora.npz or another dataset path")
    parser.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2])
    parser.add_argument("--epochs", type=int, default=50)
    parser.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    parser.add_argument("--loader", choices=sorted(LOADERS), default="directgnn")
    args = parser.parse_args(argv)
    dataset = directgnn.load(args.dataset)
    scores = []
    for seed in args.seeds:
        score, load, compute = run(dataset, seed, torch.device(args.device), args.epochs,
                                   args.loader)
        scores.append(score)
        print(f"seed {seed}: test accuracy {score:.4f}; epoch {load + compute:.4f} s = loading "
              f"{load:.4f} s + compute {compute:.4f} s")
    print(f"mean test accuracy {statistics.mean(scores):.4f} over {len(scores)} seed(s)")
    return scores


if __name__ == "__main__":
    main()
