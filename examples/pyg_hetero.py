"""PyG's to_hetero(GraphSAGE) on a heterogeneous graph, trained through
directgnn.pyg.NeighborLoader: a stock PyG script in which only the loader import changes.

The graph is ogbn-mag-shaped (papers, authors, institutions, fields of study; features on
papers only; `directgnn generate mag`), made in memory, or read from a heterogeneous dataset
directory (`--dataset DIR`, e.g. written by `directgnn generate mag --out DIR`). Node types
without features get a learnable embedding, looked up by the batch's `n_id`.

    .venv/bin/python examples/pyg_hetero.py [--scale 0.002] [--dataset DIR] [--epochs 5]
"""

import argparse
import time

import torch
import torch.nn.functional as F
from torch_geometric.nn import GraphSAGE, to_hetero

import directgnn
from directgnn.pyg import NeighborLoader  # was: from torch_geometric.loader import NeighborLoader


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--scale", type=float, default=0.002)
    parser.add_argument("--dataset", help="a heterogeneous dataset directory")
    parser.add_argument("--epochs", type=int, default=5)
    args = parser.parse_args()
    torch.manual_seed(0)
    dataset = directgnn.load(args.dataset) if args.dataset else directgnn.hetero.mag(args.scale)
    data = dataset.to_pyg()  # a HeteroData; any HeteroData works from here on
    target = dataset.target

    def loader(mask, **kwargs):
        return NeighborLoader(data, num_neighbors=[10, 5], input_nodes=(target, mask), **kwargs)

    train = loader(data[target].train_mask, batch_size=128, shuffle=True)
    test = loader(data[target].test_mask, batch_size=512)
    embeddings = torch.nn.ModuleDict({t: torch.nn.Embedding(data[t].num_nodes, 32)
                                      for t in data.node_types if "x" not in data[t]})
    model = to_hetero(GraphSAGE((-1, -1), 64, 2, out_channels=dataset.num_classes),
                      data.metadata(), aggr="sum")

    def forward(batch):
        x = {t: batch[t].x for t in batch.node_types if "x" in batch[t]}
        x.update({t: embeddings[t](batch[t].n_id) for t in embeddings})
        return model(x, batch.edge_index_dict)[target][:batch[target].batch_size]

    with torch.no_grad():  # initialises to_hetero's lazy layers
        forward(next(iter(train)))
    opt = torch.optim.Adam([*model.parameters(), *embeddings.parameters()], lr=0.01)
    for epoch in range(args.epochs):
        start = time.perf_counter()
        for batch in train:
            loss = F.cross_entropy(forward(batch), batch[target].y[:batch[target].batch_size])
            opt.zero_grad()
            loss.backward()
            opt.step()
        with torch.no_grad():
            hits = sum(int((forward(b).argmax(-1) == b[target].y[:b[target].batch_size]).sum())
                       for b in test)
        print(f"epoch {epoch}: loss {loss.item():.3f}, test accuracy "
              f"{hits / int(data[target].test_mask.sum()):.3f} "
              f"({time.perf_counter() - start:.2f} s)")


if __name__ == "__main__":
    main()
