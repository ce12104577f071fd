"""One rank of test_distributed.py's runs, started by torchrun: a PyG GraphSAGE trained with
DDP on a partitioned dataset whose feature table is sharded over the ranks
(directgnn.load(shard=True) and directgnn.Loader), its batches checked against the whole
table. Writes OUT/rank-R.json."""

import json
import os
import sys

import torch
import torch.distributed as dist
import torch.nn.functional as F
from torch_geometric.nn import SAGEConv

import directgnn


class Sage(torch.nn.Module):
    def __init__(self, dims):
        super().__init__()
        self.convs = torch.nn.ModuleList(SAGEConv(a, b) for a, b in zip(dims, dims[1:]))

    def forward(self, blocks, h):
        for i, (conv, block) in enumerate(zip(self.convs, blocks)):
            h = conv((h, h[:block.num_dst]), block.edge_index)
            if i + 1 < len(self.convs):
                h = F.relu(h)
        return h


def main(path, out, assignment, epochs, features):
    dist.init_process_group("gloo")
    rank = dist.get_rank()
    torch.manual_seed(0)
    torch.set_num_threads(1)
    data = directgnn.load(path, shard=True)
    whole = directgnn.load(path)
    split = data.random_split(0)
    # The only line that differs from a one-process script: the loader over the sharded data.
    loader = directgnn.Loader(data, split["train"], fanouts=[10, 10], batch_size=16,
                              device="cpu", seed_assignment=assignment, features=features,
                              feature_cache_gib=0.001 if features == "disk" else 0.0)
    model = torch.nn.parallel.DistributedDataParallel(
        Sage([data.x.shape[1], 64, data.num_classes]))
    optimizer = torch.optim.Adam(model.parameters(), lr=0.01)
    report = {"rank": loader.rank, "cache": loader.feature_cache, "steps": len(loader), "x_rows": data.x.shape[0],
              "rows_match": True, "own_seeds": True, "batches": 0}
    for _ in range(epochs):
        model.train()
        for batch in loader:
            report["batches"] += 1
            report["rows_match"] &= bool(torch.equal(batch.x, whole.x[batch.n_id]))
            if assignment == "part":
                report["own_seeds"] &= bool((data.owners(batch.seeds) == rank).all())
            optimizer.zero_grad()
            F.cross_entropy(model(batch.blocks, batch.x), batch.y).backward()
            optimizer.step()
    report["exchange"] = loader.exchange_stats()
    # Test accuracy over the whole table, each rank alone.
    model.eval()
    test = directgnn.Loader(whole, split["test"], fanouts=[-1, -1], batch_size=1024,
                            device="cpu", shuffle=False)
    correct = 0
    with torch.no_grad():
        for batch in test:
            correct += int((model.module(batch.blocks, batch.x).argmax(1) == batch.y).sum())
    report["test_acc"] = correct / split["test"].numel()
    with open(os.path.join(out, f"rank-{rank}.json"), "w") as f:
        json.dump(report, f)
    dist.destroy_process_group()


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4]), sys.argv[5])
