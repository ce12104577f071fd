"""A plain PyTorch training loop over directgnn.Loader: a two-layer GraphSAGE written in
torch.nn (no PyG), trained on Cora with the usual protocol (Shchur et al. 2018): a seeded
split of 20 nodes per class / 500 / 1000, hidden 64, fan-out 10,10, batch 64, 50 epochs,
Adam (lr 0.01, weight decay 5e-4); the test accuracy at the best validation epoch.

    .venv/bin/python examples/sage_loop.py --dataset cora.npz --seeds 0 1 2
"""

import os

# Idle OpenMP threads sleep instead of spinning: beside another busy process a spinning pool
# made an epoch 30x slower (docs/python.md, Threads). Set before torch loads its runtime.
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")

import argparse
import statistics

import torch
import torch.nn.functional as F
from torch import nn

import directgnn


def mean_neighbours(block, h):
    """The mean of each destination node's sampled neighbours' rows of ``h``."""
    counts = block.indptr[1:] - block.indptr[:-1]
    dst = torch.repeat_interleave(torch.arange(block.num_dst, device=h.device), counts)
    total = torch.zeros(block.num_dst, h.shape[1], device=h.device, dtype=h.dtype)
    total.index_add_(0, dst, h[block.indices.long()])
    return total / counts.clamp(min=1).unsqueeze(1).to(h.dtype)


class SAGEConv(nn.Module):
    def __init__(self, fan_in, fan_out):
        super().__init__()
        self.root = nn.Linear(fan_in, fan_out)
        self.neighbours = nn.Linear(fan_in, fan_out, bias=False)

    def forward(self, block, h):
        return self.root(h[: block.num_dst]) + self.neighbours(mean_neighbours(block, h))


class SAGE(nn.Module):
    def __init__(self, fan_in, hidden, classes, dropout=0.5):
        super().__init__()
        self.layers = nn.ModuleList([SAGEConv(fan_in, hidden), SAGEConv(hidden, classes)])
        self.dropout = dropout

    def forward(self, blocks, h):
        for i, (layer, block) in enumerate(zip(self.layers, blocks)):
            h = F.dropout(h, self.dropout, self.training)
            h = layer(block, h)
            if i + 1 < len(self.layers):
                h = F.relu(h)
        return h


def run(data, seed, device, epochs=50):
    torch.manual_seed(seed)
    split = data.random_split(seed)
    model = SAGE(data.x.shape[1], 64, data.num_classes).to(device)
    opt = torch.optim.Adam(model.parameters(), lr=0.01, weight_decay=5e-4)
    loader = directgnn.Loader(data, split["train"], fanouts=[10, 10], batch_size=64,
                              device=device, seed=seed)
    # Evaluation on the whole graph: every layer reads every neighbour.
    whole = directgnn.Block(data.indptr.to(device), data.indices.to(device), data.num_nodes,
                            data.num_nodes)
    x, y = data.x.to(device), data.y.to(device)
    best_val, test_at_best = -1.0, 0.0
    for _ in range(epochs):
        model.train()
        for batch in loader:
            opt.zero_grad()
            loss = F.cross_entropy(model(batch.blocks, batch.x), batch.y)
            loss.backward()
            opt.step()
        model.eval()
        with torch.no_grad():
            pred = model([whole, whole], x).argmax(dim=1)
        val = (pred[split["val"]] == y[split["val"]]).float().mean().item()
        test = (pred[split["test"]] == y[split["test"]]).float().mean().item()
        if val > best_val:
            best_val, test_at_best = val, test
    return test_at_best


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--dataset", required=True, help="cora.npz (gnn-benchmark) or a dataset dir")
    p.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2])
    p.add_argument("--device", default="auto", help="auto, cpu or cuda")
    p.add_argument("--epochs", type=int, default=50)
    a = p.parse_args()
    data = directgnn.load(a.dataset)
    device = a.device
    if device == "auto":
        device = "cuda" if torch.cuda.is_available() else "cpu"
    accs = []
    for seed in a.seeds:
        acc = run(data, seed, device, a.epochs)
        accs.append(acc)
        print(f"seed {seed}: test accuracy {acc:.4f} at the best validation epoch", flush=True)
    print(f"mean test accuracy {statistics.mean(accs):.4f} over seeds "
          f"{', '.join(map(str, a.seeds))}")


if __name__ == "__main__":
    main()
