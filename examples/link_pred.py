"""Link prediction on Cora with a stock PyG loop in which only the loader line changes: PyG's
own GraphSAGE (2 layers of 64) and a dot-product decoder, trained through
directgnn.pyg.LinkNeighborLoader, with no pyg-lib and no torch-sparse.

Protocol (the recipe PyG users run): PyG's RandomLinkSplit (85/5/10, undirected, one negative
per validation and test positive), fan-out 10,10, batches of 256 training edges with one binary
negative each, 20 epochs, Adam (lr 0.01); the test ROC-AUC at the best validation epoch,
scored with full-graph inference over the training edges.

    .venv/bin/python examples/link_pred.py --dataset cora.npz --seeds 0 1 2 [--loader both]

`--loader pyg` runs PyG's own LinkNeighborLoader instead (it needs pyg-lib or torch-sparse);
`--loader both` runs the two on the same splits and reports both.
"""

import os

# Idle OpenMP threads sleep instead of spinning (docs/python.md, Threads); before torch loads.
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")

import argparse
import statistics
import sys
import time

import torch
import torch.nn.functional as F
import torch_geometric.transforms as T
from torch_geometric.nn.models import GraphSAGE

import directgnn
from directgnn.pyg import LinkNeighborLoader  # was: from torch_geometric.loader import ...

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from pyg_sage import as_pyg  # noqa: E402


def pyg_loader(data, **kwargs):
    from torch_geometric.loader import LinkNeighborLoader as PygLinkNeighborLoader

    return PygLinkNeighborLoader(data, **kwargs)


LOADERS = {"directgnn": LinkNeighborLoader, "pyg": pyg_loader}


def roc_auc(scores, labels):
    """The area under the ROC curve, tied scores given their average rank."""
    ranks = torch.empty_like(scores, dtype=torch.float64)
    order = scores.argsort()
    ranks[order] = torch.arange(1, scores.numel() + 1, dtype=torch.float64)
    for value in scores[order].unique_consecutive(return_counts=True)[0]:
        tied = scores == value
        ranks[tied] = ranks[tied].mean()
    pos = labels == 1
    n_pos, n_neg = int(pos.sum()), int((~pos).sum())
    return float((ranks[pos].sum() - n_pos * (n_pos + 1) / 2) / (n_pos * n_neg))


@torch.no_grad()
def score(model, data):
    model.eval()
    z = model(data.x, data.edge_index)
    src, dst = data.edge_label_index
    return roc_auc((z[src] * z[dst]).sum(-1), data.edge_label)


def run(data, seed, epochs=20, loader="directgnn"):
    """Trains one model on the seed's split; returns (test ROC-AUC at the best validation
    epoch, mean seconds per epoch)."""
    torch.manual_seed(seed)
    train, val, test = T.RandomLinkSplit(num_val=0.05, num_test=0.1, is_undirected=True,
                                         add_negative_train_samples=False)(data)
    batches = LOADERS[loader](train, num_neighbors=[10, 10], batch_size=256, shuffle=True,
                              edge_label_index=train.edge_label_index,
                              edge_label=train.edge_label, neg_sampling_ratio=1.0)
    model = GraphSAGE(data.num_features, 64, num_layers=2)
    opt = torch.optim.Adam(model.parameters(), lr=0.01)
    best_val, test_at_best, seconds = -1.0, 0.0, 0.0
    for _ in range(epochs):
        start = time.perf_counter()
        model.train()
        for batch in batches:
            z = model(batch.x, batch.edge_index)
            src, dst = batch.edge_label_index
            loss = F.binary_cross_entropy_with_logits((z[src] * z[dst]).sum(-1), batch.edge_label)
            opt.zero_grad()
            loss.backward()
            opt.step()
        seconds += time.perf_counter() - start
        auc = score(model, val)
        if auc > best_val:
            best_val, test_at_best = auc, score(model, test)
    return test_at_best, seconds / epochs


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dataset", required=True, help="cora.npz or another dataset path")
    parser.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2])
    parser.add_argument("--epochs", type=int, default=20)
    parser.add_argument("--loader", choices=["directgnn", "pyg", "both"], default="directgnn")
    args = parser.parse_args(argv)
    data = as_pyg(directgnn.load(args.dataset))
    names = ["directgnn", "pyg"] if args.loader == "both" else [args.loader]
    means = {}
    for name in names:
        scores = []
        for seed in args.seeds:
            try:
                auc, seconds = run(data, seed, args.epochs, name)
            except ImportError as error:  # PyG's loader without pyg-lib or torch-sparse
                print(f"{name}: skipped ({error})")
                break
            scores.append(auc)
            print(f"{name} seed {seed}: test ROC-AUC {auc:.4f}; epoch {seconds:.3f} s")
        if scores:
            means[name] = statistics.mean(scores)
            print(f"{name}: mean test ROC-AUC {means[name]:.4f} over {len(scores)} seed(s)")
    return means


if __name__ == "__main__":
    main()
